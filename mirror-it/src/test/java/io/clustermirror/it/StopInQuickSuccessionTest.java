package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A STOP always completes: a 60-partition topic started and stopped several times in quick succession (stops that find
 * partitions queued for or in PREPARING, or still STOPPING from the previous stop) ends with every partition in the
 * requested state within a bound, and the final stop leaves each partition writable, with the barrier on every replica
 * right after what the source had committed below the truncation point.
 */
@MirrorClusterTest(source = "churn-source", destination = "churn-destination", destinationBrokers = 3)
class StopInQuickSuccessionTest {
    private static final int PARTITIONS = 60;
    /** How long the partitions may take to reach the state last requested (60 partitions, 3 brokers, 2 cores). */
    private static final Duration SETTLE = Duration.ofSeconds(60);
    private static final String MIRROR = "churn";
    private static final String TOPIC = "churn";

    @Test
    void everyPartitionEndsInTheRequestedStateAndTheLastStopLeavesTheBarrier(ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters)
            throws Exception {
        MirrorTestCluster source = clusters.source;
        MirrorTestCluster destination = clusters.destination;
        ClusterMirrorAdmin mirrors = clusters.mirrors;
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1)));
        }
        Workloads.writeToEveryPartition(source.bootstrapServers(), TOPIC, PARTITIONS, "committed", 3);
        // On every partition A's records, then B's, then A's commit: the source's last stable offset stops at B's first
        // record, so the mirror copies A's records without A's commit, a transaction that every stop truncates away.
        try (KafkaProducer<byte[], byte[]> a = Workloads.producer(source.bootstrapServers(), Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "churn-a"));
             KafkaProducer<byte[], byte[]> open = Workloads.producer(source.bootstrapServers(),
                 Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "churn-b"))) {
            a.initTransactions();
            open.initTransactions();
            a.beginTransaction();
            open.beginTransaction();
            for (int p = 0; p < PARTITIONS; p++) {
                Workloads.sendBatch(a, TOPIC, p, "a", 2);
                Workloads.sendBatch(open, TOPIC, p, "b", 2);
            }
            a.commitTransaction();
            mirrors.createClusterMirror(MIRROR, MirrorAssertions.mirrorConfig(source)).all().get();

            // Stops that find the partitions queued for or in PREPARING, then a start while they are STOPPING.
            for (int round = 0; round < 3; round++) {
                start(mirrors);
                stop(mirrors);
            }
            awaitAll(mirrors, PartitionState.STOPPED);
            start(mirrors);
            awaitAll(mirrors, PartitionState.MIRRORING);
            awaitMirroredToTheSourceLso(source, destination);
            // Stopped while mirroring, started again before the stop completed, stopped again.
            stop(mirrors);
            start(mirrors);
            stop(mirrors);
            awaitAll(mirrors, PartitionState.STOPPED);
            open.abortTransaction();
        }
        for (int p = 0; p < PARTITIONS; p++) {
            assertStoppedWithTheBarrier(source, destination, mirrors, new TopicPartition(TOPIC, p));
        }
    }

    private static void awaitMirroredToTheSourceLso(MirrorTestCluster source, MirrorTestCluster destination) throws Exception {
        try (Admin src = source.admin(); Admin dst = destination.admin()) {
            for (int p = 0; p < PARTITIONS; p++) {
                TopicPartition tp = new TopicPartition(TOPIC, p);
                long sourceLso = lastStableOffset(src, tp);
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(dst, tp) == sourceLso, MirrorAssertions.TIMEOUT,
                    "destination " + tp + " to mirror up to the source's last stable offset " + sourceLso);
            }
        }
    }

    private static long lastStableOffset(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
            .all().get().get(tp).offset();
    }

    /**
     * Starts the topic as soon as the controller accepts it: a START while a stop has not finished on every partition is
     * refused with MIRROR_TOPIC_NOT_STOPPED (its local writes could not be counted yet), and accepted once it has.
     */
    private static void start(ClusterMirrorAdmin mirrors) throws Exception {
        TestUtils.waitFor(() -> {
            try {
                mirrors.startMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
                return true;
            } catch (ExecutionException e) {
                if (e.getCause() instanceof ClusterMirrorException c && c.error() == MirrorError.MIRROR_TOPIC_NOT_STOPPED) {
                    return false;
                }
                throw e;
            }
        }, MirrorAssertions.TIMEOUT, "the controller to accept the START once the stop finished");
    }

    private static void stop(ClusterMirrorAdmin mirrors) throws Exception {
        assertEquals(List.of(TOPIC), mirrors.stopMirrorTopics(MIRROR, List.of(TOPIC), List.of()).topics().get());
    }

    private static void awaitAll(ClusterMirrorAdmin mirrors, PartitionState state) throws InterruptedException {
        try {
            TestUtils.waitFor(() -> states(mirrors).values().stream().filter(s -> s == state).count() == PARTITIONS, SETTLE,
                "every partition of " + TOPIC + " to reach " + state);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; partition states: " + statesOrError(mirrors), e);
        }
    }

    private static Map<Integer, PartitionState> states(ClusterMirrorAdmin mirrors) throws Exception {
        Map<Integer, PartitionState> out = new TreeMap<>();
        mirrors.describeClusterMirrors(List.of(MIRROR)).all().get().get(MIRROR).topics().stream()
            .filter(t -> t.topic().equals(TOPIC))
            .forEach(t -> t.partitions().forEach(p -> out.put(p.partition(), p.state())));
        return out;
    }

    private static String statesOrError(ClusterMirrorAdmin mirrors) {
        try {
            return states(mirrors).toString();
        } catch (Exception e) {
            return "describe failed: " + e;
        }
    }

    /**
     * The partition ends with the barrier on every replica, nothing of the truncated range is left anywhere, a consumer
     * reads exactly the source's committed records below the barrier, and a producer writes right after it.
     */
    private static void assertStoppedWithTheBarrier(MirrorTestCluster source, MirrorTestCluster destination,
                                                    ClusterMirrorAdmin mirrors, TopicPartition tp) throws Exception {
        MirrorPartitionDescription stopped = MirrorAssertions.describe(mirrors, MIRROR, TOPIC, tp.partition());
        long barrier = stopped.barrierOffset();
        assertEquals(3, barrier, "the last stop truncated A's transaction and wrote the barrier there: " + stopped);
        assertEquals(3, stopped.truncatedFromOffset(), "describe reports the truncation: " + stopped);
        try (Admin admin = destination.admin()) {
            assertEquals(barrier + 1, MirrorAssertions.endOffset(admin, tp), "the barrier ends " + tp);
            assertEquals(barrier + 1, lastStableOffset(admin, tp), "no transaction is left open on " + tp);
        }
        for (int broker : MirrorAssertions.replicasOf(destination, tp)) {
            TestUtils.waitFor(() -> {
                List<LogBatches.Batch> batches = LogBatches.read(destination.partitionDir(broker, tp), Long.MAX_VALUE);
                return !batches.isEmpty() && batches.get(batches.size() - 1).baseOffset() == barrier;
            }, MirrorAssertions.TIMEOUT, "replica of " + tp + " on broker " + broker + " did not get the barrier");
            List<LogBatches.Batch> batches = LogBatches.read(destination.partitionDir(broker, tp), Long.MAX_VALUE);
            assertTrue(batches.get(batches.size() - 1).isBarrier(), "barrier of " + tp + " on broker " + broker);
            assertTrue(batches.stream().filter(b -> b.lastOffset() >= barrier).count() == 1,
                "nothing of the truncated range is left of " + tp + " on broker " + broker + ": " + batches);
        }
        List<String> expected = new ArrayList<>(MirrorAssertions.readAll(source, tp).stream()
            .filter(r -> Long.parseLong(r.substring(0, r.indexOf(' '))) < barrier).toList());
        assertEquals(3, expected.size(), "the source's committed records of " + tp + " lie below the barrier");
        assertEquals(expected, MirrorAssertions.readAll(destination, tp), "records of " + tp);
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(destination.bootstrapServers(),
                Map.of(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 15_000,
                    ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000))) {
            assertEquals(barrier + 1, producer.send(new ProducerRecord<>(TOPIC, tp.partition(), null,
                Workloads.bytes("after-stop"))).get().offset(), "a write to " + tp + " lands right after the barrier");
        }
    }
}
