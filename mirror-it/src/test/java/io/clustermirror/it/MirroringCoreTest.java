package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mirroring core on real clusters (a 2-broker source, a 3-broker destination, shared by the tests; each
 * test has its own mirror and topics): identical offsets and bytes for every producer kind, codec and topic
 * shape, read-only mirror topics, leader changes on both sides, broker restarts, and bad input.
 */
@MirrorClusterTest(topologies = "topologies")
class MirroringCoreTest {
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;
    private static ClusterMirrorAdmin mirrors;

    /** A source of two brokers whose log cleaner runs often (compacted topics), a destination of three. */
    static ClusterPair.Topologies topologies() {
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("core-source").brokers(2)
            .brokerConfig("log.cleaner.backoff.ms", "200").topology(),
            MirrorTestCluster.builder().name("core-destination").brokers(3).topology());
    }

    @BeforeAll
    static void nameTheClusters() {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
    }

    private static void createSourceTopic(String topic, int partitions, Map<String, String> configs) throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, partitions, (short) 2).configs(configs)));
        }
    }

    private static void startMirror(String mirror, String... topics) throws Exception {
        mirrors.createClusterMirror(mirror, MirrorAssertions.mirrorConfig(source)).all().get();
        mirrors.startMirrorTopics(mirror, List.of(topics), List.of()).all().get();
    }

    private static MirrorError errorOf(ExecutionException e) {
        return assertInstanceOf(ClusterMirrorException.class, e.getCause(), String.valueOf(e.getCause())).error();
    }

    @Test
    void everyProducerKindCodecAndTopicShapeKeepsOffsetsAndBytes() throws Exception {
        createSourceTopic("mixed", 6, Map.of());
        Workloads.writeAllKinds(source.bootstrapServers(), "mixed", 6, 4);

        // A compacted topic after cleaning: whole batches gone, offsets with gaps.
        createSourceTopic("compacted", 1, Map.of("cleanup.policy", "compact", "segment.ms", "100",
            "min.cleanable.dirty.ratio", "0.01", "delete.retention.ms", "0", "min.compaction.lag.ms", "0"));
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of())) {
            for (int round = 0; round < 20; round++) {
                for (int k = 0; k < 5; k++) {
                    producer.send(new ProducerRecord<>("compacted", 0, Workloads.bytes("key-" + k), Workloads.bytes("round-" + round))).get();
                }
            }
        }
        TopicPartition compacted = new TopicPartition("compacted", 0);
        TestUtils.waitFor(() -> {
            // A later append rolls the segment that segment.ms aged; the cleaner then removes overwritten batches.
            try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of())) {
                producer.send(new ProducerRecord<>("compacted", 0, Workloads.bytes("key-roll"), Workloads.bytes("x"))).get();
            }
            List<LogBatches.Batch> batches = LogBatches.read(source.partitionDir(source.leaderOf(compacted), compacted), Long.MAX_VALUE);
            return batches.get(0).baseOffset() > 0;
        }, MirrorAssertions.TIMEOUT, "the source log cleaner did not compact 'compacted'");

        // A topic whose log start offset is above 0: at a batch boundary, inside a batch, and past every record (a source
        // whose records all expired; its mirror must end, and start, where the source does before any record arrives).
        createSourceTopic("trimmed", 3, Map.of());
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of(
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"));
             Admin admin = source.admin()) {
            for (int p = 0; p < 3; p++) {
                Workloads.sendBatch(producer, "trimmed", p, "t1", 10);
                Workloads.sendBatch(producer, "trimmed", p, "t2", 10);
            }
            admin.deleteRecords(Map.of(new TopicPartition("trimmed", 0), RecordsToDelete.beforeOffset(10),
                new TopicPartition("trimmed", 1), RecordsToDelete.beforeOffset(15),
                new TopicPartition("trimmed", 2), RecordsToDelete.beforeOffset(20))).all().get();
        }

        startMirror("identity", "mixed", "compacted", "trimmed");
        // trimmed-2 holds no record: caught up means its destination starts and ends at the source's 20. The next record
        // then lands at the same offset on both sides (and gives the log comparison below something to compare).
        MirrorAssertions.awaitCaughtUp(source, destination, "trimmed", 3);
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of())) {
            Workloads.sendBatch(producer, "trimmed", 2, "t3", 1);
        }
        for (String[] t : new String[][]{{"mixed", "6"}, {"compacted", "1"}, {"trimmed", "3"}}) {
            int partitions = Integer.parseInt(t[1]);
            MirrorAssertions.awaitCaughtUp(source, destination, t[0], partitions);
            MirrorAssertions.assertIdenticalLogs(source, destination, t[0], partitions);
            MirrorAssertions.assertSameRecords(source, destination, t[0], partitions);
        }
        try (Admin admin = destination.admin()) {
            assertEquals("compact", admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, "compacted")))
                .all().get().values().iterator().next().get("cleanup.policy").value(), "source topic configs are copied at start");
        }
        TestUtils.waitFor(() -> {
            ClusterMirrorDescription d = mirrors.describeClusterMirrors(List.of("identity")).all().get().get("identity");
            return d.topics().size() == 3 && d.topics().stream().allMatch(t -> t.partitions().stream()
                .allMatch(p -> p.state() == PartitionState.MIRRORING && p.lag() == 0 && p.lastError() == null));
        }, MirrorAssertions.TIMEOUT, "describe did not show every partition MIRRORING with lag 0");
    }

    @Test
    void mirrorTopicsAreReadOnlyWhileOtherTopicsAndAclsWorkAsUsual() throws Exception {
        createSourceTopic("readonly", 1, Map.of());
        Workloads.writeAllKinds(source.bootstrapServers(), "readonly", 1, 2);
        startMirror("readonly", "readonly");
        MirrorAssertions.awaitCaughtUp(source, destination, "readonly", 1);
        try (Admin admin = destination.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic("writable", 1, (short) 3)));
        }
        // The destination's own ACLs on ordinary topics: ControlPlaneAuthorizationTest, on a destination that authenticates
        // its clients (here every client is the PLAINTEXT listener's User:ANONYMOUS, a super user).
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(destination.bootstrapServers(), Map.of(
                ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000,
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000))) {
            ExecutionException denied = assertThrows(ExecutionException.class,
                () -> producer.send(new ProducerRecord<>("readonly", 0, null, Workloads.bytes("x"))).get());
            assertInstanceOf(TopicAuthorizationException.class, denied.getCause());
            assertEquals(0L, producer.send(new ProducerRecord<>("writable", 0, null, Workloads.bytes("x"))).get().offset());
        }
        TopicPartition tp = new TopicPartition("readonly", 0);
        try (Admin admin = destination.admin()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, "readonly");
            assertDenied(() -> admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(1))).all().get(), "DeleteRecords");
            assertDenied(() -> admin.createPartitions(Map.of("readonly", NewPartitions.increaseTo(2))).all().get(), "CreatePartitions");
            assertDenied(() -> admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                new ConfigEntry("retention.ms", "1000"), AlterConfigOp.OpType.SET)))).all().get(), "IncrementalAlterConfigs");
            assertDenied(() -> admin.deleteTopics(List.of("readonly")).all().get(), "DeleteTopics");
        }
        MirrorAssertions.assertIdenticalLogs(source, destination, "readonly", 1);
    }

    private interface AdminCall {
        void run() throws Exception;
    }

    private static void assertDenied(AdminCall call, String what) {
        ExecutionException e = assertThrows(ExecutionException.class, call::run, what + " on a mirror topic must fail");
        assertInstanceOf(TopicAuthorizationException.class, e.getCause(), what + ": " + e.getCause());
    }

    @Test
    void leaderChangesOnBothSidesAndABrokerRestartLoseNothingAndDuplicateNothing() throws Exception {
        createSourceTopic("moving", 3, Map.of());
        startMirror("moving", "moving");
        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicReference<Exception> producerError = new AtomicReference<>();
        Thread load = new Thread(() -> {
            try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of(
                    ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
                for (int i = 0; producing.get(); i++) {
                    producer.send(Workloads.record("moving", i % 3, "load", i)).get();
                }
            } catch (Exception e) {
                producerError.set(e);
            }
        }, "moving-load");
        load.start();
        try {
            TopicPartition tp = new TopicPartition("moving", 0);
            awaitDestinationProgress(tp, 50);
            int destinationLeader = destination.leaderOf(tp);
            destination.shutdownBroker(destinationLeader);
            TestUtils.waitFor(() -> destination.leaderOf(tp) != destinationLeader, MirrorAssertions.TIMEOUT, "no new destination leader");
            awaitDestinationProgress(tp, 50);
            int sourceLeader = source.leaderOf(tp);
            source.shutdownBroker(sourceLeader);
            awaitDestinationProgress(tp, 50);
            source.startBroker(sourceLeader);
            destination.startBroker(destinationLeader); // the extension re-attaches
            awaitDestinationProgress(tp, 50);
            int restarted = destination.leaderOf(new TopicPartition("moving", 1));
            destination.restartBroker(restarted);
            awaitDestinationProgress(tp, 50);
        } finally {
            producing.set(false);
            load.join();
        }
        assertNull(producerError.get(), "the source producer failed");
        MirrorAssertions.awaitCaughtUp(source, destination, "moving", 3);
        MirrorAssertions.assertIdenticalLogs(source, destination, "moving", 3);
        MirrorAssertions.assertSameRecords(source, destination, "moving", 3);
    }

    /** Waits until the destination partition's end offset grew by {@code records}. */
    private static void awaitDestinationProgress(TopicPartition tp, long records) throws Exception {
        try (Admin admin = destination.admin()) {
            long start = MirrorAssertions.endOffset(admin, tp);
            TestUtils.waitFor(() -> MirrorAssertions.endOffset(admin, tp) >= start + records, MirrorAssertions.TIMEOUT,
                "mirroring of " + tp + " made no progress from " + start);
        }
    }

    @Test
    void badInputGetsTheNamedErrorAndChangesNothing() throws Exception {
        createSourceTopic("claimed", 1, Map.of());
        mirrors.createClusterMirror("owner", MirrorAssertions.mirrorConfig(source)).all().get();
        mirrors.startMirrorTopics("owner", List.of("claimed"), List.of()).all().get();
        mirrors.createClusterMirror("other", MirrorAssertions.mirrorConfig(source)).all().get();
        Map<String, ClusterMirrorDescription> before = mirrors.describeClusterMirrors(List.of("owner", "other")).all().get();

        ExecutionException e = assertThrows(ExecutionException.class, () -> mirrors.describeClusterMirrors(List.of("ghost")).all().get());
        assertEquals(MirrorError.UNKNOWN_CLUSTER_MIRROR, errorOf(e));
        e = assertThrows(ExecutionException.class, () -> mirrors.startMirrorTopics("ghost", List.of("claimed"), List.of()).all().get());
        assertEquals(MirrorError.UNKNOWN_CLUSTER_MIRROR, errorOf(e));
        assertTrue(e.getCause().getMessage().contains("'ghost'"), e.getCause().getMessage());
        e = assertThrows(ExecutionException.class, () -> mirrors.createClusterMirror("owner", MirrorAssertions.mirrorConfig(source)).all().get());
        assertEquals(MirrorError.CLUSTER_MIRROR_ALREADY_EXISTS, errorOf(e));
        e = assertThrows(ExecutionException.class, () -> mirrors.createClusterMirror("nobootstrap", Map.of("mirror.fetch.max.wait.ms", "100")).all().get());
        assertEquals(MirrorError.INVALID_CONFIG, errorOf(e));
        assertTrue(e.getCause().getMessage().contains("bootstrap.servers"), e.getCause().getMessage());
        Map<String, String> unreachable = new HashMap<>(Map.of("bootstrap.servers", "127.0.0.1:1"));
        e = assertThrows(ExecutionException.class, () -> mirrors.createClusterMirror("unreachable", unreachable).all().get());
        assertEquals(MirrorError.SOURCE_CLUSTER_UNREACHABLE, errorOf(e));
        assertTrue(e.getCause().getMessage().contains("127.0.0.1:1"), e.getCause().getMessage());
        e = assertThrows(ExecutionException.class, () -> mirrors.startMirrorTopics("other", List.of("claimed"), List.of()).all().get());
        assertEquals(MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR, errorOf(e));
        assertTrue(e.getCause().getMessage().contains("'owner'"), e.getCause().getMessage());
        e = assertThrows(ExecutionException.class, () -> mirrors.deleteClusterMirror("owner").all().get());
        assertEquals(MirrorError.CLUSTER_MIRROR_NOT_EMPTY, errorOf(e));
        e = assertThrows(ExecutionException.class, () -> mirrors.startMirrorTopics("other", List.of("no-such-topic-.*"), List.of()).all().get());
        assertEquals(MirrorError.UNKNOWN_TOPIC_OR_PARTITION, errorOf(e));

        Map<String, ClusterMirrorDescription> after = mirrors.describeClusterMirrors(List.of("owner", "other")).all().get();
        assertEquals(before.keySet(), after.keySet());
        assertEquals(topicsOf(before.get("owner")), topicsOf(after.get("owner")));
        assertEquals(List.of(), topicsOf(after.get("other")), "failed commands added no topic");
        List<String> names = new java.util.ArrayList<>(mirrors.listClusterMirrors().names().get());
        assertTrue(names.containsAll(List.of("owner", "other")), names.toString());
        assertTrue(names.stream().noneMatch(n -> n.equals("nobootstrap") || n.equals("unreachable")), names.toString());
        try (Admin admin = destination.admin()) {
            assertTrue(!admin.listTopics().names().get().contains("no-such-topic-.*"));
        }
        assertNotEquals(PartitionState.FAILED, after.get("owner").topics().get(0).partitions().stream()
            .map(MirrorPartitionDescription::state).findFirst().orElse(PartitionState.UNKNOWN));
    }

    private static List<String> topicsOf(ClusterMirrorDescription d) {
        return d.topics().stream().map(t -> t.topic()).toList();
    }
}
