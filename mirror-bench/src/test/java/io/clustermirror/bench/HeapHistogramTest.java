package io.clustermirror.bench;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class HeapHistogramTest {
    @Test
    @SuppressWarnings("unchecked")
    void summaryKeepsTheTotalAndTheLargestClassesInOrder() {
        List<String> lines = List.of(
            "12345:",
            " num     #instances         #bytes  class name (module)",
            "-------------------------------------------------------",
            "   1:        300000       41943040  [B (java.base@17.0.15)",
            "   2:        100000        2097152  java.util.HashMap$Node (java.base@17.0.15)",
            "   3:            10           1024  io.clustermirror.broker.partition.PartitionShard",
            "Total        400010       44041216");
        Map<String, Object> summary = HeapHistogram.summarise(lines, 2);
        assertEquals(400010L, summary.get("instances"));
        assertEquals(42.0, summary.get("MiB"));
        List<Map<String, Object>> largest = (List<Map<String, Object>>) summary.get("largest");
        assertEquals(List.of(Map.of("class", "[B", "instances", 300000L, "MiB", 40.0),
            Map.of("class", "java.util.HashMap$Node", "instances", 100000L, "MiB", 2.0)), largest);
    }
}
