package io.clustermirror.bench;

import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ScaleTest {

    @Test
    void aPartitionCountIsOneTopic() {
        ScaleLayout l = ScaleLayout.parse(" 10000 ");
        assertEquals(new ScaleLayout(1, 10000), l);
        assertEquals(10000, l.partitions());
        assertEquals(List.of("scale"), l.topicNames());
        assertEquals("10000", l.toString());
    }

    @Test
    void topicsTimesPartitionsIsManyTopicsNamedInOrder() {
        ScaleLayout l = ScaleLayout.parse("topics:1000x10");
        assertEquals(10000, l.partitions());
        assertEquals(1000, l.topicNames().size());
        assertEquals("scale-000", l.topicNames().get(0));
        assertEquals("scale-999", l.topicNames().get(999));
        assertEquals("1000x10", l.toString());
        List<TopicPartition> tps = l.topicPartitions();
        assertEquals(10000, tps.size());
        assertEquals(new TopicPartition("scale-001", 0), tps.get(10), "topic by topic");
    }

    @Test
    void aListSkipsBlanksAndABadLayoutNamesTheForms() {
        assertEquals(List.of(new ScaleLayout(1, 12), new ScaleLayout(1, 1000)), ScaleLayout.parseList("12, 1000,"));
        assertEquals(List.of(), ScaleLayout.parseList(""));
        for (String bad : List.of("topics:10", "topics:ax10", "many", "0", "topics:10x0")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ScaleLayout.parse(bad));
            assertTrue(e.getMessage().contains("topics:") || e.getMessage().contains("at least one"), e.getMessage());
        }
    }

    @Test
    void limitsNameWhatToRaise() {
        assertEquals(List.of(), Scale.limitProblems(10000, 20000, 65530));
        assertEquals(List.of(), Scale.limitProblems(16667, 20000, 65530), "50,000 partitions on three brokers fit here");
        assertEquals(List.of(), Scale.limitProblems(10000, -1, -1), "unknown limits are not checked");
        List<String> problems = Scale.limitProblems(10000, 4096, 20000);
        assertEquals(2, problems.size());
        assertTrue(problems.get(0).contains("ulimit -n") && problems.get(0).contains("11000"), problems.get(0));
        assertTrue(problems.get(1).contains("vm.max_map_count") && problems.get(1).contains("25000"), problems.get(1));
    }

    @Test
    void ratioOfMediansIsRoundedAndMissingWithoutBoth() {
        assertEquals(1.5, Scale.ratio(3.0, 2.0));
        assertEquals(1.33, Scale.ratio(4.0, 3.0));
        assertNull(Scale.ratio(null, 2.0));
        assertNull(Scale.ratio(3.0, 0.0));
    }

    @Test
    void progressCountsPartitionsInTheStateAndThoseAtTheirTarget() {
        ClusterMirrorDescription d = new ClusterMirrorDescription("scale", Map.of(), "id", List.of(
            topic("a", partition(0, PartitionState.MIRRORING, 10), partition(1, PartitionState.MIRRORING, 9)),
            topic("b", partition(0, PartitionState.PREPARING, -1), partition(1, PartitionState.MIRRORING, 12))));
        Map<TopicPartition, Long> targets = Map.of(new TopicPartition("a", 0), 10L, new TopicPartition("a", 1), 10L,
            new TopicPartition("b", 0), 10L, new TopicPartition("b", 1), 10L);
        assertEquals(new Scale.Progress(3, 2), Scale.Progress.of(d, PartitionState.MIRRORING, targets));
        assertEquals(new Scale.Progress(3, 0), Scale.Progress.of(d, PartitionState.MIRRORING, null));
        assertEquals(new Scale.Progress(0, 0), Scale.Progress.of(d, PartitionState.STOPPED, targets));
    }

    @Test
    void heapAfterTheForcedFullCollection() {
        assertEquals(212.0, GcLog.fullGcHeapAfter(List.of(
            "[1.2s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 300M->250M(1024M) 3.456ms",
            "[9.8s][info][gc] GC(4) Pause Full (System.gc()) 260M->212M(1024M) 45.1ms")));
        assertNull(GcLog.fullGcHeapAfter(List.of(
            "[1.2s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 300M->250M(1024M) 3.456ms")));
    }

    @Test
    void reportAndChartOfRepeatedRuns(@TempDir Path dir) throws Exception {
        Map<String, Object> layout = new LinkedHashMap<>();
        layout.put("layout", "1000x10");
        List<Map<String, Object>> mirrorRuns = new ArrayList<>();
        List<Map<String, Object>> kafkaRuns = new ArrayList<>();
        // Every repeat records a profile; the report shows the first repeat's.
        Map<String, Object> firstProfile = Map.of("samples", 10,
            "top_frames", List.of(Map.of("method", "java.util.HashMap.get", "samples", 7, "percent", 70.0)),
            "first_kafka_or_mirror_frames", List.of(Map.of("method", "kafka.server.FetchSession.walk", "samples", 9, "percent", 90.0)));
        Map<String, Object> laterProfile = Map.of("samples", 10,
            "top_frames", List.of(Map.of("method", "later.Repeat.top", "samples", 7, "percent", 70.0)),
            "first_kafka_or_mirror_frames", List.of(Map.of("method", "later.Repeat.owner", "samples", 9, "percent", 90.0)));
        for (double cpu : new double[] {30, 20, 25}) {
            Map<String, Object> idle = new LinkedHashMap<>(Map.of("millicores", cpu, "heap_after_full_gc_MiB", 300.0));
            idle.put("source_profile", mirrorRuns.isEmpty() ? firstProfile : laterProfile);
            mirrorRuns.add(Map.of("start", Map.of("seconds_to_caught_up", cpu / 2), "stop", Map.of("seconds_to_stopped", 4.0),
                "idle", idle,
                "produce_without_mirror", Map.of("produce_p99_ms", 10.0),
                "produce_with_mirror", Map.of("produce_p99_ms", 11.0)));
            kafkaRuns.add(Map.of("idle", Map.of("millicores", 20.0, "heap_after_full_gc_MiB", 250.0)));
        }
        layout.put("mirror", Stats.aggregate(mirrorRuns));
        layout.put("replication", Stats.aggregate(kafkaRuns));
        layout.put("ratios", Map.of("idle_cpu_mirror_over_follower", Scale.ratio(25.0, 20.0)));
        Map<String, Object> failed = Map.of("layout", "10000", "error", "start failed");
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("part", "scale");
        r.put("commit", "abc");
        r.put("dirty", false);
        r.put("method", Map.of("repeats", 3));
        r.put("setup", Map.of("records_per_partition", 10, "idle_s", 60));
        r.put("layouts", List.of(layout, failed));
        String md = Report.markdown(r);
        assertTrue(md.contains("# Benchmark: scale"), md);
        assertTrue(md.contains("Commit abc, clean tree"), md);
        assertTrue(md.contains("| idle CPU, destination broker, millicores | 25.00 (20.00-30.00) | n/a |"), md);
        assertTrue(md.contains("| idle CPU mirror / follower (target <= 1.5) | 1.25x |  |"), md);
        assertTrue(md.contains("Layout 10000 failed: start failed"), md);
        assertTrue(md.contains("| # | source broker (mirror) | % | leader broker (Kafka) | % |"), md);
        assertTrue(md.contains("| 1 | java.util.HashMap.get | 70.0 |  |  |"), md);
        assertTrue(md.contains("| 1 | kafka.server.FetchSession.walk | 90.0 |  |  |"), md);
        assertFalse(md.contains("later.Repeat"), "only the first repeat's profile: " + md);
        assertFalse(md.contains("| mirror's destination broker | % | Kafka follower | % |"), "no copier profiles, no table: " + md);
        Path png = dir.resolve("scale.png");
        Chart.write(r, png);
        assertTrue(Files.size(png) > 1000, "the chart was drawn");
    }

    private static MirrorTopicDescription topic(String name, MirrorPartitionDescription... partitions) {
        return new MirrorTopicDescription(name, DesiredState.values()[0], List.of(partitions));
    }

    private static MirrorPartitionDescription partition(int p, PartitionState state, long destinationEnd) {
        return new MirrorPartitionDescription(p, state, -1, destinationEnd, -1, -1, -1, null, -1, -1, -1, 1);
    }
}
