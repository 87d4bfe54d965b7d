package io.clustermirror.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The link and slow-disk scenarios' names, the heap series they record, and how the report shows them. */
class LinksTest {

    @Test
    void linkScenariosAreNamedWithTheirAmount() {
        assertTrue(SourceLinks.isLink("mirror-wan-20"));
        assertTrue(SourceLinks.isLink("mirror-tls"));
        assertTrue(SourceLinks.isLink("mirror-throttle-50"));
        assertFalse(SourceLinks.isLink("mirror"));
        assertFalse(SourceLinks.isLink("mirror-fsync"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SourceLinks.isLink("mirror-wan-fast"));
        assertEquals("scenario mirror-wan-fast: mirror-wan- takes a whole number of milliseconds of round trip of at least 1, "
            + "e.g. mirror-wan-20", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SourceLinks.isLink("mirror-throttle-0"));
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
            () -> new Bench(Map.of("scenarios", "mirror,mirror-wlan")));
        assertTrue(unknown.getMessage().startsWith("unknown scenario mirror-wlan; the scenarios are "), unknown.getMessage());
    }

    @Test
    void linkScenariosRunAfterTheOthersOfARepeat() {
        Bench bench = new Bench(Map.of("scenarios", "mirror-wan-80,mirror,mirror-tls,mirror-fsync,replication"));
        assertEquals(List.of("mirror", "mirror-fsync", "replication", "mirror-tls", "mirror-wan-80"), bench.order());
    }

    @Test
    void heapAfterEachCollectionOverTime(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("gc.log");
        Files.write(log, List.of(
            "[0.010s][info][gc] Using G1",
            "[5.500s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 51M->12M(1024M) 3.100ms",
            "[6.250s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 60M->14M(1024M) 2.000ms",
            "[9.000s][info][gc] GC(2) Pause Full (System.gc()) 40M->1536K(1024M) 20.000ms"));
        assertEquals(List.of(List.of(0.0, 12.0), List.of(0.75, 14.0), List.of(3.5, 1.5)), GcLog.heapAfterGcSeries(log, 0));
        assertEquals(List.of(List.of(0.0, 14.0), List.of(2.75, 1.5)), GcLog.heapAfterGcSeries(log, 2),
            "the seconds count from the first collection after the mark");
    }

    @Test
    void reportComparesEachLinkWithLoopbackAndChartsTheHeap(@TempDir Path dir) throws Exception {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("codec", "lz4");
        r.put("started_utc", "2026-12-01T00:00Z");
        r.put("setup", Map.of("partitions", 12, "records", 1000, "record_bytes", 1024, "payload_bytes", 1024000,
            "source_log_bytes", 600000));
        r.put("mirror", scenario("loopback", 200.0, List.of(List.of(0.0, 100.0), List.of(2.0, 120.0))));
        r.put("mirror_wan_80", scenario(SourceLinks.describe("mirror-wan-80"), 50.0, List.of()));
        Map<String, Object> fsync = scenario("loopback", 40.0, List.of(List.of(0.0, 90.0), List.of(5.0, 130.0),
            List.of(9.0, 110.0)));
        fsync.put("destination_disk", "every append forced to disk (log.flush.interval.messages=1)");
        r.put("mirror_fsync", fsync);
        String md = Report.markdown(r);
        assertTrue(md.contains("| source read through a proxy adding 40 ms each way (a latency, not a bandwidth limit) | 50.00 "
            + "| 0.25x |"), md);
        assertTrue(md.contains("| loopback, every append forced to disk (log.flush.interval.messages=1) | 40.00 | 0.20x |"), md);
        assertTrue(md.contains("| 90.00 / 130 / 110 |"), "first, largest and last heap after GC:\n" + md);
        Path png = dir.resolve("heap.png");
        Chart.writeHeap(r, png);
        assertTrue(Files.size(png) > 1000, "the heap chart");
        Chart.writeHeap(Map.of("mirror", scenario("loopback", 1.0, List.of())), dir.resolve("none.png"));
        assertFalse(Files.exists(dir.resolve("none.png")), "no chart without a series");
    }

    private static Map<String, Object> scenario(String link, double mbps, List<List<Double>> heap) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("link", link);
        s.put("catch_up", Map.of("MBps", mbps, "cpu_s_per_GiB", 3.0));
        s.put("lag", Map.of("p50_ms", 10.0, "p99_ms", 40.0, "received", 100, "sent", 100));
        s.put("destination_heap_after_gc", heap);
        return s;
    }
}
