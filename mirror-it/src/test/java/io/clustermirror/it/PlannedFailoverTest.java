package io.clustermirror.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.NotCaughtUpException;
import io.clustermirror.admin.PartitionCatchUp;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The planned failover ({@code --stop --planned}, {@link MirrorTopicsOptions#planned}) on real clusters: it stops once the
 * destination holds everything the source holds, so the stop truncates nothing and the barrier comes right after the
 * source's records; it stops nothing, naming the partitions behind and their lag, while the source keeps a transaction
 * open; and it refuses a paused topic at once.
 */
@MirrorClusterTest(source = "planned-source", destination = "planned-destination")
class PlannedFailoverTest {
    private static final String MIRROR = "planned";
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;

    @BeforeAll
    static void createTheMirror() throws Exception {
        clusters.mirrors.createClusterMirror(MIRROR, MirrorAssertions.mirrorConfig(clusters.source)).all().get();
    }

    @Test
    void aPlannedStopWaitsForTheSourcesRecordsAndTruncatesNothing() throws Exception {
        String topic = "planned-orders";
        TopicPartition tp = new TopicPartition(topic, 0);
        createSourceTopic(topic, 1);
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of()).all().get();
        Workloads.writeIdempotentAndTransactional(clusters.source.bootstrapServers(), topic, "planned");
        long sourceEnd;
        try (Admin admin = clusters.source.admin()) {
            sourceEnd = MirrorAssertions.endOffset(admin, tp);
        }

        // Called without waiting for the mirror: the planned stop does the waiting.
        List<String> stopped = clusters.mirrors.stopMirrorTopics(MIRROR, List.of(topic), List.of(),
            new MirrorTopicsOptions().planned(true).timeoutMs(60_000)).topics().get();

        assertEquals(List.of(topic), stopped);
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, topic, 1, PartitionState.STOPPED);
        MirrorPartitionDescription partition = MirrorAssertions.describe(clusters.mirrors, MIRROR, topic, 0);
        assertEquals(MirrorPartitionDescription.UNKNOWN, partition.truncatedFromOffset(), "the stop truncated nothing: " + partition);
        assertEquals(sourceEnd, partition.barrierOffset(), "the barrier follows the source's last record: " + partition);
        try (Admin admin = clusters.destination.admin()) {
            assertEquals(sourceEnd + 1, MirrorAssertions.endOffset(admin, tp), "every source record, then the barrier");
        }
    }

    @Test
    void aPlannedStopStopsNothingWhileTheSourceKeepsATransactionOpen() throws Exception {
        String topic = "planned-open";
        createSourceTopic(topic, 2);
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of()).all().get();
        try (KafkaProducer<byte[], byte[]> committed = Workloads.producer(clusters.source.bootstrapServers(),
                Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true));
             KafkaProducer<byte[], byte[]> open = Workloads.producer(clusters.source.bootstrapServers(),
                Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "planned-open", ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 600_000))) {
            Workloads.sendBatch(committed, topic, 0, "committed", 5);
            Workloads.sendBatch(committed, topic, 1, "committed", 3);
            open.initTransactions();
            open.beginTransaction();
            Workloads.sendBatch(open, topic, 0, "open", 4);
            // The default read_committed mirror copies up to the source's last stable offset, before the open transaction.
            try (Admin admin = clusters.destination.admin()) {
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(admin, new TopicPartition(topic, 0)) == 5
                        && MirrorAssertions.endOffset(admin, new TopicPartition(topic, 1)) == 3, MirrorAssertions.TIMEOUT,
                    "the destination to copy the committed records");
            }

            ExecutionException e = assertThrows(ExecutionException.class, () -> clusters.mirrors.stopMirrorTopics(MIRROR,
                List.of(topic), List.of(), new MirrorTopicsOptions().planned(true).timeoutMs(3_000)).all().get());

            NotCaughtUpException notCaughtUp = assertInstanceOf(NotCaughtUpException.class, e.getCause());
            assertEquals(MirrorError.MIRROR_TOPIC_NOT_CAUGHT_UP, notCaughtUp.error());
            assertEquals(1, notCaughtUp.behind().size(), notCaughtUp.behind().toString());
            PartitionCatchUp behind = notCaughtUp.behind().get(0);
            assertEquals(new PartitionCatchUp(topic, 0, PartitionState.MIRRORING, 5, 9, 5, 5, behind.lagMs()), behind);
            assertEquals(4, behind.lag(), "the open transaction's records");
            assertTrue(notCaughtUp.getMessage().contains(topic + "-0 (MIRRORING): 4 offset(s)")
                && notCaughtUp.getMessage().contains("transaction is open on the source from offset 5"), notCaughtUp.getMessage());
            assertStillMirroring(topic, 2);

            CliRun json = CliRun.run(clusters.destination.bootstrapServers(), "--stop", "--mirror", MIRROR, "--topics", topic,
                "--planned", "--timeout-ms", "2000", "--json");
            assertEquals(1, json.exit(), json.out() + json.err());
            assertTrue(json.err().startsWith("MIRROR_TOPIC_NOT_CAUGHT_UP: "), json.err());
            JsonNode root = new ObjectMapper().readTree(json.out());
            assertEquals(false, root.get("stopped").asBoolean(), json.out());
            JsonNode partition = root.get("partitions_behind").get(0);
            assertEquals(0, partition.get("partition").asInt(), json.out());
            assertEquals(4, partition.get("lag").asLong(), json.out());
            assertEquals(9, partition.get("source_end").asLong(), json.out());
            assertEquals(5, partition.get("destination_end").asLong(), json.out());
            assertStillMirroring(topic, 2);

            // Once the transaction ends, the topic catches up and the planned stop goes through.
            open.abortTransaction();
            clusters.mirrors.stopMirrorTopics(MIRROR, List.of(topic), List.of(),
                new MirrorTopicsOptions().planned(true).timeoutMs(60_000)).all().get();
            MirrorAssertions.awaitState(clusters.mirrors, MIRROR, topic, 2, PartitionState.STOPPED);
            MirrorPartitionDescription partition0 = MirrorAssertions.describe(clusters.mirrors, MIRROR, topic, 0);
            assertEquals(MirrorPartitionDescription.UNKNOWN, partition0.truncatedFromOffset(), partition0.toString());
            assertEquals(10, partition0.barrierOffset(), "after the aborted transaction's marker: " + partition0);
        }
    }

    @Test
    void aPlannedStopRefusesAPausedTopic() throws Exception {
        String topic = "planned-paused";
        createSourceTopic(topic, 1);
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, topic, 1, PartitionState.MIRRORING);
        clusters.mirrors.pauseMirrorTopics(MIRROR, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, topic, 1, PartitionState.PAUSED);

        CliRun run = CliRun.run(clusters.destination.bootstrapServers(), "--stop", "--mirror", MIRROR, "--topics", topic, "--planned");

        assertEquals(1, run.exit(), run.out() + run.err());
        assertTrue(run.err().startsWith("MIRROR_TOPIC_NOT_MIRRORING: topic '" + topic + "' is PAUSED"), run.err());
        ExecutionException e = assertThrows(ExecutionException.class, () -> clusters.mirrors.stopMirrorTopics(MIRROR,
            List.of(topic), List.of(), new MirrorTopicsOptions().planned(true)).all().get());
        assertEquals(MirrorError.MIRROR_TOPIC_NOT_MIRRORING, assertInstanceOf(ClusterMirrorException.class, e.getCause()).error());
        assertEquals(DesiredState.PAUSED, desired(topic), "nothing was stopped");
        assertEquals(PartitionState.PAUSED, MirrorAssertions.describe(clusters.mirrors, MIRROR, topic, 0).state());
    }

    private static void createSourceTopic(String topic, int partitions) throws Exception {
        try (Admin admin = clusters.source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, partitions, (short) 1)));
        }
    }

    private static void assertStillMirroring(String topic, int partitions) throws Exception {
        assertEquals(DesiredState.MIRRORING, desired(topic), "nothing was stopped");
        for (int p = 0; p < partitions; p++) {
            assertEquals(PartitionState.MIRRORING, MirrorAssertions.describe(clusters.mirrors, MIRROR, topic, p).state());
        }
    }

    private static DesiredState desired(String topic) throws Exception {
        return clusters.mirrors.describeClusterMirrors(List.of(MIRROR)).all().get().get(MIRROR).topics().stream()
            .filter(t -> t.topic().equals(topic)).findFirst().orElseThrow().desiredState();
    }
}
