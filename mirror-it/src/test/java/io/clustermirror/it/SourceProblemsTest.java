package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testsupport.HostilePeer;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Problems of the source that a mirror partition reports by name, never in silence, on real clusters (one source broker,
 * one destination broker; each test has its own mirror and topic): records the source deleted before they were mirrored,
 * under both values of {@code mirror.source.data.loss.policy}; the source topic deleted, or deleted and re-created; the
 * source unreachable. The last test shuts the source down, so it runs last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@MirrorClusterTest(source = "problems-source", destination = "problems-destination")
class SourceProblemsTest {
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;
    private static ClusterMirrorAdmin mirrors;

    @BeforeAll
    static void nameTheClusters() {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
    }

    /** A mirror of a new one-partition source topic holding {@code records} records, caught up. */
    private static TopicPartition mirroredTopic(String mirror, String topic, int records, Map<String, String> mirrorConfigs)
            throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 1)));
        }
        produce(topic, records);
        Map<String, String> config = MirrorAssertions.mirrorConfig(source);
        config.putAll(mirrorConfigs);
        mirrors.createClusterMirror(mirror, config).all().get();
        mirrors.startMirrorTopics(mirror, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        return new TopicPartition(topic, 0);
    }

    private static void produce(String topic, int records) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of())) {
            Workloads.sendBatch(producer, topic, 0, "r", records);
        }
    }

    /** Pauses the topic, appends {@code more} records to the source and deletes its records before {@code deleteBefore}. */
    private static void outrunWhilePaused(String mirror, TopicPartition tp, int more, long deleteBefore) throws Exception {
        mirrors.pauseMirrorTopics(mirror, List.of(tp.topic()), List.of()).all().get();
        MirrorAssertions.awaitState(mirrors, mirror, tp.topic(), 1, PartitionState.PAUSED);
        produce(tp.topic(), more);
        try (Admin admin = source.admin()) {
            admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(deleteBefore))).all().get();
        }
        mirrors.resumeMirrorTopics(mirror, List.of(tp.topic()), List.of()).all().get();
    }

    private static MirrorPartitionDescription awaitError(String mirror, TopicPartition tp, PartitionState state, String errorPrefix)
            throws Exception {
        TestUtils.waitFor(() -> {
            MirrorPartitionDescription d = MirrorAssertions.describe(mirrors, mirror, tp.topic(), tp.partition());
            return d.state() == state && d.lastError() != null && d.lastError().startsWith(errorPrefix);
        }, MirrorAssertions.TIMEOUT, tp + " did not show " + state + " with " + errorPrefix);
        return MirrorAssertions.describe(mirrors, mirror, tp.topic(), tp.partition());
    }

    private static long destinationEnd(TopicPartition tp) throws Exception {
        try (Admin admin = destination.admin()) {
            return MirrorAssertions.endOffset(admin, tp);
        }
    }

    /** The destination topic keeps its records and refuses client writes: it is still a mirror topic. */
    private static void assertKeptAndReadOnly(TopicPartition tp, long end) throws Exception {
        assertEquals(end, destinationEnd(tp), "the destination keeps what it mirrored, and nothing else");
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(destination.bootstrapServers(), Map.of(
                ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000,
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000))) {
            ExecutionException denied = assertThrows(ExecutionException.class,
                () -> producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, Workloads.bytes("x"))).get());
            assertInstanceOf(TopicAuthorizationException.class, denied.getCause());
        }
    }

    @Test
    @Order(1)
    void retentionOutrunUnderTheDefaultPolicyIsReportedWithItsRangeSkippedAndCounted() throws Exception {
        TopicPartition tp = mirroredTopic("outrun-continue", "outrun-continue", 10, Map.of());
        List<String> mirroredBefore = MirrorAssertions.readAll(destination, tp);
        outrunWhilePaused("outrun-continue", tp, 20, 25);

        MirrorPartitionDescription d = awaitError("outrun-continue", tp, PartitionState.MIRRORING,
            "SOURCE_RETENTION_OUTRUN: source offsets [10, 25) of outrun-continue-0 were deleted on the source");
        assertTrue(d.lastError().contains("mirror.source.data.loss.policy=continue"), d.lastError());
        produce(tp.topic(), 5);
        TestUtils.waitFor(() -> destinationEnd(tp) == 35, MirrorAssertions.TIMEOUT, "the destination mirrors on to 35");
        // The source's move of its log start is held (mirror.source.destructive.policy=hold): the records mirrored before
        // the outrun stay readable, and so does what the destination holds below 25 (the start of a batch that holds 25).
        TestUtils.waitFor(() -> MirrorAssertions.describe(mirrors, "outrun-continue", tp.topic(), 0).heldLogStarts().stream()
            .anyMatch(h -> h.offset() == 25), MirrorAssertions.TIMEOUT, "the move of the source's log start to 25 is held");
        List<String> kept = MirrorAssertions.readAll(destination, tp);
        List<String> sourceRecords = MirrorAssertions.readAll(source, tp);
        assertEquals(mirroredBefore, kept.subList(0, mirroredBefore.size()), "the records mirrored before the outrun");
        assertEquals(sourceRecords, kept.subList(kept.size() - sourceRecords.size(), kept.size()), "the source's records from 25 on");
        // Applied, the destination log start follows the source's, so the skipped range is not a readable gap any more.
        mirrors.applyHeldChanges("outrun-continue", List.of(tp.topic()), List.of()).all().get();
        TestUtils.waitFor(() -> {
            try (Admin admin = destination.admin()) {
                return MirrorAssertions.startOffset(admin, tp) == 25;
            }
        }, MirrorAssertions.TIMEOUT, "the destination log start did not follow the source's to 25");
        MirrorAssertions.assertSameRecords(source, destination, tp.topic(), 1);
        assertEquals(15.0, MirrorAssertions.mirrorMetric(destination, "source-records-skipped-total", "outrun-continue"));
        assertEquals(1.0, MirrorAssertions.mirrorMetric(destination, "source-ranges-skipped-total", "outrun-continue"));
        assertTrue(MirrorAssertions.describe(mirrors, "outrun-continue", tp.topic(), 0).lastError()
            .startsWith("SOURCE_RETENTION_OUTRUN: source offsets [10, 25)"), "progress does not clear the report");
    }

    @Test
    @Order(2)
    void retentionOutrunUnderPolicyFailStopsBeforeTheRangeUntilTheOperatorStopsIt() throws Exception {
        ExecutionException invalid = assertThrows(ExecutionException.class, () -> mirrors.createClusterMirror("bad-policy",
            Map.of("bootstrap.servers", source.bootstrapServers(), MirrorConfig.SOURCE_DATA_LOSS_POLICY, "skip")).all().get());
        ClusterMirrorException e = assertInstanceOf(ClusterMirrorException.class, invalid.getCause());
        assertEquals(MirrorError.INVALID_CONFIG, e.error());
        assertTrue(e.getMessage().contains(MirrorConfig.SOURCE_DATA_LOSS_POLICY) && e.getMessage().contains("continue or fail"),
            e.getMessage());

        TopicPartition tp = mirroredTopic("outrun-fail", "outrun-fail", 10, Map.of(MirrorConfig.SOURCE_DATA_LOSS_POLICY, "fail"));
        outrunWhilePaused("outrun-fail", tp, 20, 25);

        MirrorPartitionDescription d = awaitError("outrun-fail", tp, PartitionState.FAILED,
            "SOURCE_RETENTION_OUTRUN: source offsets [10, 25) of outrun-fail-0 were deleted on the source");
        assertTrue(d.lastError().contains("mirror.source.data.loss.policy=fail"), d.lastError());
        assertKeptAndReadOnly(tp, 10);
        mirrors.stopMirrorTopics("outrun-fail", List.of(tp.topic()), List.of()).all().get();
        MirrorAssertions.awaitState(mirrors, "outrun-fail", tp.topic(), 1, PartitionState.STOPPED);
    }

    @Test
    @Order(3)
    void aDeletedSourceTopicStopsFetchingAndTheDestinationKeepsItsData() throws Exception {
        TopicPartition tp = mirroredTopic("deleted", "deleted", 10, Map.of());
        try (Admin admin = source.admin()) {
            admin.deleteTopics(List.of(tp.topic())).all().get();
        }
        MirrorPartitionDescription d = awaitError("deleted", tp, PartitionState.FAILED,
            "SOURCE_TOPIC_DELETED: source topic deleted (id ");
        assertTrue(d.lastError().contains("keeps its data up to offset 9"), d.lastError());
        assertKeptAndReadOnly(tp, 10);
        // The operator sees it by name in the tool's table and JSON.
        for (List<String> args : List.of(List.of("--describe", "--mirror", "deleted"), List.of("--describe", "--mirror", "deleted", "--json"))) {
            CliRun described = CliRun.run(destination.bootstrapServers(), args.toArray(String[]::new));
            assertEquals(0, described.exit(), described.err());
            assertTrue(described.out().contains("FAILED") && described.out().contains("SOURCE_TOPIC_DELETED: source topic deleted"),
                described.out());
        }
    }

    @Test
    @Order(4)
    void aRecreatedSourceTopicIsNeverCopiedOverTheMirroredHistory() throws Exception {
        TopicPartition tp = mirroredTopic("recreated", "recreated", 10, Map.of());
        mirrors.pauseMirrorTopics("recreated", List.of(tp.topic()), List.of()).all().get();
        MirrorAssertions.awaitState(mirrors, "recreated", tp.topic(), 1, PartitionState.PAUSED);
        try (Admin admin = source.admin()) {
            Uuid oldId = admin.describeTopics(List.of(tp.topic())).allTopicNames().get().get(tp.topic()).topicId();
            admin.deleteTopics(List.of(tp.topic())).all().get();
            TestUtils.waitFor(() -> {
                try {
                    Workloads.createTopics(admin, List.of(new NewTopic(tp.topic(), 1, (short) 1)));
                    return true;
                } catch (ExecutionException notYet) {
                    return false; // the deletion is still under way
                }
            }, MirrorAssertions.TIMEOUT, "the source topic could not be re-created");
            TestUtils.waitFor(() -> {
                try {
                    return !oldId.equals(admin.describeTopics(List.of(tp.topic())).allTopicNames().get().get(tp.topic()).topicId());
                } catch (ExecutionException notYet) {
                    return false; // the new topic's metadata has not reached the broker yet
                }
            }, MirrorAssertions.TIMEOUT, "the re-created source topic did not get a new id");
        }
        produce(tp.topic(), 30);
        mirrors.resumeMirrorTopics("recreated", List.of(tp.topic()), List.of()).all().get();

        awaitError("recreated", tp, PartitionState.FAILED, "SOURCE_TOPIC_ID_CHANGED: source topic recreated was deleted and re-created");
        List<String> mirrored = MirrorAssertions.readAll(destination, tp);
        assertKeptAndReadOnly(tp, 10);

        // A new leadership prepares the log again: its comparison refuses the new topic's batches instead of cutting.
        destination.restartBroker(destination.brokerIds().iterator().next());
        TestUtils.waitFor(() -> {
            String error = MirrorAssertions.describe(mirrors, "recreated", tp.topic(), 0).lastError();
            return error != null && error.startsWith("SOURCE_TOPIC_ID_CHANGED: ") && error.contains("batches are not compared");
        }, MirrorAssertions.TIMEOUT, "the preparation after the restart did not refuse the re-created topic by name");
        assertEquals(mirrored, MirrorAssertions.readAll(destination, tp), "the mirrored history is kept as it was");
        assertKeptAndReadOnly(tp, 10);
    }

    /**
     * A peer that answers like a source with a 2 GiB response size costs the destination closed connections only: the
     * command check of the controller reads no such response, and another mirror keeps mirroring.
     */
    @Test
    @Order(5)
    void aSourceThatAnnouncesTwoGibibytesCostsConnectionsNotTheBroker() throws Exception {
        TopicPartition healthy = mirroredTopic("beside-hostile", "beside-hostile", 5, Map.of());
        try (HostilePeer peer = HostilePeer.announcing(Integer.MAX_VALUE)) {
            Map<String, String> config = MirrorAssertions.mirrorConfig(source);
            config.put(MirrorConfig.BOOTSTRAP_SERVERS, peer.bootstrap());
            ExecutionException refused = assertThrows(ExecutionException.class,
                () -> mirrors.createClusterMirror("hostile", config).all().get());
            assertEquals(MirrorError.SOURCE_CLUSTER_UNREACHABLE,
                assertInstanceOf(ClusterMirrorException.class, refused.getCause()).error());
            assertTrue(peer.connectionsClosedByClient() >= 1,
                "the destination gave each connection to the peer up: " + peer.connectionsClosedByClient());
            produce(healthy.topic(), 5);
            MirrorAssertions.awaitCaughtUp(source, destination, healthy.topic(), 1);
        }
    }

    @Test
    @Order(6)
    void anUnreachableSourceIsReportedAndClearedOnceFetchingWorksAgain() throws Exception {
        TopicPartition tp = mirroredTopic("unreachable", "unreachable", 10, Map.of());
        int sourceBroker = source.brokerIds().iterator().next();
        source.shutdownBroker(sourceBroker);
        try {
            MirrorPartitionDescription d = awaitError("unreachable", tp, PartitionState.MIRRORING,
                "SOURCE_UNAVAILABLE: no fetch of unreachable-0 from the source succeeded for ");
            assertTrue(d.lastError().contains(" s (since "), d.lastError());
            MirrorPartitionDescription unknown = MirrorAssertions.describe(mirrors, "unreachable", tp.topic(), 0);
            long none = MirrorPartitionDescription.UNKNOWN;
            assertEquals(List.of(none, none, none), List.of(unknown.sourceEndOffset(), unknown.lag(), unknown.lagMs()),
                "a source that cannot be reached has no end, lag or age anyone knows, never a lag of 0: " + unknown);
            assertEquals(1.0, MirrorAssertions.mirrorMetric(destination, "partitions-source-unavailable", "unreachable"));
        } finally {
            source.startBroker(sourceBroker);
        }
        TestUtils.waitFor(() -> MirrorAssertions.describe(mirrors, "unreachable", tp.topic(), 0).lastError() == null,
            MirrorAssertions.TIMEOUT, "the SOURCE_UNAVAILABLE report did not clear");
        produce(tp.topic(), 5);
        MirrorAssertions.awaitCaughtUp(source, destination, tp.topic(), 1);
        MirrorAssertions.assertSameRecords(source, destination, tp.topic(), 1);
        assertNull(MirrorAssertions.describe(mirrors, "unreachable", tp.topic(), 0).lastError());
        assertEquals(0.0, MirrorAssertions.mirrorMetric(destination, "partitions-source-unavailable", "unreachable"));
    }
}
