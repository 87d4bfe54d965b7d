package io.clustermirror.admin.internals;

import io.clustermirror.admin.OperationProgress;
import io.clustermirror.admin.PartitionCatchUp;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PlannedStopsTest {
    private static final MirrorImage IMAGE = new MirrorImage(Map.of("dr", new MirrorRecord("dr", Map.of("bootstrap.servers", "s:9092"),
        "SrcId", 1L)), Map.of(
            "orders", new MirrorTopicRecord("orders", "dr", DesiredState.MIRRORING, "TopicId", 2, 1L),
            "audit", new MirrorTopicRecord("audit", "dr", DesiredState.MIRRORING, "TopicId2", 1, 1L)),
        Map.of());

    private static PartitionCatchUp partition(int partition, PartitionState state, long sourceEnd, long destinationEnd) {
        return new PartitionCatchUp("orders", partition, state, sourceEnd, sourceEnd, destinationEnd, destinationEnd, -1);
    }

    @Test
    void aStartWaitsForEveryPartitionOfTheStartedTopicsInOrder() {
        assertEquals(List.of(new TopicPartition("audit", 0), new TopicPartition("orders", 0), new TopicPartition("orders", 1)),
            PlannedStops.partitionsOf(IMAGE, List.of("orders", "audit")));
        ClusterMirrorException e = assertThrows(ClusterMirrorException.class,
            () -> PlannedStops.partitionsOf(IMAGE, List.of("orders", "payments")));
        assertEquals(MirrorError.UNKNOWN_SERVER_ERROR, e.error());
    }

    @Test
    void theProgressCountsThePartitionsDoneAndTheOffsetsTheOthersAreBehind() {
        List<PartitionCatchUp> checked = List.of(partition(0, PartitionState.MIRRORING, 100, 100),
            partition(1, PartitionState.MIRRORING, 100, 60), partition(2, PartitionState.PREPARING, 50, 50),
            partition(3, PartitionState.MIRRORING, 100, -1));
        assertEquals(new OperationProgress(2, 4, 40), PlannedStops.progress(checked, PartitionCatchUp::caughtUp),
            "a partition whose offsets are unknown is behind by nothing known");
        assertEquals(new OperationProgress(1, 4, 40), PlannedStops.progress(checked, PartitionCatchUp::mirroringAndCaughtUp),
            "a start waits for MIRRORING too");
    }
}
