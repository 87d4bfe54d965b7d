package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.broker.partition.TestOnlyStopHold;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A stop whose leader dies, shuts down or loses its leadership in the middle (docs/reliability.md): the destination's
 * nodes are launched processes, and a test-only hold ({@link TestOnlyStopHold}) stops the leader's stop at one of its
 * steps, so that the fault hits exactly there: before the cut, between the cut and the barrier, right after the barrier.
 * Each case mirrors a partition whose end holds a committed transaction whose commit marker lies past the last stable
 * offset (it began before a transaction still open on the destination) and then stops it under that fault, while a
 * source producer keeps writing. Whatever leader finishes the stop, the barrier sits at the last stable offset the
 * destination had before the command, every batch below it is the source's, every committed record is readable, and
 * describe reports the one real cut.
 */
@Tag(ProcessCluster.TAG)
@MirrorClusterTest(topologies = "topologies")
class StopUnderFireTest {
    private static final String MIRROR = "fire";

    private static MirrorTestCluster source;
    private static ProcessCluster destination;
    private static ClusterMirrorAdmin mirrors;
    private static Path holdFile;

    /** What hits the stopping leader while its stop is held. */
    enum Fault {
        /** SIGKILL: nothing of a shutdown runs; another replica is elected once the node is fenced. */
        KILL,
        /**
         * SIGTERM: the broker shuts down while its stop is under way: the extension lets the stop go on while it closes, then
         * the controlled shutdown moves the leadership to another replica, which goes on from wherever the stop got.
         */
        TERMINATE,
        /** A preferred election moves the leadership to another replica; the old leader stays up and follows. */
        ELECTION
    }

    /** A launched destination of three nodes whose stops the test can hold ({@link TestOnlyStopHold}) at a file it names. */
    static ClusterPair.Topologies topologies() throws Exception {
        holdFile = Files.createTempDirectory("stop-under-fire-").resolve("hold");
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("fire-source").brokers(1).topology(),
            ProcessCluster.topology("fire-destination").combined(3).serverProperty("min.insync.replicas", "2")
                .jvmOptions("-D" + TestOnlyStopHold.PROPERTY + "=" + holdFile).build());
    }

    @BeforeAll
    static void createTheMirror(ClusterPair<MirrorTestCluster, ProcessCluster> clusters) throws Exception {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
        mirrors.createClusterMirror(MIRROR, MirrorAssertions.mirrorConfig(source)).all().get();
    }

    @AfterAll
    static void deleteTheHoldFile() throws Exception {
        Files.deleteIfExists(holdFile);
    }

    static Stream<Arguments> faults() {
        List<Arguments> cases = new ArrayList<>();
        for (Fault fault : Fault.values()) {
            for (TestOnlyStopHold.Step step : TestOnlyStopHold.Step.values()) {
                cases.add(Arguments.of(fault, step));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} at {1}")
    @MethodSource("faults")
    void theBarrierStaysAtTheLastStableOffsetSeenBeforeTheStop(Fault fault, TestOnlyStopHold.Step step) throws Exception {
        String topic = "fire-" + fault.name().toLowerCase(Locale.ROOT) + "-" + step.id();
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 1)));
        }
        Workloads.writeAllKinds(source.bootstrapServers(), topic, 1, 3);
        AtomicBoolean writing = new AtomicBoolean(true);
        try (KafkaProducer<byte[], byte[]> a = transactional(topic + "-a");
             KafkaProducer<byte[], byte[]> b = transactional(topic + "-b");
             KafkaProducer<byte[], byte[]> c = transactional(topic + "-c")) {
            // A begins, B begins, A commits, C begins, B commits; C stays open. The source's last stable offset stays at C's
            // first record, so the destination holds A with its marker and B without: the stop's cut at B's first record
            // removes A's marker too, although A committed, and A's records below the cut must stay.
            a.beginTransaction();
            Workloads.sendBatch(a, topic, 0, "a", 2);
            b.beginTransaction();
            Workloads.sendBatch(b, topic, 0, "b", 2);
            Workloads.sendBatch(a, topic, 0, "a-late", 1);
            a.commitTransaction();
            c.beginTransaction();
            long openFrom = Workloads.sendBatch(c, topic, 0, "c", 1).get(0).offset();
            b.commitTransaction();
            mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, MIRROR, topic, 1, PartitionState.MIRRORING);
            Thread writer = keepWriting(topic, writing);
            long lsoBefore;
            long endBefore;
            try (Admin admin = destination.admin()) {
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(admin, tp) == openFrom, MirrorAssertions.TIMEOUT,
                    "the destination to mirror " + tp + " up to the source's last stable offset " + openFrom);
                lsoBefore = MirrorAssertions.committedEnd(admin, tp);
                endBefore = MirrorAssertions.endOffset(admin, tp);
            }
            assertTrue(lsoBefore < endBefore, "the scene: B is open on the destination, [" + lsoBefore + ", " + endBefore + ")");

            int leader = destination.leaderOf(tp);
            Files.writeString(holdFile, tp + " " + step.id(), StandardCharsets.UTF_8);
            mirrors.stopMirrorTopics(MIRROR, List.of(topic), List.of()).topics().get();
            String held = "TEST-ONLY: the stop of " + tp + " holds at step " + step.id();
            TestUtils.waitFor(() -> destination.outputSinceLastStart(leader).contains(held), MirrorAssertions.TIMEOUT,
                "the stop of " + tp + " on broker " + leader + " to hold at " + step.id());
            hit(fault, leader, tp);
            MirrorAssertions.awaitState(mirrors, MIRROR, topic, 1, PartitionState.STOPPED);
            writing.set(false);
            writer.join(Duration.ofSeconds(30).toMillis());
            c.abortTransaction();

            MirrorPartitionDescription stopped = MirrorAssertions.describe(mirrors, MIRROR, topic, 0);
            assertEquals(lsoBefore, stopped.barrierOffset(), "the barrier follows the last stable offset seen before the stop: "
                + stopped);
            assertEquals(lsoBefore, stopped.truncatedFromOffset(), "the reported cut starts at the barrier: " + stopped);
            assertEquals(endBefore, stopped.truncatedToOffset(), "the reported cut ends where the mirrored log ended: " + stopped);
            assertBelowTheBarrierAsTheSource(tp, lsoBefore);
            assertEquals(committedOnTheSource(tp, lsoBefore), committedOnTheDestination(tp),
                "read_committed on the destination reads every committed source record below the barrier");
        } finally {
            writing.set(false);
            Files.deleteIfExists(holdFile);
        }
    }

    private static KafkaProducer<byte[], byte[]> transactional(String id) {
        KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(),
            Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id, ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 600_000));
        producer.initTransactions();
        return producer;
    }

    /** A source producer that writes on until told to stop: behind the open transaction, nothing of it is mirrored. */
    private static Thread keepWriting(String topic, AtomicBoolean writing) {
        Thread t = new Thread(() -> {
            try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(),
                    Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"))) {
                for (int i = 0; writing.get(); i++) {
                    producer.send(Workloads.record(topic, 0, "late", i));
                    if (i % 20 == 19) {
                        producer.flush();
                    }
                }
            }
        }, "stop-under-fire-writer");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Hits the held leader, lets the hold go and brings the node back, as an operator's restart would. */
    private static void hit(Fault fault, int leader, TopicPartition tp) throws Exception {
        switch (fault) {
            case KILL -> {
                destination.kill(leader);
                Files.deleteIfExists(holdFile);
                destination.start(leader);
            }
            case TERMINATE -> {
                destination.stop(leader);
                Files.deleteIfExists(holdFile);
                destination.start(leader);
            }
            case ELECTION -> {
                int next = Leadership.moveAway(destination, tp);
                Files.deleteIfExists(holdFile);
                assertFalse(next == leader, "the leadership moved");
            }
        }
    }

    /** Every batch below the barrier on every destination replica is the source's, and the barrier follows it. */
    private static void assertBelowTheBarrierAsTheSource(TopicPartition tp, long barrier) throws Exception {
        List<LogBatches.Batch> expected = LogBatches.read(source.partitionDir(source.leaderOf(tp), tp), 0, barrier);
        for (int broker : MirrorAssertions.replicasOf(destination, tp)) {
            TestUtils.waitFor(() -> {
                List<LogBatches.Batch> held = LogBatches.read(destination.partitionDir(broker, tp), 0, barrier + 1);
                return held.size() == expected.size() + 1 && held.get(held.size() - 1).isBarrier();
            }, MirrorAssertions.TIMEOUT, "the replica of " + tp + " on broker " + broker + " to end with the barrier at " + barrier);
            List<LogBatches.Batch> held = LogBatches.read(destination.partitionDir(broker, tp), 0, barrier + 1);
            assertEquals(expected, held.subList(0, held.size() - 1), "batches below the barrier on broker " + broker);
            assertEquals(barrier, held.get(held.size() - 1).baseOffset(), "the barrier on broker " + broker);
        }
    }

    /** The source's committed records below {@code end}, as a read_committed consumer reads them (key and value). */
    private static List<String> committedOnTheSource(TopicPartition tp, long end) throws Exception {
        return readCommitted(source.bootstrapServers(), tp, end);
    }

    private static List<String> committedOnTheDestination(TopicPartition tp) throws Exception {
        try (Admin admin = destination.admin()) {
            return readCommitted(destination.bootstrapServers(), tp, MirrorAssertions.committedEnd(admin, tp));
        }
    }

    private static List<String> readCommitted(String bootstrap, TopicPartition tp, long end) {
        Map<String, Object> props = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed", ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<String> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + MirrorAssertions.TIMEOUT.toMillis();
            while (consumer.position(tp) < end && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    if (r.offset() < end) {
                        records.add(r.offset() + ":" + text(r.key()) + "=" + text(r.value()));
                    }
                }
            }
            assertTrue(consumer.position(tp) >= end, "read " + tp + " up to " + end + " from " + bootstrap);
        }
        return records;
    }

    private static String text(byte[] b) {
        return b == null ? "null" : new String(b, StandardCharsets.UTF_8);
    }
}
