package io.clustermirror.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The lag probe's percentiles per second of the window, and their chart. */
class LagProbeTest {

    @Test
    void percentilesOfEachSecondAreExactAndAnEmptySecondIsMinusOne() {
        LagProbe.LagsBySecond lags = new LagProbe.LagsBySecond(3);
        for (int lag = 1; lag <= 2000; lag++) {
            lags.add(0, lag);
        }
        lags.add(2, 7);
        lags.add(3, 99); // due after the window: not counted
        lags.add(-1, 99);
        assertEquals("1000,-1,7", lags.percentiles(0.50));
        assertEquals("1980,-1,7", lags.percentiles(0.99));
        assertEquals("2000,-1,7", lags.percentiles(1.0));
    }

    @Test
    void lagChartHasASeriesPerScenarioWithPercentilesOverTime(@TempDir Path dir) throws Exception {
        Map<String, Object> mirror = Map.of("lag", Map.of("by_second", Map.of("p50_ms", List.of(5L, -1L, 7L),
            "p99_ms", List.of(40L, -1L, 60L))));
        assertEquals(List.of(List.of(0.0, 40.0), List.of(2.0, 60.0)), Chart.lagSeries(mirror, "p99_ms"),
            "seconds without records are left out");
        Path png = dir.resolve("lag.png");
        Chart.writeLag(Map.of("codec", "lz4", "mirror", mirror), png);
        assertTrue(Files.size(png) > 1000, "the lag chart");
        Chart.writeLag(Map.of("codec", "lz4", "mirror", Map.of("lag", Map.of())), dir.resolve("none.png"));
        assertFalse(Files.exists(dir.resolve("none.png")), "no chart without percentiles over time");
    }
}
