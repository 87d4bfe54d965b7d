package io.clustermirror.bench;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Smoke run of the whole benchmark harness on a tiny volume (a few MB, one codec, seconds of lag): real
 * broker processes from bin/, a real mirror, MirrorMaker 2 and a reassignment. Checks that every measurement
 * produced numbers and that the reports were written; the numbers themselves mean nothing at this size.
 */
class BenchSmokeTest {

    /**
     * The three systems the benchmark compares, about 40 s each on two cores; the bound only stops a hung run.
     */
    @Test
    @Timeout(400)
    void tinyRunProducesEveryMeasurementAndReport() throws Exception {
        Path out = Path.of("target/bench-smoke").toAbsolutePath();
        List<Map<String, Object>> results = run(out, "mirror,mm2,replication");
        assertEquals(1, results.size());
        Map<String, Object> r = results.get(0);
        for (String system : List.of("mirror", "mm2", "replication")) {
            Double mbps = Bench.get(r, system, "catch_up", "MBps");
            assertNotNull(mbps, system + " catch-up");
            assertTrue(mbps > 0, system + " catch-up MB/s");
            Double cpu = Bench.get(r, system, "catch_up", "cpu_s_per_GiB");
            assertTrue(cpu != null && cpu >= 0, system + " CPU per GiB");
            Double sent = Bench.get(r, system, "lag", "sent");
            assertTrue(sent != null && sent > 0, system + " lag records due in the window");
            assertEquals(sent, Bench.get(r, system, "lag", "received"), system + ": every record due arrived");
            assertEquals(1.0, Bench.get(r, system, "repeats"), system + " repeats");
            assertEquals(mbps, Bench.get(r, system, "catch_up", Stats.SPREAD, "MBps", "min"),
                system + ": the median of one run is its value");
            assertNotNull(Bench.get(r, system, "catch_up", "source_cpu_s_per_GiB"), system + " source broker CPU");
        }
        assertTrue(Bench.get(r, "mm2", "catch_up", "gc", "mm2", "gc_pauses") != null, "MM2's GC log was read");
        assertNotNull(Bench.get(r, "mirror", "lag", "gc", "probe-consumer", "gc_pause_ms"), "the probe's GC log");
        assertTrue(String.valueOf(r.get("commit")).matches("[0-9a-f]{40}"), "the commit: " + r.get("commit"));
        assertTrue(r.get("dirty") instanceof Boolean, "the dirty-tree flag: " + r.get("dirty"));
        assertEquals(1.0, Bench.get(r, "method", "repeats"));
        Double verifiedBytes = Bench.get(r, "mirror", "verify", "bytes");
        assertTrue(verifiedBytes != null && verifiedBytes > 0, "--verify compared the caught-up topic");
        assertEquals(Boolean.TRUE, ((Map<?, ?>) ((Map<?, ?>) r.get("mirror")).get("verify")).get("identical"),
            "--verify finds the mirrored topic identical");
        assertNotNull(Bench.get(r, "ratios", "throughput_mirror_over_mm2"));
        assertNotNull(Bench.get(r, "ratios", "throughput_mirror_over_replication"));
        for (String ext : List.of("md", "json", "png")) {
            Path f = out.resolve("smoke-lz4." + ext);
            assertTrue(Files.size(f) > 100, f + " written");
        }
        assertEquals(2, Chart.lagSeries(r.get("mirror"), "p99_ms").size(), "the mirror's p99 in each second of the window");
        for (String system : List.of("mirror", "replication")) {
            assertNotNull(Bench.get(r, system, "catch_up", "profile", "samples"), system + ": a profile of the catch-up");
        }
        assertEquals(Bench.get(r, "mirror", "lag", "sent"), Bench.get(r, "mirror", "lag", "source_visible", "received"),
            "lag.trace: the consumer on the source saw every record due in the window");
        Double consumerFetches = Bench.get(r, "mirror", "lag", "destination_requests", "FETCH from a consumer", "count");
        assertTrue(consumerFetches != null && consumerFetches > 0, "lag.trace: the destination's request log in the window");
        assertTrue(Files.size(out.resolve("smoke-lz4-lag.png")) > 1000, "the chart of lag over time");
        String md = Files.readString(out.resolve("smoke-lz4.md"));
        assertTrue(md.contains("| catch-up MB/s"));
        assertTrue(md.contains("Commit " + r.get("commit")), "the report names the commit");
        assertTrue(Files.readString(out.resolve("smoke-lz4.json")).contains("\"dirty\": "), "the JSON has the dirty flag");
    }

    /**
     * The mirror's link variants (a WAN proxy, TLS, the throttle, fsync), about 40 s each: tagged slow, since they only
     * switch options of the mirror scenario that the default run covers.
     */
    @Test
    @Tag("slow")
    @Timeout(400)
    void everyLinkVariantMeasures() throws Exception {
        Path out = Path.of("target/bench-smoke-links").toAbsolutePath();
        Map<String, Object> r = run(out, "mirror-wan-20,mirror-tls,mirror-throttle-4,mirror-fsync").get(0);
        for (String link : List.of("mirror_wan_20", "mirror_tls", "mirror_throttle_4", "mirror_fsync")) {
            Double mbps = Bench.get(r, link, "catch_up", "MBps");
            assertTrue(mbps != null && mbps > 0, link + " catch-up MB/s");
            Double sent = Bench.get(r, link, "lag", "sent");
            assertTrue(sent != null && sent > 0, link + " lag records due in the window");
            assertEquals(sent, Bench.get(r, link, "lag", "received"), link + ": every record due arrived");
        }
        Double sourceMiB = Bench.get(r, "setup", "source_log_bytes") / 1048576.0;
        Double crossed = Bench.get(r, "mirror_wan_20", "wan_proxy_MiB_during_catch_up");
        assertTrue(crossed != null && crossed >= sourceMiB, "the WAN copy crossed the proxy: " + crossed + " of " + sourceMiB + " MiB");
        String md = Files.readString(out.resolve("smoke-lz4.md"));
        assertTrue(md.contains("| source read through a proxy adding 10 ms each way"), "the links table:\n" + md);
    }

    /** A tiny run of {@code scenarios} (a few MB, one codec, seconds of lag) with its reports in {@code out}. */
    private static List<Map<String, Object>> run(Path out, String scenarios) throws Exception {
        // Small heaps: CI machines are small too (the benchmark itself gives every JVM 1 GiB).
        System.setProperty("bench.broker.heap", "-Xmx384M -Xms384M");
        System.setProperty("bench.mm2.heap", "-Xmx384M -Xms384M");
        Path home = Path.of(System.getProperty("bench.home", "..")).toAbsolutePath().normalize();
        Bench.deleteTree(out);
        Map<String, String> options = new HashMap<>();
        options.put("home", home.toString());
        options.put("out", out.toString());
        options.put("work", out.resolve("tmp").toString());
        options.put("volume.mb", "4");
        options.put("codecs", "lz4");
        options.put("lag.rate.mb", "2");
        options.put("lag.warmup.s", "1");
        options.put("lag.measure.s", "2");
        options.put("lag.drain.s", "20");
        options.put("repeats", "1");
        options.put("lag.trace", "true");
        options.put("profile", "true");
        options.put("scenarios", scenarios);
        options.put("mm2.tasks", "1");
        options.put("label", "smoke");
        return new Bench(options).runAll();
    }
}
