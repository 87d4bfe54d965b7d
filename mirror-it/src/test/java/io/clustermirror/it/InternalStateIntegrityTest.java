package io.clustermirror.it;

import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.compat.ResponseBound;
import io.clustermirror.common.image.MirrorImageReader;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mirror state in {@code __mirror_metadata} and {@code __mirror_state} cannot be corrupted by compaction, a wrong
 * config or the loss of the topics: a deposed leader's late state record never wins (live, after compaction, after a
 * restart), a wrong {@code cleanup.policy} is reported at start and stops the mirror controller, and losing the topics
 * keeps mirror topics read-only until the recovery of docs/operations.md is done. One broker on each side; the last test destroys
 * the destination's mirror state.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@MirrorClusterTest(topologies = "topologies")
class InternalStateIntegrityTest {
    private static final String MIRROR = "integrity";
    private static final String TOPIC = "integrity";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    /** A topic of the mirror that is stopped before the internal topics are lost one by one. */
    private static final String STOPPED_TOPIC = "integrity-stopped";

    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static int broker;

    /** A destination whose log cleaner runs every half second. */
    static ClusterPair.Topologies topologies() {
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("integrity-source").topology(),
            MirrorTestCluster.builder().name("integrity-destination").brokerConfig("log.cleaner.backoff.ms", "500").topology());
    }

    @BeforeAll
    static void mirrorTheTopic() throws Exception {
        broker = clusters.destination.brokerIds().iterator().next();
        try (Admin admin = clusters.source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(TOPIC, 1, (short) 1)));
        }
        Workloads.writeIdempotentAndTransactional(clusters.source.bootstrapServers(), TOPIC, "before");
        clusters.mirrors.createClusterMirror(MIRROR, MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, TOPIC, 1);
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, TOPIC, 1, PartitionState.MIRRORING);
    }

    /**
     * A state record of a lower leader epoch written after the current leader's (a deposed leader that did not know yet)
     * says STOPPED: it must not become the partition's state, neither live, nor for a reader of the compacted topic, nor
     * for the broker after a restart (which replays it).
     */
    @Test
    @Order(1)
    void aDeposedLeadersLateStateRecordNeverWins() throws Exception {
        clusters.destination.restartBroker(broker); // a leader epoch above 0, so that a lower one exists
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, TOPIC, 1, PartitionState.MIRRORING);
        int epoch = clusters.destination.broker(broker).leaderLogState(TP).orElseThrow().leaderEpoch();
        TestUtils.waitFor(() -> currentState().map(s -> s.leaderEpoch() == epoch).orElse(false), MirrorAssertions.TIMEOUT,
            "the leader at epoch " + epoch + " to record its state");
        PartitionStateRecord current = currentState().orElseThrow();
        PartitionStateRecord late = new PartitionStateRecord(MIRROR, TOPIC, 0, PartitionState.STOPPED, epoch - 1, broker,
            current.sourceTopicId(), current.lastMirroredOffset(), current.lastMirroredEpoch(), current.sourceEpochs(),
            current.sourceLogEndOffset(), current.destLogEndOffset(), null, -1, -1, -1, System.currentTimeMillis());
        send(late.logKey(), RecordCodec.encodeState(late));

        // Live: the broker has read the late record and kept the newer state.
        TestUtils.waitFor(() -> clusters.destination.mirrorImage(broker).stateLogKeysOf(late.key()).contains(late.logKey()),
            MirrorAssertions.TIMEOUT, "the broker to read the late record");
        assertEquals(epoch, currentState().orElseThrow().leaderEpoch());
        assertEquals(PartitionState.MIRRORING, MirrorAssertions.describe(clusters.mirrors, MIRROR, TOPIC, 0).state());

        // Compacted: the cleaner keeps the last record of each key; a reader of what is left decides the same.
        compactStatePartitions(List.of(late.logKey(), current.logKey()));
        // What a broker that starts now builds from the topics.
        PartitionStateRecord replayed = MirrorImageReader.read(clusters.destination.clientProperties(),
                new ResponseBound(BrokerClientConfigs.DEFAULT_SOURCE_MAX_RESPONSE_BYTES, "the destination", ""), MirrorAssertions.TIMEOUT)
            .partitionState(MIRROR, TOPIC, 0).orElseThrow();
        assertNotEquals(PartitionState.STOPPED, replayed.state(), "the late record won after compaction: " + replayed);
        assertTrue(replayed.leaderEpoch() >= epoch, "a lower epoch's record won after compaction: " + replayed);

        // Restarted: the broker replays the compacted topic and mirrors on; the topic stays read-only.
        clusters.destination.restartBroker(broker);
        assertNotEquals(PartitionState.STOPPED, currentState().orElseThrow().state());
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, TOPIC, 1, PartitionState.MIRRORING);
        Workloads.writeIdempotentAndTransactional(clusters.source.bootstrapServers(), TOPIC, "after-restart");
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, TOPIC, 1);
        assertProduceRefused();
    }

    /**
     * A retention policy on {@code __mirror_state} is reported at start, the controller does not run, topics stay read-only.
     * The same start gives a {@code __mirror_state} at the broker's segment size (as earlier versions created it) the
     * small segments that keep a replay of it short.
     */
    @Test
    @Order(2)
    void aWrongCleanupPolicyIsReportedAtStartAndStopsTheController() throws Exception {
        try (LogCapture logs = LogCapture.start()) {
            setStateConfig(TopicConfig.CLEANUP_POLICY_CONFIG, "compact,delete");
            resetStateConfig(TopicConfig.SEGMENT_BYTES_CONFIG);
            assertNotEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, stateConfig(TopicConfig.SEGMENT_BYTES_CONFIG).source());
            clusters.destination.restartBroker(broker);
            TestUtils.waitFor(() -> String.valueOf(InternalTopics.STATE_SEGMENT_BYTES).equals(
                    stateConfig(TopicConfig.SEGMENT_BYTES_CONFIG).value()), MirrorAssertions.TIMEOUT,
                "the broker to set the segment size of " + InternalTopics.STATE);
            assertEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, stateConfig(TopicConfig.SEGMENT_BYTES_CONFIG).source());
            TestUtils.waitFor(() -> logs.lines().stream().anyMatch(l -> l.startsWith("ERROR")
                    && l.contains("internal topic __mirror_state has cleanup.policy=compact,delete")
                    && l.contains("--entity-name __mirror_state --add-config cleanup.policy=compact")),
                MirrorAssertions.TIMEOUT, "the broker to report the wrong cleanup.policy of __mirror_state");
            TestUtils.waitFor(() -> logs.lines().stream().anyMatch(l -> l.startsWith("ERROR")
                    && l.contains("Cluster Mirror thread controller-") && l.contains("can lose mirror state")),
                MirrorAssertions.TIMEOUT, "the mirror controller to refuse to run");
            assertProduceRefused();
            assertEquals(PartitionState.MIRRORING, MirrorAssertions.describe(clusters.mirrors, MIRROR, TOPIC, 0).state());

            setStateConfig(TopicConfig.CLEANUP_POLICY_CONFIG, "compact");
            // The controller runs again by itself: a command is applied.
            clusters.mirrors.pauseMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
            MirrorAssertions.awaitState(clusters.mirrors, MIRROR, TOPIC, 1, PartitionState.PAUSED);
            clusters.mirrors.resumeMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
            MirrorAssertions.awaitState(clusters.mirrors, MIRROR, TOPIC, 1, PartitionState.MIRRORING);
        }
    }

    /**
     * Deleting {@code __mirror_state} alone loses the actual per-partition state only: the desired state in
     * {@code __mirror_metadata} still says which topics are STOPPED. The stopped topic, a normal topic since its stop, takes
     * every write throughout; the mirroring topic stays read-only; the leaders record their partitions' state again by
     * themselves, mirroring goes on, and a STOP works.
     */
    @Test
    @Order(3)
    void losingTheStateAloneKeepsStoppedTopicsWritableAndMirrorTopicsReadOnly() throws Exception {
        stoppedTopic(STOPPED_TOPIC);
        try (LogCapture logs = LogCapture.start()) {
            try (Admin admin = clusters.destination.admin()) {
                admin.deleteTopics(List.of(InternalTopics.STATE)).all().get();
            }
            checkWritesUntil(InternalStateIntegrityTest::stateRecordedAgain, "the leaders to record their partitions' state again");
            assertTrue(logs.lines().stream().anyMatch(l -> l.startsWith("ERROR") && l.contains("lost " + InternalTopics.STATE)
                    && l.contains("STOPPED topics stay writable")), "the loss is named: " + logs.lines());
        }
        Workloads.writeIdempotentAndTransactional(clusters.source.bootstrapServers(), TOPIC, "after-state-loss");
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, TOPIC, 1);
        MirrorAssertions.assertIdenticalLogs(clusters.source, clusters.destination, TOPIC, 1);
        clusters.mirrors.stopMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, TOPIC, 1, PartitionState.STOPPED);
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, TOPIC, 1, PartitionState.MIRRORING);
        assertProduceRefused();
    }

    /**
     * Losing {@code __mirror_metadata} alone loses the desired state: which topics are mirrored, and in which mirror. The
     * broker fails closed as after losing both: the mirroring topic is fenced (read-only until the recovery of docs/operations.md), the
     * stopped one, a normal topic since its stop, stays writable; the log names the loss.
     */
    @Test
    @Order(4)
    void losingTheMetadataAloneFencesMirrorTopicsAndLeavesStoppedOnesWritable() throws Exception {
        stoppedTopic(STOPPED_TOPIC);
        try (LogCapture logs = LogCapture.start()) {
            try (Admin admin = clusters.destination.admin()) {
                admin.deleteTopics(List.of(InternalTopics.METADATA)).all().get();
            }
            checkWritesUntil(() -> clusters.destination.mirrorImage(broker).fencedTopics().contains(TOPIC),
                "the broker to fence " + TOPIC);
            assertEquals(Set.of(TOPIC), clusters.destination.mirrorImage(broker).fencedTopics(), "only the mirroring topic");
            assertTrue(logs.lines().stream().anyMatch(l -> l.startsWith("ERROR") && l.contains("Cluster Mirror lost its state")
                && l.contains(InternalTopics.METADATA)), "the loss is named: " + logs.lines());
        }
        produce(STOPPED_TOPIC);
        assertProduceRefused();
    }

    /**
     * Deleting both internal topics keeps the mirror topic read-only, live and after a restart, and the recovery of docs/operations.md
     * ('Losing an internal topic') mirrors it again: restart, re-create the mirror, delete the fenced topic and start it.
     */
    @Test
    @Order(5)
    void deletingTheInternalTopicsKeepsMirrorTopicsReadOnlyUntilRecovered() throws Exception {
        try (Admin admin = clusters.destination.admin()) {
            // Those that exist: the test before lost one already (a producer may have re-created it since).
            Set<String> existing = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get();
            admin.deleteTopics(List.of(InternalTopics.METADATA, InternalTopics.STATE).stream().filter(existing::contains).toList())
                .all().get();
        }
        TestUtils.waitFor(() -> clusters.destination.mirrorImage(broker).fencedTopics().contains(TOPIC), MirrorAssertions.TIMEOUT,
            "the broker to fence " + TOPIC + " after the loss of the mirror state");
        assertTrue(clusters.destination.mirrorImage(broker).topic(TOPIC).isEmpty(), "the image no longer knows the topic");
        assertProduceRefused();
        assertEquals(1.0, fencedTopicsMetric());

        // Recovery, as docs/operations.md says. Internal topics a producer may have re-created meanwhile get the right configs.
        fixInternalTopicConfigs();
        clusters.destination.restartBroker(broker);
        assertTrue(clusters.destination.mirrorImage(broker).fencedTopics().contains(TOPIC), "the fence survives a restart");
        assertProduceRefused();
        clusters.mirrors.createClusterMirror(MIRROR, MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        try (Admin admin = clusters.destination.admin()) {
            admin.deleteTopics(List.of(TOPIC)).all().get(); // allowed for a fenced topic
            TestUtils.waitFor(() -> !admin.listTopics().names().get().contains(TOPIC), MirrorAssertions.TIMEOUT, TOPIC + " to be deleted");
        }
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, TOPIC, 1);
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, TOPIC, 1, PartitionState.MIRRORING);
        MirrorAssertions.assertIdenticalLogs(clusters.source, clusters.destination, TOPIC, 1);
        TestUtils.waitFor(() -> clusters.destination.mirrorImage(broker).fencedTopics().isEmpty(), MirrorAssertions.TIMEOUT,
            "the fence to lift once the new state knows " + TOPIC);
        assertProduceRefused(); // a mirror topic again
        clusters.mirrors.stopMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, TOPIC, 1, PartitionState.STOPPED);
        TestUtils.waitFor(() -> {
            try {
                produce();
                return true;
            } catch (ExecutionException e) {
                return false;
            }
        }, MirrorAssertions.TIMEOUT, "a stopped topic to take writes");
    }

    /** A topic of the mirror, mirrored, then stopped (once: later calls find it stopped). */
    private static void stoppedTopic(String topic) throws Exception {
        try (Admin admin = clusters.source.admin()) {
            if (admin.listTopics().names().get().contains(topic)) {
                return;
            }
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 1)));
        }
        Workloads.writeIdempotentAndTransactional(clusters.source.bootstrapServers(), topic, "before-stop");
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, topic, 1);
        clusters.mirrors.stopMirrorTopics(MIRROR, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, topic, 1, PartitionState.STOPPED);
        TestUtils.waitFor(() -> {
            try {
                produce(topic);
                return true;
            } catch (ExecutionException e) {
                return false;
            }
        }, MirrorAssertions.TIMEOUT, "the stopped topic to take writes");
    }

    /**
     * Checks, again and again until {@code done} holds (at least ten times), that a write to the stopped topic succeeds
     * and one to the mirroring topic is refused; fails naming the checks that did not hold.
     */
    private static void checkWritesUntil(TestUtils.Condition done, String what) throws Exception {
        List<String> failedChecks = new ArrayList<>();
        int[] checks = {0};
        TestUtils.waitFor(() -> {
            checks[0]++;
            checkWritable(STOPPED_TOPIC, true, failedChecks);
            checkWritable(TOPIC, false, failedChecks);
            return checks[0] >= 10 && done.test();
        }, MirrorAssertions.TIMEOUT, () -> what + "; " + failedChecks.size() + " of " + checks[0] + " checks failed, the first: "
            + failedChecks.stream().findFirst().orElse("none"));
        assertEquals(List.of(), failedChecks, "every check of " + checks[0]);
    }

    /** One check that a write to {@code topic} succeeds (or is refused, if not {@code writable}); a failed one is added to {@code failed}. */
    private static void checkWritable(String topic, boolean writable, List<String> failed) throws Exception {
        try {
            produce(topic);
            if (!writable) {
                failed.add("a write to " + topic + " was accepted");
            }
        } catch (ExecutionException e) {
            if (writable || !(e.getCause() instanceof TopicAuthorizationException)) {
                failed.add("a write to " + topic + " failed: " + e.getCause());
            }
        }
    }

    /** {@code __mirror_state} holds the partitions' states again: the stopped topic STOPPED, the mirroring one MIRRORING. */
    private static boolean stateRecordedAgain() throws Exception {
        io.clustermirror.common.image.MirrorImage read = MirrorImageReader.read(clusters.destination.clientProperties(),
            new ResponseBound(BrokerClientConfigs.DEFAULT_SOURCE_MAX_RESPONSE_BYTES, "the destination", ""), MirrorAssertions.TIMEOUT);
        return read.partitionState(MIRROR, STOPPED_TOPIC, 0).map(s -> s.state() == PartitionState.STOPPED).orElse(false)
            && read.partitionState(MIRROR, TOPIC, 0).map(s -> s.state() == PartitionState.MIRRORING).orElse(false);
    }

    private static java.util.Optional<PartitionStateRecord> currentState() {
        return clusters.destination.mirrorImage(broker).partitionState(MIRROR, TOPIC, 0);
    }

    private static void send(String key, byte[] value) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(),
                Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
            producer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(key), value)).get();
        }
    }

    /**
     * Makes the log cleaner compact the {@code __mirror_state} partitions of the given keys: small segments, any dirty
     * ratio, then a probe key written twice to each, until the cleaner has removed the probe's first record.
     */
    private static void compactStatePartitions(Collection<String> keys) throws Exception {
        Set<Integer> partitions = new java.util.TreeSet<>();
        keys.forEach(k -> partitions.add(BuiltInPartitioner.partitionForKey(RecordCodec.encodeKey(k), InternalTopics.STATE_PARTITIONS)));
        setStateConfig("segment.ms", "100");
        setStateConfig("min.cleanable.dirty.ratio", "0.01");
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(),
                Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
            for (int p : partitions) {
                for (int i = 0; i < 2; i++) {
                    producer.send(new ProducerRecord<>(InternalTopics.STATE, p, RecordCodec.encodeKey("compaction-probe"), null)).get();
                }
            }
            for (int p : partitions) {
                TopicPartition tp = new TopicPartition(InternalTopics.STATE, p);
                // Each write after segment.ms rolls a segment, which makes the one before it cleanable.
                TestUtils.waitFor(() -> {
                    producer.send(new ProducerRecord<>(InternalTopics.STATE, p, RecordCodec.encodeKey("compaction-filler"), null)).get();
                    return keysIn(tp).stream().filter("compaction-probe"::equals).count() == 1;
                }, MirrorAssertions.TIMEOUT, "the log cleaner to compact " + tp);
            }
        } finally {
            resetStateConfig("segment.ms");
            resetStateConfig("min.cleanable.dirty.ratio");
        }
    }

    /** The keys of a partition's records, from its start. */
    private static List<String> keysIn(TopicPartition tp) {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            List<String> keys = new ArrayList<>();
            while (consumer.position(tp) < end) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> keys.add(RecordCodec.decodeKey(r.key())));
            }
            return keys;
        }
    }

    private static KafkaConsumer<byte[], byte[]> consumer() {
        return new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, clusters.destination.bootstrapServers(),
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed", ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false),
            new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private static ConfigEntry stateConfig(String name) throws Exception {
        ConfigResource state = new ConfigResource(ConfigResource.Type.TOPIC, InternalTopics.STATE);
        try (Admin admin = clusters.destination.admin()) {
            return admin.describeConfigs(List.of(state)).all().get().get(state).get(name);
        }
    }

    private static void setStateConfig(String name, String value) throws Exception {
        alterStateConfig(new AlterConfigOp(new ConfigEntry(name, value), AlterConfigOp.OpType.SET));
    }

    private static void resetStateConfig(String name) throws Exception {
        alterStateConfig(new AlterConfigOp(new ConfigEntry(name, null), AlterConfigOp.OpType.DELETE));
    }

    private static void alterStateConfig(AlterConfigOp op) throws Exception {
        try (Admin admin = clusters.destination.admin()) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, InternalTopics.STATE), List.of(op)))
                .all().get();
        }
    }

    /** The two state topics exist with the configs the extension needs (as the recovery of docs/operations.md says). */
    private static void fixInternalTopicConfigs() throws Exception {
        try (Admin admin = clusters.destination.admin()) {
            Set<String> existing = admin.listTopics().names().get();
            for (String topic : List.of(InternalTopics.METADATA, InternalTopics.STATE)) {
                NewTopic expected = InternalTopics.newTopic(topic, 1);
                if (existing.contains(topic)) {
                    List<AlterConfigOp> ops = expected.configs().entrySet().stream()
                        .map(e -> new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET)).toList();
                    admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic), ops)).all().get();
                }
            }
        }
    }

    private static void produce() throws Exception {
        produce(TOPIC);
    }

    private static void produce(String topic) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(), Map.of(
                ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000,
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000))) {
            producer.send(Workloads.record(topic, 0, "local", 0)).get();
        }
    }

    private static void assertProduceRefused() {
        ExecutionException refused = assertThrows(ExecutionException.class, InternalStateIntegrityTest::produce);
        assertInstanceOf(TopicAuthorizationException.class, refused.getCause(), () -> "refused with " + refused.getCause());
    }

    private static double fencedTopicsMetric() {
        return clusters.destination.broker(broker).metrics().metrics().entrySet().stream()
            .filter(e -> e.getKey().group().equals("cluster-mirror") && e.getKey().name().equals("fenced-topics"))
            .map(e -> ((Number) e.getValue().metricValue()).doubleValue()).findFirst().orElse(-1.0);
    }
}
