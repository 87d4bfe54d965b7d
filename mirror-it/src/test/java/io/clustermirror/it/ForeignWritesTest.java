package io.clustermirror.it;

import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testkit.TestUtils;
import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Writes to a mirror topic that the read-only rule cannot see. Kafka authorizes WriteTxnMarkers (what
 * {@code Admin.abortTransaction} and {@code kafka-transactions.sh abort} send) on the CLUSTER resource only, with no topic,
 * so an abort marker can land in a MIRRORING partition at an offset where the source holds other data. The mirror must
 * find it (its next append there fails), prove it different from the source's batch, cut it and copy the source's data:
 * the partition ends identical to the source.
 */
class ForeignWritesTest {
    private static ClusterPair clusters;

    @BeforeAll
    static void startClusters() throws Exception {
        clusters = ClusterPair.start(MirrorTestCluster.builder().name("foreign-source"),
            MirrorTestCluster.builder().name("foreign-destination"));
    }

    @AfterAll
    static void stopClusters() throws Exception {
        if (clusters != null) {
            clusters.close();
        }
    }

    private static long committedEnd(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
            .all().get().get(tp).offset();
    }

    @Test
    void anAbortMarkerAClientWroteIntoAMirroringPartitionIsCutAndTheSourcesDataCopied() throws Exception {
        String topic = "foreign-abort";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = clusters.source.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        Workloads.writeAllKinds(clusters.source.bootstrapServers(), topic, 1, 2);
        clusters.mirrors.createClusterMirror(topic, MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        clusters.mirrors.startMirrorTopics(topic, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, topic, 1);

        long openAt;
        try (KafkaProducer<byte[], byte[]> transactional = Workloads.producer(clusters.source.bootstrapServers(),
                 Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "foreign-abort-tx"));
             Admin source = clusters.source.admin();
             Admin destination = clusters.destination.admin()) {
            transactional.initTransactions();
            transactional.beginTransaction();
            List<Workloads.Acked> open = Workloads.sendBatch(transactional, topic, 0, "open", 3);
            openAt = open.get(0).offset();
            // Mirroring stops at the source's last stable offset: the start of the open transaction.
            long lastStable = openAt;
            TestUtils.waitFor(() -> committedEnd(source, tp) == lastStable && MirrorAssertions.endOffset(destination, tp) == lastStable,
                MirrorAssertions.TIMEOUT, "the destination to mirror up to the open transaction at " + lastStable);

            long transactionStart = openAt;
            LogBatches.Batch openBatch = LogBatches.read(clusters.source.partitionDir(clusters.source.leaderOf(tp), tp), openAt,
                Long.MAX_VALUE).stream().filter(b -> b.baseOffset() == transactionStart).findFirst().orElseThrow();
            destination.abortTransaction(new AbortTransactionSpec(tp, openBatch.producerId(), openBatch.producerEpoch(), 0)).all().get();
            assertEquals(openAt + 1, MirrorAssertions.endOffset(destination, tp),
                "the abort marker landed at " + openAt + ", where the source holds the transaction's records");

            transactional.commitTransaction();
        }
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
