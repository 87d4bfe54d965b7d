package io.clustermirror.admin.internals;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;

import org.apache.kafka.common.TopicPartition;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MirrorVerificationsTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);

    @Test
    void aStoppedPartitionIsComparedUpToItsBarrierFromTheGreaterLogStart() {
        MirrorVerifications.Target stopped = new MirrorVerifications.Target(TP, PartitionState.STOPPED, 120);
        assertEquals(new MirrorVerifications.Range(30, 120), MirrorVerifications.range(stopped, 30, 10, 500),
            "local writes after the barrier are not compared");
        MirrorVerifications.Target mirroring = new MirrorVerifications.Target(TP, PartitionState.MIRRORING, -1);
        assertEquals(new MirrorVerifications.Range(40, 90), MirrorVerifications.range(mirroring, 0, 40, 90),
            "up to the destination's high watermark");
        assertEquals(new MirrorVerifications.Range(90, 90), MirrorVerifications.range(mirroring, 95 - 5, 0, 60),
            "nothing to compare when retention passed the destination's end");
    }

    @Test
    void theOffsetsToCompareAreEstimatedFromTheDestinationsLog() {
        MirrorVerifications.Target stopped = new MirrorVerifications.Target(TP, PartitionState.STOPPED, 120);
        MirrorVerifications.Target mirroring = new MirrorVerifications.Target(TP, PartitionState.MIRRORING, -1);
        assertEquals(100, MirrorVerifications.estimatedOffsets(stopped, 20, 500), "up to the barrier");
        assertEquals(480, MirrorVerifications.estimatedOffsets(mirroring, 20, 500), "up to the high watermark");
        assertEquals(100, MirrorVerifications.estimatedOffsets(stopped, 20, -1), "a barrier needs no high watermark");
        assertEquals(0, MirrorVerifications.estimatedOffsets(mirroring, 20, -1), "unknown");
        assertEquals(0, MirrorVerifications.estimatedOffsets(stopped, -1, 500), "unknown");
        assertEquals(0, MirrorVerifications.estimatedOffsets(stopped, 200, 500), "retention passed the barrier");
    }

    @Test
    void compactedTopicsAreRefusedNamingTheClusterAndTheWayOut() {
        Map<String, String> source = new HashMap<>(Map.of("orders", "delete"));
        source.put("unknown", null);
        MirrorVerifications.refuseCompacted(Map.of("source", source, "destination", Map.of("orders", "delete")));
        ClusterMirrorException e = assertThrows(ClusterMirrorException.class, () -> MirrorVerifications.refuseCompacted(
            Map.of("source", Map.of("orders", "delete", "users", "compact,delete"), "destination", Map.of("orders", "delete"))));
        assertEquals(MirrorError.INVALID_REQUEST, e.error());
        assertTrue(e.getMessage().contains("users (cleanup.policy=compact,delete on the source)")
            && e.getMessage().contains("--exclude"), e.getMessage());
    }
}
