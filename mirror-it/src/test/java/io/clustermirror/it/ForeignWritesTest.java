package io.clustermirror.it;

import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Writes to a mirror topic that the read-only rule cannot see. Kafka authorizes WriteTxnMarkers (what
 * {@code Admin.abortTransaction} and {@code kafka-transactions.sh abort} send) on the CLUSTER resource only, with no topic,
 * so an abort marker can land in a MIRRORING partition at an offset where the source holds other data. The mirror must
 * find it (its next append there fails), prove it different from the source's batch, cut it and copy the source's data:
 * the partition ends identical to the source.
 */
@MirrorClusterTest(source = "foreign-source", destination = "foreign-destination")
class ForeignWritesTest {
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;

    @Test
    void anAbortMarkerAClientWroteIntoAMirroringPartitionIsCutAndTheSourcesDataCopied() throws Exception {
        String topic = "foreign-abort";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = clusters.source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 1)));
        }
        Workloads.writeAllKinds(clusters.source.bootstrapServers(), topic, 1, 2);
        clusters.mirrors.createClusterMirror(topic, MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        clusters.mirrors.startMirrorTopics(topic, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, topic, 1);

        long openAt = Workloads.writeForeignAbortMarker(clusters.source, clusters.destination, tp, "foreign-abort-tx");
        Workloads.writeAllKinds(clusters.source.bootstrapServers(), topic, 1, 2);
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, topic, 1);
        MirrorAssertions.assertIdenticalLogs(clusters.source, clusters.destination, topic, 1);
        MirrorAssertions.assertSameRecords(clusters.source, clusters.destination, topic, 1);
        MirrorAssertions.awaitState(clusters.mirrors, topic, topic, 1, PartitionState.MIRRORING);
        MirrorPartitionDescription d = MirrorAssertions.describe(clusters.mirrors, topic, topic, 0);
        assertEquals(List.of(openAt, openAt + 1), List.of(d.truncatedFromOffset(), d.truncatedToOffset()),
            "describe reports the cut of the marker: " + d);
    }
}
