package io.clustermirror.admin.internals;

import io.clustermirror.admin.StartPreview;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;

import org.apache.kafka.common.TopicPartition;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class StartPreviewsTest {
    private static final String LOCAL = "LocalId";
    private static final MirrorRecord DR = new MirrorRecord("dr", Map.of("bootstrap.servers", "src:9092"), "SrcId", 1L);
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);

    private static PartitionStateRecord state(String mirror, String topic, int partition, PartitionState state, long barrier) {
        return new PartitionStateRecord(mirror, topic, partition, state, 1, 1, "TopicId", 99, 0, List.of(), 100, 100, null,
            barrier, -1, -1, 1L);
    }

    private static MirrorImage stoppedOrders(PartitionStateRecord... states) {
        return new MirrorImage(Map.of("dr", DR),
            Map.of("orders", new MirrorTopicRecord("orders", "dr", DesiredState.STOPPED, "TopicId", 2, 1L),
                "live", new MirrorTopicRecord("live", "dr", DesiredState.MIRRORING, "LiveId", 1, 1L)),
            List.of(states).stream().collect(java.util.stream.Collectors.toMap(PartitionStateRecord::key, s -> s)));
    }

    /** The source's image after it mirrored {@code topic} from this cluster (LocalId) and stopped with that barrier. */
    private static MirrorImage sourceStoppedCopyOf(String topic, long barrier) {
        return new MirrorImage(Map.of("back", new MirrorRecord("back", Map.of(), LOCAL, 1L)),
            Map.of(topic, new MirrorTopicRecord(topic, "back", DesiredState.STOPPED, "TopicId", 1, 1L)),
            Map.of("back/" + topic + "/0", state("back", topic, 0, PartitionState.STOPPED, barrier)));
    }

    @Test
    void aStoppedTopicIsCutBackToItsBarrierWhichGoesToo() {
        MirrorImage image = stoppedOrders(state("dr", "orders", 0, PartitionState.STOPPED, 100));
        assertEquals(new StartPreview("orders", 0, PartitionState.STOPPED, 100, -1, 131, StartPreview.Cut.BARRIER, 100, 131, 0),
            StartPreviews.preview(image, MirrorImage.EMPTY, LOCAL, "dr", ORDERS_0, 0, 131));
        assertEquals(StartPreview.Cut.BARRIER, StartPreviews.preview(image, MirrorImage.EMPTY, LOCAL, "dr", ORDERS_0, 0, 101).cut(),
            "nothing written since the stop: the barrier alone is cut");
        assertEquals(new StartPreview("orders", 0, PartitionState.STOPPED, 100, -1, 100, StartPreview.Cut.NONE, -1, -1, 0),
            StartPreviews.preview(image, MirrorImage.EMPTY, LOCAL, "dr", ORDERS_0, 0, 100));
    }

    @Test
    void onFailbackTheSourcesBarrierDecides() {
        MirrorImage image = stoppedOrders(state("dr", "orders", 0, PartitionState.STOPPED, 100));
        StartPreview preview = StartPreviews.preview(image, sourceStoppedCopyOf("orders", 90), LOCAL, "dr", ORDERS_0, 0, 131);
        assertEquals(StartPreview.Cut.SOURCE_BARRIER, preview.cut());
        assertEquals(90, preview.sourceBarrierOffset());
        assertEquals(90, preview.truncateFromOffset());
        assertEquals(131, preview.truncateToOffset());
    }

    @Test
    void withoutABarrierTheStartComparesBatchesAndTheRangeIsNotKnown() {
        MirrorImage image = stoppedOrders();
        StartPreview preview = StartPreviews.preview(image, MirrorImage.EMPTY, LOCAL, "dr", ORDERS_0, 10, 131);
        assertEquals(new StartPreview("orders", 0, PartitionState.UNKNOWN, -1, -1, 131, StartPreview.Cut.BATCH_COMPARISON, -1, -1, 0),
            preview);
        assertEquals(StartPreview.Cut.NONE, StartPreviews.preview(image, MirrorImage.EMPTY, LOCAL, "dr", ORDERS_0, 10, 10).cut(),
            "an empty log");
    }

    @Test
    void selectsStoppedAndFailbackTopicsOnly() {
        MirrorImage image = stoppedOrders(state("dr", "orders", 0, PartitionState.STOPPED, 100),
            state("dr", "orders", 1, PartitionState.STOPPED, 80));
        assertEquals(List.of(ORDERS_0, new TopicPartition("orders", 1), new TopicPartition("payments", 0)),
            StartPreviews.partitionsToStart(image, sourceStoppedCopyOf("payments", 5), LOCAL, "dr", List.of(".*"), List.of()));
        assertEquals(List.of(new TopicPartition("payments", 0)),
            StartPreviews.partitionsToStart(image, sourceStoppedCopyOf("payments", 5), LOCAL, "dr", List.of(".*"), List.of("orders")));
        assertEquals(List.of(), StartPreviews.partitionsToStart(image, MirrorImage.EMPTY, LOCAL, "dr", List.of("live", "new"), List.of()),
            "a mirroring topic is not started again, a new one is created empty");
    }

    @Test
    void refusesAsTheStartWould() {
        MirrorImage stopping = stoppedOrders(state("dr", "orders", 0, PartitionState.STOPPED, 100),
            state("dr", "orders", 1, PartitionState.STOPPING, -1));
        ClusterMirrorException e = assertThrows(ClusterMirrorException.class,
            () -> StartPreviews.partitionsToStart(stopping, MirrorImage.EMPTY, LOCAL, "dr", List.of("orders"), List.of()));
        assertEquals(MirrorError.MIRROR_TOPIC_NOT_STOPPED, e.error());
        assertEquals(MirrorError.UNKNOWN_CLUSTER_MIRROR, assertThrows(ClusterMirrorException.class,
            () -> StartPreviews.partitionsToStart(stopping, MirrorImage.EMPTY, LOCAL, "nope", List.of("orders"), List.of())).error());
    }
}
