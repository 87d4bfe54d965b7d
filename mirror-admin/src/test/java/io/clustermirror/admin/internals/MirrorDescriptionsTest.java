package io.clustermirror.admin.internals;

import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.EpochStart;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;

import org.apache.kafka.common.TopicPartition;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class MirrorDescriptionsTest {
    private static final MirrorRecord DR = new MirrorRecord("dr",
        Map.of("bootstrap.servers", "src:9092", "sasl.jaas.config", "secret"), "SrcId", 1L);
    private static final MirrorTopicRecord ORDERS =
        new MirrorTopicRecord("orders", "dr", DesiredState.STOPPED, "TopicId", 2, 1L);
    private static final PartitionStateRecord ORDERS_0 = new PartitionStateRecord("dr", "orders", 0,
        PartitionState.STOPPED, 4, 2, "TopicId", 99, 3, List.of(new EpochStart(3, 0)), 100, 100, null,
        100, 98, 100, 1_000L, 750L);
    private static final MirrorImage IMAGE = new MirrorImage(Map.of("dr", DR),
        Map.of("orders", ORDERS, "other", new MirrorTopicRecord("other", "elsewhere", DesiredState.MIRRORING,
            "OtherId", 1, 1L)),
        Map.of(ORDERS_0.key(), ORDERS_0));

    @Test
    void lagIsUnknownIfAnEndIsAndNeverNegative() {
        assertEquals(5, MirrorDescriptions.lag(10, 5));
        assertEquals(0, MirrorDescriptions.lag(10, 12));
        assertEquals(-1, MirrorDescriptions.lag(-1, 5));
        assertEquals(-1, MirrorDescriptions.lag(10, -1));
    }

    @Test
    void listingCountsTheMirrorsTopics() {
        assertEquals(new io.clustermirror.admin.ClusterMirrorListing("dr", "src:9092", "SrcId", 1),
            MirrorDescriptions.listing(IMAGE, DR));
    }

    /**
     * Only partitions a leader has reported get their end offsets read: orders-1 has no state record (its leader has not
     * taken it up, its log may not exist yet), and asking for it would make the admin client retry until the deadline.
     */
    @Test
    void endOffsetsAreReadOnlyForReportedPartitions() {
        assertEquals(List.of(new TopicPartition("orders", 0)), MirrorDescriptions.reportedPartitionsOf(IMAGE, "dr"));
    }

    @Test
    void descriptionHidesSecretsAndShowsUnreportedPartitionsAsUnknown() {
        ClusterMirrorDescription d = MirrorDescriptions.description(IMAGE, DR,
            Map.of(new TopicPartition("orders", 0), 101L), 60_000L);
        assertEquals("[hidden]", d.configs().get("sasl.jaas.config"));
        assertEquals("src:9092", d.sourceBootstrapServers());
        assertEquals(List.of(new MirrorTopicDescription("orders", DesiredState.STOPPED, List.of(
            // Stopped with records 250 ms old not mirrored: what the stop left behind, however long ago.
            new MirrorPartitionDescription(0, PartitionState.STOPPED, 100, 101, 0, 99, 3, null, 100, 98, 100, 2, 250),
            new MirrorPartitionDescription(1, PartitionState.UNKNOWN, -1, -1, -1, -1, -1, null, -1, -1, -1, -1, -1)))),
            d.topics());
    }
}
