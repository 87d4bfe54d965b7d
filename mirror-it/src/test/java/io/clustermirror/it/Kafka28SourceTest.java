package io.clustermirror.it;

import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Mirroring from a Kafka 2.8 cluster in ZooKeeper mode, the oldest release line the tests cover. */
class Kafka28SourceTest extends SourceReleaseContract {
    static ClusterPair.Topologies topologies() {
        return withDestination(ReleaseSource.topology("2.8.2", ClusterTopology.Quorum.ZOOKEEPER, Map.of()));
    }

    /**
     * A topic whose {@code message.format.version} is 0.10.2 stores v1 batches (the broker converts what producers
     * send). They cannot be stored unchanged on a destination: its partition fails with UNSUPPORTED_MESSAGE_FORMAT
     * naming the offset, nothing of it is appended, and a topic of the same mirror in the current format mirrors on.
     */
    @Test
    void anOldMessageFormatFailsOnlyItsPartitionWithANamedError() throws Exception {
        createSourceTopic("old-format", 1, Map.of("message.format.version", "0.10.2"));
        createSourceTopic("current-format", 1, Map.of());
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source().bootstrapServers(),
                Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false, ProducerConfig.ACKS_CONFIG, "1"))) {
            for (int i = 0; i < 5; i++) {
                producer.send(new ProducerRecord<>("old-format", 0, null, Workloads.bytes("v1-" + i))).get();
                producer.send(new ProducerRecord<>("current-format", 0, null, Workloads.bytes("v2-" + i))).get();
            }
        }
        assertEquals(List.of((byte) 1), LogBatches.read(source().partitionDir(1, new TopicPartition("old-format", 0)), Long.MAX_VALUE)
            .stream().map(LogBatches.Batch::magic).distinct().toList(), "the source stores the old topic in format v1");
        mirrors().startMirrorTopics("old", List.of("old-format", "current-format"), List.of()).all().get();

        TestUtils.waitFor(() -> MirrorAssertions.describe(mirrors(), "old", "old-format", 0).state() == PartitionState.FAILED,
            MirrorAssertions.TIMEOUT, "the partition holding v1 batches to fail");
        MirrorPartitionDescription failed = MirrorAssertions.describe(mirrors(), "old", "old-format", 0);
        assertTrue(failed.lastError().startsWith(MirrorError.UNSUPPORTED_MESSAGE_FORMAT.name())
            && failed.lastError().contains("offsets 0..") && failed.lastError().contains("message format v1"), failed.lastError());
        try (Admin admin = destination().admin()) {
            assertEquals(0, MirrorAssertions.endOffset(admin, new TopicPartition("old-format", 0)), "nothing is re-encoded or appended");
        }
        MirrorAssertions.awaitCaughtUp(source(), destination(), "current-format", 1);
        MirrorAssertions.assertIdenticalLogs(source(), destination(), "current-format", 1);
    }
}
