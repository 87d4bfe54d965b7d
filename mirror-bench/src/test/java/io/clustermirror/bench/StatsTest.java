package io.clustermirror.bench;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class StatsTest {

    @Test
    void medianOfOddAndEvenCounts() {
        assertEquals(3.0, Stats.median(new double[] {5, 1, 3}));
        assertEquals(2.5, Stats.median(new double[] {4, 1, 3, 2}));
    }

    @Test
    void aggregateKeepsTheShapeWithMediansAndSpread() {
        List<Map<String, Object>> runs = List.of(
            Map.of("catch_up", Map.of("MBps", 100.0, "config", "a"), "verify", Map.of("identical", true)),
            Map.of("catch_up", Map.of("MBps", 300.0, "config", "a"), "verify", Map.of("identical", false)),
            Map.of("catch_up", Map.of("MBps", 120.0, "config", "a"), "verify", Map.of("identical", true)));
        Map<String, Object> agg = Stats.aggregate(runs);
        assertEquals(120.0, Bench.get(agg, "catch_up", "MBps"));
        assertEquals(100.0, Bench.get(agg, "catch_up", Stats.SPREAD, "MBps", "min"));
        assertEquals(300.0, Bench.get(agg, "catch_up", Stats.SPREAD, "MBps", "max"));
        assertEquals(3.0, Bench.get(agg, "catch_up", Stats.SPREAD, "MBps", "n"));
        assertEquals("a", ((Map<?, ?>) agg.get("catch_up")).get("config"));
        assertEquals(false, ((Map<?, ?>) agg.get("verify")).get("identical"), "an integrity check must hold in every run");
    }
}
