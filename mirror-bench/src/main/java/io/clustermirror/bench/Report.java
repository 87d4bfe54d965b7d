package io.clustermirror.bench;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** Markdown rendering of one codec's results, or of the scale part's. */
final class Report {
    /** The tables of a profile summary ({@link Profiler}) and what each heads, in the order shown. */
    private static final List<Map.Entry<String, String>> PROFILE_TABLES = List.of(
        Map.entry("top_frames", "by the frame on top of the stack"),
        Map.entry("layers", "by the layer of the frame on top of the stack"),
        Map.entry("threads", "by thread (numbers in names folded)"),
        Map.entry("first_kafka_or_mirror_frames", "by the first Kafka or mirror frame on the stack (the work it was for)"));

    private Report() {
    }

    static String markdown(Map<String, Object> r) {
        if ("scale".equals(r.get("part"))) {
            return scaleMarkdown(r);
        }
        String codec = String.valueOf(r.get("codec"));
        StringBuilder sb = new StringBuilder();
        header(sb, r, codec);
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
        if (Bench.get(r, "mirror", "lag", "source_visible", "p50_ms") != null) {
            sb.append("| lag p50 / p99 ms until visible on the source (lag.trace) | ")
                .append(fmt(Bench.get(r, "mirror", "lag", "source_visible", "p50_ms"))).append(" / ")
                .append(fmt(Bench.get(r, "mirror", "lag", "source_visible", "p99_ms"))).append(" | ")
                .append(fmt(Bench.get(r, "mm2", "lag", "source_visible", "p50_ms"))).append(" / ")
                .append(fmt(Bench.get(r, "mm2", "lag", "source_visible", "p99_ms"))).append(" | | | |\n");
        }
        row(sb, r, "lag records received (due in the window)", "lag", "received", true);
        row(sb, r, "lag records sent in the window", "lag", "sent", true);
        row(sb, r, "source broker CPU s per GiB (catch-up)", "catch_up", "source_cpu_s_per_GiB", true);
        sb.append("| catch-up MB/s, 3 destination brokers (RF 3) | ").append(withSpread(r, "mirror_3_brokers", "catch_up", "MBps"))
            .append(" | | | | |\n");
        sb.append("| CPU s per GiB, 3 destination brokers (RF 3, all three) | ")
            .append(withSpread(r, "mirror_3_brokers", "catch_up", "cpu_s_per_GiB")).append(" | | | | |\n");
        Double p50x3 = Bench.get(r, "mirror_3_brokers", "lag", "p50_ms");
        Double p99x3 = Bench.get(r, "mirror_3_brokers", "lag", "p99_ms");
        if (Bench.get(r, "mirror_3_brokers", "lag", "source_visible", "p50_ms") != null) {
            sb.append("| lag p50 / p99 ms until visible on the source (lag.trace), 3 destination brokers | ")
                .append(fmt(Bench.get(r, "mirror_3_brokers", "lag", "source_visible", "p50_ms"))).append(" / ")
                .append(fmt(Bench.get(r, "mirror_3_brokers", "lag", "source_visible", "p99_ms"))).append(" | | | | |\n");
        }
        sb.append("| lag p50 / p99 ms, 3 destination brokers (RF 3) | ").append(fmt(p50x3)).append(" / ")
            .append(fmt(p99x3)).append(" | | ").append(fmt(Bench.get(r, "replication_3_brokers", "lag", "p50_ms")))
            .append(" / ").append(fmt(Bench.get(r, "replication_3_brokers", "lag", "p99_ms"))).append(" | | |\n\n");
        sb.append("Lag is at ").append(Bench.get(r, "setup", "lag_rate_MBps"))
            .append(" MB/s of 1 KiB records; for follower replication it is producer send to visible on the leader of an "
                + "RF=2 topic (the high watermark waits for the follower). CPU: destination broker JVM(s) for the "
                + "mirror, the MirrorMaker 2 JVM plus the destination broker for MM2, the new follower's JVM for "
                + "replication; measured from the first copied byte to the last. Lag records are stamped with their "
                + "scheduled send time; received counts those due in the window that arrived.\n\n");
        links(sb, r);
        requestTraces(sb, r);
        profiles(sb, r);
        if (r.get("mm2_sweep") instanceof Map<?, ?> sweep) {
            sb.append("MirrorMaker 2: the best of a tasks.max sweep (").append(sweep.get("best"))
                .append("); every configuration tried, with its medians: ").append(sweep.get("tried")).append(".\n\n");
        }
        sb.append("Machine: ").append(r.get("machine")).append("; load average at the end: ")
            .append(r.get("loadavg_end")).append(".\n");
        return sb.toString();
    }

    /** Title, commit with the tree's state, and how the figures were aggregated: the same for every result. */
    private static void header(StringBuilder sb, Map<String, Object> r, String what) {
        sb.append("# Benchmark: ").append(what).append(" (").append(r.get("started_utc")).append(")\n\n");
        Object dirty = r.get("dirty");
        sb.append("Commit ").append(r.get("commit")).append(Boolean.FALSE.equals(dirty) ? ", clean tree"
            : Boolean.TRUE.equals(dirty) ? ", **dirty tree** (uncommitted changes to tracked files)"
            : ", tree state unknown").append(".\n\n");
        sb.append("Each figure is the median of ").append(Bench.get(r, "method", "repeats") == null ? "n/a"
            : String.format("%.0f", Bench.get(r, "method", "repeats")))
            .append(" runs with (min-max); scenarios ran interleaved, one of each per repeat.\n\n");
    }

    /** The scale part: one row per figure, one column per layout, with the targets' ratios. */
    @SuppressWarnings("unchecked")
    static String scaleMarkdown(Map<String, Object> r) {
        StringBuilder sb = new StringBuilder();
        header(sb, r, "scale");
        List<Map<String, Object>> layouts = (List<Map<String, Object>>) r.get("layouts");
        Map<String, Object> setup = (Map<String, Object>) r.get("setup");
        int brokers = ((Number) setup.getOrDefault("brokers", 1)).intValue();
        sb.append(brokers == 1 ? "One source broker and one destination broker (mirror)"
                : brokers + " source brokers and " + brokers + " destination brokers, the partitions spread evenly (mirror)")
            .append(", or two brokers at RF 2 (Kafka follower), ")
            .append(setup.get("records_per_partition")).append(" records of 1 KiB per mirrored partition; broker ")
            .append("settings ").append(setup.get("broker_config")).append(", heap ").append(setup.get("broker_heap"))
            .append("; loopback network.\n\n");
        sb.append("| partitions (topics x partitions) |");
        layouts.forEach(l -> sb.append(" ").append(l.get("layout")).append(" |"));
        sb.append("\n|---|");
        layouts.forEach(l -> sb.append("---:|"));
        sb.append("\n");
        boolean partsRan = layouts.stream().anyMatch(l -> l.get("mirror") != null || l.get("replication") != null);
        if (partsRan) {
            mirrorAndFollowerRows(sb, layouts);
        }
        outageRows(sb, layouts);
        if (setup.get("outage") != null) {
            sb.append("\nOutage catch-up: ").append(setup.get("outage")).append("; the mirror's destination and Kafka's follower are "
                + "each a fresh broker; RPO zero is every partition MIRRORING at the source's end with a lag of 0 ms (describe, polled "
                + "every second); the follower is in sync when no reassignment is left.\n");
        }
        if (partsRan) {
            sb.append("\nIdle: ").append(setup.get("idle_s")).append(" s without traffic, ").append(setup.get("settle_s"))
                .append(" s after the last partition caught up (Kafka: after creation); CPU is the broker JVM's "
                    + "utime + stime over the window, heap is after a full GC forced at its end (jcmd GC.run). The "
                    + "follower is node 1 (controller and broker, as the mirror's destination) following leaders on "
                    + "node 2. Produce: ").append(setup.get("produce")).append("; every produce window follows the same settle, "
                    + "idle window and forced GC, on the same destination broker: before --start, with the partitions "
                    + "mirrored, after --stop; Kafka's window is on its follower node after its idle window. Mirror states come from describe, "
                    + "polled every 500 ms.\n\n");
        }
        scaleProfiles(sb, layouts);
        layouts.stream().filter(l -> l.get("error") != null).forEach(l -> sb.append("Layout ").append(l.get("layout"))
            .append(" failed: ").append(l.get("error")).append("\n\n"));
        sb.append("Machine: ").append(r.get("machine")).append("; load average at the end: ")
            .append(r.get("loadavg_end")).append(".\n");
        return sb.toString();
    }

    /** The rows of the mirror's and the follower's parts: start, stop, the flap, idle cost, produce latency. */
    private static void mirrorAndFollowerRows(StringBuilder sb, List<Map<String, Object>> layouts) {
        scaleRow(sb, layouts, "--start call, s", "mirror", "start", "seconds_call");
        scaleRow(sb, layouts, "--start to every destination log created (Kafka's part), s", "mirror", "start",
            "seconds_to_destination_logs");
        scaleRow(sb, layouts, "--start to all MIRRORING, s", "mirror", "start", "seconds_to_mirroring");
        scaleRow(sb, layouts, "last destination log to all MIRRORING, s", "mirror", "start", "seconds_destination_logs_to_mirroring");
        scaleRow(sb, layouts, "--start to all caught up, s", "mirror", "start", "seconds_to_caught_up");
        scaleRow(sb, layouts, "payload MB/s, --start to caught up", "mirror", "start",
            "payload_MBps_start_to_caught_up");
        scaleRow(sb, layouts, "--stop to all STOPPED, s (target < 30 at 10,000)", "mirror", "stop",
            "seconds_to_stopped");
        if (layouts.stream().anyMatch(l -> Bench.get(l, "mirror", "flap") != null)) {
            flapRows(sb, layouts);
        }
        scaleRow(sb, layouts, "idle CPU, destination broker, millicores", "mirror", "idle", "millicores");
        scaleRow(sb, layouts, "idle CPU, Kafka follower broker, millicores", "replication", "idle", "millicores");
        ratioRow(sb, layouts, "idle CPU mirror / follower (target <= 1.5)", "idle_cpu_mirror_over_follower");
        scaleRow(sb, layouts, "idle CPU, source broker (mirror), millicores", "mirror", "idle", "source_millicores");
        scaleRow(sb, layouts, "idle CPU, leader broker (Kafka), millicores", "replication", "idle",
            "source_millicores");
        scaleRow(sb, layouts, "heap after full GC, destination broker, MiB", "mirror", "idle",
            "heap_after_full_gc_MiB");
        scaleRow(sb, layouts, "heap after full GC, Kafka follower broker, MiB", "replication", "idle",
            "heap_after_full_gc_MiB");
        ratioRow(sb, layouts, "heap mirror / follower", "heap_mirror_over_follower");
        scaleRow(sb, layouts, "produce p99 ms, no mirror partitions", "mirror", "produce_without_mirror",
            "produce_p99_ms");
        scaleRow(sb, layouts, "produce p99 ms, next to the mirror partitions", "mirror", "produce_with_mirror",
            "produce_p99_ms");
        ratioRow(sb, layouts, "produce p99 with / without (target <= 1.10)", "produce_p99_with_over_without_mirror");
        if (layouts.stream().anyMatch(l -> Bench.get(l, "mirror", "produce_with_mirror_source_paused", "produce_p99_ms") != null)) {
            scaleRow(sb, layouts, "produce p99 ms, next to the mirror partitions, source broker paused (diagnostic)", "mirror",
                "produce_with_mirror_source_paused", "produce_p99_ms");
        }
        scaleRow(sb, layouts, "produce p99 ms, next to the same partitions stopped", "mirror", "produce_after_stop",
            "produce_p99_ms");
        ratioRow(sb, layouts, "produce p99 stopped / without", "produce_p99_after_stop_over_without_mirror");
        scaleRow(sb, layouts, "produce p99 ms, next to Kafka follower partitions", "replication",
            "produce_next_to_followers", "produce_p99_ms");
        ratioRow(sb, layouts, "produce p99 followers / without mirror", "produce_p99_next_to_followers_over_without_mirror");
        scaleRow(sb, layouts, "idle CPU, destination broker before --start, millicores", "mirror", "idle_without_mirror",
            "millicores");
        scaleRow(sb, layouts, "idle CPU, destination broker after --stop, millicores", "mirror", "idle_after_stop",
            "millicores");
    }

    /**
     * The outage catch-up's figures ({@link OutageCatchUp}), if it ran: per throttle setting of the mirror, then Kafka's
     * follower catching up the same backlog.
     */
    @SuppressWarnings("unchecked")
    private static void outageRows(StringBuilder sb, List<Map<String, Object>> layouts) {
        List<String> keys = layouts.stream().map(l -> l.get("outage")).filter(o -> o instanceof Map).flatMap(o -> ((Map<String, Object>) o)
            .keySet().stream()).filter(k -> k.startsWith("mirror")).distinct().toList();
        for (String key : keys) {
            String who = key.equals("mirror") ? "outage, mirror"
                : "outage, mirror throttled to " + key.substring("mirror_throttled_".length()) + " MB/s";
            scaleRow(sb, layouts, who + ": the source silent while the backlog was written, s", "outage", key, "outage_s");
            scaleRow(sb, layouts, who + ": return to RPO zero on every partition, s", "outage", key, "seconds_to_rpo_zero");
            scaleRow(sb, layouts, who + ": catch-up, payload MiB/s", "outage", key, "catch_up_payload_MBps");
            nestedRatioRow(sb, layouts, who + ": catch-up / Kafka follower's", key + "_catch_up_over_follower");
            scaleRow(sb, layouts, who + ": produce p99 ms, no catch-up", "outage", key, "produce_without_catch_up", "produce_p99_ms");
            scaleRow(sb, layouts, who + ": produce p99 ms, during the catch-up", "outage", key, "produce_during_catch_up", "produce_p99_ms");
            nestedRatioRow(sb, layouts, who + ": produce p99 during / without (target <= 1.5)", key + "_produce_p99_during_over_before");
        }
        if (!keys.isEmpty()) {
            scaleRow(sb, layouts, "outage, Kafka follower: reassignment to in sync, s", "outage", "follower", "seconds_to_in_sync");
            scaleRow(sb, layouts, "outage, Kafka follower: catch-up, payload MiB/s", "outage", "follower", "catch_up_payload_MBps");
            scaleRow(sb, layouts, "outage, Kafka follower: produce p99 ms, no catch-up", "outage", "follower", "produce_without_catch_up",
                "produce_p99_ms");
            scaleRow(sb, layouts, "outage, Kafka follower: produce p99 ms, during the catch-up", "outage", "follower",
                "produce_during_catch_up", "produce_p99_ms");
            nestedRatioRow(sb, layouts, "outage, Kafka follower: produce p99 during / without", "follower_produce_p99_during_over_before");
        }
    }

    private static void nestedRatioRow(StringBuilder sb, List<Map<String, Object>> layouts, String name, String key) {
        sb.append("| ").append(name).append(" |");
        layouts.forEach(l -> sb.append(" ").append(times(Bench.get(l, "ratios", "outage", key))).append(" |"));
        sb.append("\n");
    }

    /** The link flap's figures ({@link LinkFlap}): the outage, the return, and how hard the mirror knocks meanwhile. */
    private static void flapRows(StringBuilder sb, List<Map<String, Object>> layouts) {
        scaleRow(sb, layouts, "link flap: the source silent, s", "mirror", "flap", "outage_s");
        scaleRow(sb, layouts, "link flap: silence to every partition SOURCE_UNAVAILABLE, s", "mirror", "flap",
            "seconds_to_all_source_unavailable");
        scaleRow(sb, layouts, "link flap: return to every partition MIRRORING, no error, caught up, s (target < 60)", "mirror",
            "flap", "seconds_to_mirroring_after_return");
        scaleRow(sb, layouts, "link flap: partitions FAILED at once, most", "mirror", "flap", "failed_most");
        scaleRow(sb, layouts, "link flap: mirror requests to the source per s, idle before", "mirror", "flap",
            "idle_requests_per_s_total");
        scaleRow(sb, layouts, "link flap: mirror requests to the source per s, return to caught up", "mirror", "flap",
            "reconnect_requests_per_s_total");
        scaleRow(sb, layouts, "link flap: mirror requests to the source, busiest second of the return", "mirror", "flap",
            "reconnect_busiest_second_requests");
        scaleRow(sb, layouts, "link flap: connections opened to the source, return to caught up", "mirror", "flap",
            "reconnect_connections");
        scaleRow(sb, layouts, "link flap: destination broker CPU, return to caught up, millicores", "mirror", "flap",
            "reconnect_destination_millicores");
        scaleRow(sb, layouts, "link flap: source broker CPU, return to caught up, millicores", "mirror", "flap",
            "reconnect_source_millicores");
    }

    private static void scaleRow(StringBuilder sb, List<Map<String, Object>> layouts, String name, String... path) {
        sb.append("| ").append(name).append(" |");
        layouts.forEach(l -> sb.append(" ").append(withSpread(l, path)).append(" |"));
        sb.append("\n");
    }

    private static void ratioRow(StringBuilder sb, List<Map<String, Object>> layouts, String name, String key) {
        sb.append("| ").append(name).append(" |");
        layouts.forEach(l -> {
            sb.append(" ").append(times(Bench.get(l, "ratios", key))).append(" |");
        });
        sb.append("\n");
    }

    /** The link scenarios (WAN, TLS, throttle) against the mirror on loopback of the same run, if any ran. */
    private static void links(StringBuilder sb, Map<String, Object> r) {
        List<String> links = r.keySet().stream().filter(Report::isLink).sorted().toList();
        if (links.isEmpty()) {
            return;
        }
        sb.append("The mirror over other links, and onto a slow destination disk (one destination broker each; heap: the "
            + "destination broker's heap after each GC during the catch-up of the first repeat, in the chart -heap.png):\n\n");
        sb.append("| link | catch-up MB/s | / loopback | CPU s per GiB | lag p50 ms | lag p99 ms | lag received / sent "
            + "| heap after GC, first / max / last MiB |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        Double loopback = Bench.get(r, "mirror", "catch_up", "MBps");
        for (String key : Stream.concat(Stream.of("mirror"), links.stream()).toList()) {
            Object link = r.get(key) instanceof Map<?, ?> m && m.get("link") != null ? m.get("link") : key;
            if (r.get(key) instanceof Map<?, ?> m && m.get("destination_disk") != null) {
                link = link + ", " + m.get("destination_disk");
            }
            sb.append("| ").append(link).append(" | ")
                .append(withSpread(r, key, "catch_up", "MBps")).append(" | ")
                .append(key.equals("mirror") ? "" : ratio(Bench.get(r, key, "catch_up", "MBps"), loopback)).append(" | ")
                .append(withSpread(r, key, "catch_up", "cpu_s_per_GiB")).append(" | ")
                .append(withSpread(r, key, "lag", "p50_ms")).append(" | ")
                .append(withSpread(r, key, "lag", "p99_ms")).append(" | ")
                .append(fmt(Bench.get(r, key, "lag", "received"))).append(" / ").append(fmt(Bench.get(r, key, "lag", "sent")))
                .append(" | ").append(heapSummary(r.get(key))).append(" |\n");
        }
        sb.append("\n");
    }

    /**
     * The destination brokers' requests during the lag window ({@code --lag.trace=true}), per scenario and kind of
     * request: p50 / p99 ms of each part of a request's time (medians over the repeats).
     */
    @SuppressWarnings("unchecked")
    private static void requestTraces(StringBuilder sb, Map<String, Object> r) {
        List<String> traced = r.keySet().stream().filter(k -> r.get(k) instanceof Map<?, ?> m && m.get("lag") instanceof Map<?, ?> lag
            && lag.get("destination_requests") != null).toList();
        if (traced.isEmpty()) {
            return;
        }
        sb.append("Destination requests during the lag window (lag.trace; p50 / p99 ms; remote = waiting in purgatory for "
            + "data, or for the high watermark / last stable offset):\n\n");
        sb.append("| scenario | request | count | total | request queue | local | remote | response queue | send |\n");
        sb.append("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String k : traced) {
            Map<String, Object> requests = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) r.get(k)).get("lag"))
                .get("destination_requests");
            requests.forEach((kind, row) -> {
                if (!(row instanceof Map<?, ?> stats)) {
                    return;
                }
                sb.append("| ").append(k).append(" | ").append(kind).append(" | ").append(fmt(Bench.get((Map<String, Object>) stats, "count")));
                for (String part : List.of("totalTimeMs", "requestQueueTimeMs", "localTimeMs", "remoteTimeMs", "responseQueueTimeMs",
                    "sendTimeMs")) {
                    sb.append(" | ").append(fmt(Bench.get((Map<String, Object>) stats, part, "p50"))).append(" / ")
                        .append(fmt(Bench.get((Map<String, Object>) stats, part, "p99")));
                }
                sb.append(" |\n");
            });
        }
        sb.append("\n");
    }

    /**
     * The catch-up profiles ({@code --profile=true}), mirror and follower side by side: the methods that held the CPU, and
     * the Kafka or mirror code they ran for.
     */
    private static void profiles(StringBuilder sb, Map<String, Object> r) {
        profileTables(sb, "CPU profile of the catch-up (first repeat)", "mirror's destination broker",
            profileOf(r, "mirror"), "Kafka follower", profileOf(r, "replication"));
    }

    /**
     * Two profiles ({@link Profiler}) side by side, one table per way of counting their samples; nothing if both are
     * missing. The title names the sampler and each side's sample count.
     */
    private static void profileTables(StringBuilder sb, String title, String leftName, Object left, String rightName, Object right) {
        if (left == null && right == null) {
            return;
        }
        Object sampler = (left instanceof Map<?, ?> l ? l : (Map<?, ?>) right).get("sampler");
        sb.append(title).append(", ").append("native".equals(sampler) ? "async-profiler CPU samples of every thread"
            : "JFR execution samples of Java code").append(": ").append(leftName).append(" ").append(samples(left))
            .append(", ").append(rightName).append(" ").append(samples(right)).append(".\n\n");
        for (Map.Entry<String, String> table : PROFILE_TABLES) {
            sb.append("Samples ").append(table.getValue()).append(":\n\n");
            sb.append("| # | ").append(leftName).append(" | % | ").append(rightName).append(" | % |\n|---:|---|---:|---|---:|\n");
            List<Map<String, Object>> l = rows(left, table.getKey());
            List<Map<String, Object>> rt = rows(right, table.getKey());
            for (int i = 0; i < Math.min(12, Math.max(l.size(), rt.size())); i++) {
                sb.append("| ").append(i + 1).append(" | ").append(cell(l, i, "method")).append(" | ").append(cell(l, i, "percent"))
                    .append(" | ").append(cell(rt, i, "method")).append(" | ").append(cell(rt, i, "percent")).append(" |\n");
            }
            sb.append("\n");
        }
    }

    /**
     * The scale part's idle profiles ({@code --scale.profile=true}), per layout: the broker the mirror fetches from
     * against the leader Kafka's follower fetches from, then the two copying brokers.
     */
    private static void scaleProfiles(StringBuilder sb, List<Map<String, Object>> layouts) {
        for (Map<String, Object> l : layouts) {
            String at = "Layout " + l.get("layout") + ", idle window next to the partitions (first repeat)";
            profileTables(sb, at + ": the source broker serving the mirror's fetches against Kafka's leader serving its "
                + "follower's", "source broker (mirror)", idleProfile(l, "mirror", "source_profile"), "leader broker (Kafka)",
                idleProfile(l, "replication", "source_profile"));
            profileTables(sb, at + ": the copying brokers", "mirror's destination broker", idleProfile(l, "mirror", "profile"),
                "Kafka follower", idleProfile(l, "replication", "profile"));
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> rows(Object profile, String table) {
        return profile instanceof Map<?, ?> p && p.get(table) instanceof List<?> rows ? (List<Map<String, Object>>) rows : List.of();
    }

    private static String samples(Object profile) {
        return profile instanceof Map<?, ?> p && p.get("samples") != null ? p.get("samples") + " samples" : "no profile";
    }

    private static Object idleProfile(Map<String, Object> layout, String part, String key) {
        return layout.get(part) instanceof Map<?, ?> p && p.get("idle") instanceof Map<?, ?> idle ? idle.get(key) : null;
    }

    /** The first repeat's catch-up profile of a scenario (profiles are not aggregated over repeats), or null. */
    private static Object profileOf(Map<String, Object> r, String key) {
        if (r.get(key) instanceof Map<?, ?> m && m.get("runs") instanceof List<?> runs && !runs.isEmpty()
            && runs.get(0) instanceof Map<?, ?> first && first.get("catch_up") instanceof Map<?, ?> c) {
            return c.get("profile");
        }
        return null;
    }

    private static String cell(List<Map<String, Object>> rows, int i, String key) {
        return i < rows.size() ? String.valueOf(rows.get(i).get(key)).replace("|", "\\|") : "";
    }

    static boolean isLink(String resultKey) {
        return resultKey.startsWith("mirror_wan_") || resultKey.equals("mirror_tls") || resultKey.startsWith("mirror_throttle_")
            || resultKey.equals("mirror_fsync");
    }

    /** First, largest and last heap after GC of a scenario's {@code destination_heap_after_gc} series. */
    private static String heapSummary(Object scenario) {
        List<List<Double>> series = Chart.heapSeries(scenario);
        if (series.isEmpty()) {
            return "n/a";
        }
        double max = series.stream().mapToDouble(p -> p.get(1)).max().orElseThrow();
        return fmt(series.get(0).get(1)) + " / " + fmt(max) + " / " + fmt(series.get(series.size() - 1).get(1));
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

    /**
     * The median at {@code path} (system, group, key) with its range over the repeats, e.g. {@code 257 (230-270)}.
     */
    private static String withSpread(Map<String, Object> r, String... path) {
        Double median = Bench.get(r, path);
        String[] spread = java.util.Arrays.copyOf(path, path.length + 2);
        spread[path.length - 1] = Stats.SPREAD;
        spread[path.length] = path[path.length - 1];
        spread[path.length + 1] = "min";
        Double min = Bench.get(r, spread);
        spread[path.length + 1] = "max";
        Double max = Bench.get(r, spread);
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
        return times(Scale.ratio(a, b));
    }

    private static String times(Double ratio) {
        return ratio == null ? "" : String.format("%.2fx", ratio);
    }
}
