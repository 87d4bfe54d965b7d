package io.clustermirror.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.StartPreview;
import io.clustermirror.admin.StopPreview;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The failover dry-run ({@code --stop --dry-run}, {@link ClusterMirrorAdmin#previewStopMirrorTopics}) on real clusters:
 * with a transaction left open on the source and {@code mirror.fetch.isolation.level=read_uncommitted}, the destination
 * holds the open transaction's records; the dry-run names the range, its records and the producer id, changes nothing,
 * and the real stop then truncates exactly that range. The start dry-run ({@code --start --dry-run},
 * {@link ClusterMirrorAdmin#previewStartMirrorTopics}) of a stopped topic with local writes predicts exactly the range the
 * real start cuts.
 */
@MirrorClusterTest(source = "dry-run-source", destination = "dry-run-destination")
class FailoverDryRunTest {
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;

    @Test
    void theDryRunPredictsTheStopsTruncationWithAnOpenSourceTransaction() throws Exception {
        MirrorTestCluster source = clusters.source;
        MirrorTestCluster destination = clusters.destination;
        ClusterMirrorAdmin mirrors = clusters.mirrors;
        String topic = "dry-orders";
        TopicPartition tp = new TopicPartition(topic, 0);
        Workloads.createTopic(source, topic, 1, Map.of());
        try (KafkaProducer<byte[], byte[]> committed = Workloads.producer(source.bootstrapServers(),
                Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true));
             KafkaProducer<byte[], byte[]> open = Workloads.producer(source.bootstrapServers(),
                Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "dry-open"))) {
            Workloads.sendBatch(committed, topic, 0, "committed", 5);
            open.initTransactions();
            open.beginTransaction();
            Workloads.sendBatch(open, topic, 0, "open", 4);
            long openProducerId;
            long sourceStable;
            long sourceEnd;
            try (Admin admin = source.admin()) {
                sourceEnd = MirrorAssertions.endOffset(admin, tp);
                sourceStable = admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                    .all().get().get(tp).offset();
                openProducerId = admin.describeProducers(List.of(tp)).partitionResult(tp).get().activeProducers().stream()
                    .filter(p -> p.currentTransactionStartOffset().isPresent()).map(ProducerState::producerId).findFirst().orElseThrow();
            }
            assertTrue(sourceStable < sourceEnd, "the source has an open transaction: LSO " + sourceStable + ", end " + sourceEnd);

            Map<String, String> config = new HashMap<>(MirrorAssertions.mirrorConfig(source));
            config.put("mirror.fetch.isolation.level", "read_uncommitted");
            mirrors.createClusterMirror("dry", config).all().get();
            mirrors.startMirrorTopics("dry", List.of(topic), List.of()).all().get();
            try (Admin admin = destination.admin()) {
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(admin, tp) == sourceEnd, MirrorAssertions.TIMEOUT,
                    "the destination to hold the open transaction's records");
            }

            List<StopPreview> previews = mirrors.previewStopMirrorTopics("dry", List.of("dry-.*"), List.of()).partitions().get();
            assertEquals(1, previews.size(), previews.toString());
            StopPreview preview = previews.get(0);
            assertEquals(sourceStable, preview.truncateFromOffset(), "the cut starts at the open transaction: " + preview);
            assertEquals(sourceEnd, preview.truncateToOffset());
            assertEquals(4, preview.recordsToTruncate(), "the open transaction's records");
            assertEquals(List.of(openProducerId), preview.openProducerIds());
            assertEquals(PartitionState.MIRRORING, MirrorAssertions.describe(mirrors, "dry", topic, 0).state(),
                "the dry-run changed nothing");

            CliRun json = CliRun.run(destination.bootstrapServers(), "--stop", "--mirror", "dry", "--topics", topic, "--dry-run", "--json");
            assertEquals(0, json.exit(), json.err());
            JsonNode partition = new ObjectMapper().readTree(json.out()).get("partitions").get(0);
            assertEquals(sourceStable, partition.get("truncate_from").asLong(), json.out());
            assertEquals(sourceEnd, partition.get("truncate_to").asLong(), json.out());
            assertEquals(4, partition.get("records_to_truncate").asLong(), json.out());
            assertEquals(openProducerId, partition.get("open_producer_ids").get(0).asLong(), json.out());
            CliRun text = CliRun.run(destination.bootstrapServers(), "--stop", "--mirror", "dry", "--topics", topic, "--dry-run");
            assertEquals(0, text.exit(), text.err());
            assertTrue(text.out().contains("[" + sourceStable + "," + sourceEnd + ")") && text.out().contains("Dry run, nothing changed"),
                text.out());

            mirrors.stopMirrorTopics("dry", List.of(topic), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, "dry", topic, 1, PartitionState.STOPPED);
            MirrorPartitionDescription stopped = MirrorAssertions.describe(mirrors, "dry", topic, 0);
            assertEquals(preview.truncateFromOffset(), stopped.truncatedFromOffset(), "the stop cut what the dry-run said: " + stopped);
            assertEquals(preview.truncateToOffset(), stopped.truncatedToOffset(), "the stop cut what the dry-run said: " + stopped);
            open.abortTransaction();
        }
    }

    @Test
    void theStartDryRunPredictsTheCutOfAStoppedTopicWithLocalWrites() throws Exception {
        MirrorTestCluster source = clusters.source;
        MirrorTestCluster destination = clusters.destination;
        ClusterMirrorAdmin mirrors = clusters.mirrors;
        String topic = "restart-orders";
        TopicPartition tp = new TopicPartition(topic, 0);
        Workloads.createTopic(source, topic, 1, Map.of());
        Workloads.sendIdempotent(source.bootstrapServers(), topic, "mirrored", 6);
        mirrors.createClusterMirror("restart", MirrorAssertions.mirrorConfig(source)).all().get();
        mirrors.startMirrorTopics("restart", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        mirrors.stopMirrorTopics("restart", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitState(mirrors, "restart", topic, 1, PartitionState.STOPPED);
        long barrier = MirrorAssertions.describe(mirrors, "restart", topic, 0).barrierOffset();
        Workloads.sendIdempotent(destination.bootstrapServers(), topic, "local", 7);
        long end;
        try (Admin admin = destination.admin()) {
            end = MirrorAssertions.endOffset(admin, tp);
        }
        assertEquals(barrier + 1 + 7, end, "the barrier, then the local writes");

        List<StartPreview> previews = mirrors.previewStartMirrorTopics("restart", List.of("restart-.*"), List.of()).partitions().get();
        assertEquals(List.of(new StartPreview(topic, 0, PartitionState.STOPPED, barrier, -1, end, StartPreview.Cut.BARRIER,
            barrier, end, 7)), previews, "cut back to the barrier, removing the local writes");
        CliRun json = CliRun.run(destination.bootstrapServers(), "--start", "--mirror", "restart", "--topics", topic, "--dry-run", "--json");
        assertEquals(0, json.exit(), json.err());
        JsonNode partition = new ObjectMapper().readTree(json.out()).get("partitions").get(0);
        assertEquals(barrier, partition.get("truncate_from").asLong(), json.out());
        assertEquals(end, partition.get("truncate_to").asLong(), json.out());
        assertEquals(7, partition.get("records_to_truncate").asLong(), json.out());
        MirrorPartitionDescription stillStopped = MirrorAssertions.describe(mirrors, "restart", topic, 0);
        assertEquals(PartitionState.STOPPED, stillStopped.state(), "the dry-run changed nothing");
        assertEquals(MirrorPartitionDescription.UNKNOWN, stillStopped.truncatedFromOffset(), "the dry-run changed nothing");

        mirrors.startMirrorTopics("restart", List.of(topic), List.of(), new MirrorTopicsOptions().discardLocalWrites(true)).all().get();
        TestUtils.waitFor(() -> MirrorAssertions.describe(mirrors, "restart", topic, 0).truncatedFromOffset() >= 0,
            MirrorAssertions.TIMEOUT, "the start to cut the log");
        MirrorAssertions.awaitState(mirrors, "restart", topic, 1, PartitionState.MIRRORING);
        MirrorPartitionDescription restarted = MirrorAssertions.describe(mirrors, "restart", topic, 0);
        assertEquals(previews.get(0).truncateFromOffset(), restarted.truncatedFromOffset(), "the start cut what the dry-run said: " + restarted);
        assertEquals(previews.get(0).truncateToOffset(), restarted.truncatedToOffset(), "the start cut what the dry-run said: " + restarted);
    }
}
