package io.clustermirror.bench;

import java.util.Map;

/** Markdown rendering of one codec's results. */
final class Report {
    private Report() {
    }

    static String markdown(Map<String, Object> r) {
        String codec = String.valueOf(r.get("codec"));
        StringBuilder sb = new StringBuilder();
        sb.append("# Benchmark: ").append(codec).append(" (").append(r.get("started_utc")).append(")\n\n");
        Object dirty = r.get("dirty");
        sb.append("Commit ").append(r.get("commit")).append(Boolean.FALSE.equals(dirty) ? ", clean tree"
            : Boolean.TRUE.equals(dirty) ? ", **dirty tree** (uncommitted changes to tracked files)"
            : ", tree state unknown").append(".\n\n");
        sb.append("Each figure is the median of ").append(Bench.get(r, "method", "repeats") == null ? "n/a"
            : String.format("%.0f", Bench.get(r, "method", "repeats")))
            .append(" runs with (min-max); scenarios ran interleaved, one of each per repeat.\n\n");
        @SuppressWarnings("unchecked")
        Map<String, Object> setup = (Map<String, Object>) r.get("setup");
        sb.append(String.format("Source topic: %s partitions, %s records of %s bytes (%.0f MiB payload, %.0f MiB on disk "
                + "with %s), one source broker; loopback network.%n%n", setup.get("partitions"), setup.get("records"),
            setup.get("record_bytes"), ((Number) setup.get("payload_bytes")).doubleValue() / 1048576.0,
            ((Number) setup.get("source_log_bytes")).doubleValue() / 1048576.0, codec));
        sb.append("| | cluster mirror | MirrorMaker 2 | follower replication | mirror / MM2 | mirror / replication |\n");
        sb.append("|---|---:|---:|---:|---:|---:|\n");
        row(sb, r, "catch-up MB/s (on-disk bytes)", "catch_up", "MBps", false);
        row(sb, r, "catch-up payload MB/s", "catch_up", "payload_MBps", false);
        row(sb, r, "catch-up records/s", "catch_up", "records_per_s", false);
        row(sb, r, "CPU s per GiB copied (copying side)", "catch_up", "cpu_s_per_GiB", false);
        row(sb, r, "cores busy while copying", "catch_up", "cores_busy", false);
        row(sb, r, "lag p50 ms (1 destination broker)", "lag", "p50_ms", true);
        row(sb, r, "lag p99 ms (1 destination broker)", "lag", "p99_ms", true);
        row(sb, r, "lag max ms (1 destination broker)", "lag", "max_ms", true);
        row(sb, r, "lag records received (due in the window)", "lag", "received", true);
        row(sb, r, "lag records sent in the window", "lag", "sent", true);
        row(sb, r, "source broker CPU s per GiB (catch-up)", "catch_up", "source_cpu_s_per_GiB", true);
        Double p50x3 = Bench.get(r, "mirror_3_brokers", "lag", "p50_ms");
        Double p99x3 = Bench.get(r, "mirror_3_brokers", "lag", "p99_ms");
        sb.append("| lag p50 / p99 ms, 3 destination brokers (RF 3) | ").append(fmt(p50x3)).append(" / ")
            .append(fmt(p99x3)).append(" | | ").append(fmt(Bench.get(r, "replication_3_brokers", "lag", "p50_ms")))
            .append(" / ").append(fmt(Bench.get(r, "replication_3_brokers", "lag", "p99_ms"))).append(" | | |\n\n");
        sb.append("Lag is at ").append(Bench.get(r, "setup", "lag_rate_MBps"))
            .append(" MB/s of 1 KiB records; for follower replication it is producer send to visible on the leader of an "
                + "RF=2 topic (the high watermark waits for the follower). CPU: destination broker JVM(s) for the "
                + "mirror, the MirrorMaker 2 JVM plus the destination broker for MM2, the new follower's JVM for "
                + "replication; measured from the first copied byte to the last. Lag records are stamped with their "
                + "scheduled send time; received counts those due in the window that arrived.\n\n");
        if (r.get("mm2_sweep") instanceof Map<?, ?> sweep) {
            sb.append("MirrorMaker 2: the best of a tasks.max sweep (").append(sweep.get("best"))
                .append("); every configuration tried, with its medians: ").append(sweep.get("tried")).append(".\n\n");
        }
        sb.append("Machine: ").append(r.get("machine")).append("; load average at the end: ")
            .append(r.get("loadavg_end")).append(".\n");
        return sb.toString();
    }

    private static void row(StringBuilder sb, Map<String, Object> r, String name, String group, String key,
                            boolean lowerIsBetter) {
        Double m = Bench.get(r, "mirror", group, key);
        Double mm2 = Bench.get(r, "mm2", group, key);
        Double repl = Bench.get(r, "replication", group, key);
        sb.append("| ").append(name).append(" | ").append(withSpread(r, "mirror", group, key)).append(" | ")
            .append(withSpread(r, "mm2", group, key)).append(" | ").append(withSpread(r, "replication", group, key))
            .append(" | ").append(ratio(m, mm2)).append(" | ").append(ratio(m, repl)).append(" |\n");
    }

    /** The median with its range over the repeats, e.g. {@code 257 (230-270)}. */
    private static String withSpread(Map<String, Object> r, String system, String group, String key) {
        Double median = Bench.get(r, system, group, key);
        Double min = Bench.get(r, system, group, Stats.SPREAD, key, "min");
        Double max = Bench.get(r, system, group, Stats.SPREAD, key, "max");
        if (median == null || min == null || max == null || min.equals(max)) {
            return fmt(median);
        }
        return fmt(median) + " (" + fmt(min) + "-" + fmt(max) + ")";
    }

    static String fmt(Double v) {
        if (v == null) {
            return "n/a";
        }
        return v >= 100 ? String.format("%.0f", v) : String.format("%.2f", v);
    }

    private static String ratio(Double a, Double b) {
        return a == null || b == null || b == 0 ? "" : String.format("%.2fx", a / b);
    }
}
