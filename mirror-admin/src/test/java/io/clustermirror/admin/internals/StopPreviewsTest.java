package io.clustermirror.admin.internals;

import io.clustermirror.admin.StopPreview;
import io.clustermirror.common.DesiredState;
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

class StopPreviewsTest {
    private static final long WRITTEN_MS = 1_700_000_000_000L;
    private static final PartitionStateRecord PAUSED_0 = new PartitionStateRecord("dr", "orders", 0, PartitionState.PAUSED, 4, 2,
        "TopicId", 99, 3, List.of(), 110, 100, null, -1, -1, -1, WRITTEN_MS, WRITTEN_MS - 2_000);
    private static final MirrorImage IMAGE = new MirrorImage(Map.of("dr", new MirrorRecord("dr", Map.of("bootstrap.servers", "s:9092"),
        "SrcId", 1L)), Map.of("orders", new MirrorTopicRecord("orders", "dr", DesiredState.PAUSED, "TopicId", 2, 1L)),
        Map.of(PAUSED_0.key(), PAUSED_0));

    @Test
    void aPreviewNamesHowOldTheRecordsAStopNowLeavesBehindAreOrUnknown() {
        StopPreview paused = StopPreviews.preview(IMAGE, "dr", new TopicPartition("orders", 0), 100, 100, 0, List.of(),
            WRITTEN_MS + 3_000);
        assertEquals(5_000, paused.lagMs(), "paused: the source's records not mirrored grow older with the clock");
        StopPreview unreported = StopPreviews.preview(IMAGE, "dr", new TopicPartition("orders", 1), 0, 0, 0, List.of(),
            WRITTEN_MS + 3_000);
        assertEquals(-1, unreported.lagMs());
    }
}
