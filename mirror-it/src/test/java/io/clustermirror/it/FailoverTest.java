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
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
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
 * Stop (failover) on real clusters: truncation to the last stable offset, the MIRROR_PID_RESET barrier on every
 * replica, pause/resume and delete. Local producers whose ids collide with mirrored ones: {@link ProducerIdCollisionTest}.
 */
@MirrorClusterTest(source = "failover-source", destination = "failover-destination", destinationBrokers = 3)
class FailoverTest {
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

    private static void createSourceTopic(String topic, int partitions) throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, partitions, (short) 1)));
        }
    }

    private static long lastStableOffset(MirrorTestCluster cluster, TopicPartition tp) throws Exception {
        try (Admin admin = cluster.admin()) {
            return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                .all().get().get(tp).offset();
        }
    }

    private static MirrorPartitionDescription describe(String mirror, String topic, int partition) throws Exception {
        return MirrorAssertions.describe(mirrors, mirror, topic, partition);
    }

    private static void awaitState(String mirror, String topic, int partitions, PartitionState state) throws InterruptedException {
        MirrorAssertions.awaitState(mirrors, mirror, topic, partitions, state);
    }

    private static KafkaProducer<byte[], byte[]> destinationProducer(Map<String, Object> extra) {
        Map<String, Object> props = new java.util.HashMap<>(Map.of(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000,
            ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 15_000, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000));
        props.putAll(extra);
        return Workloads.producer(destination.bootstrapServers(), props);
    }

    private static void assertWriteDenied(String topic) {
        try (KafkaProducer<byte[], byte[]> producer = destinationProducer(Map.of())) {
            ExecutionException e = assertThrows(ExecutionException.class,
                () -> producer.send(new ProducerRecord<>(topic, 0, null, Workloads.bytes("x"))).get());
            assertInstanceOf(TopicAuthorizationException.class, e.getCause());
        }
    }

    @Test
    void stopTruncatesToTheLastStableOffsetWritesTheBarrierAndMakesTheTopicWritable() throws Exception {
        String topic = "txn";
        int staleReplica;
        TopicPartition tp = new TopicPartition(topic, 0);
        createSourceTopic(topic, 1);
        try (KafkaProducer<byte[], byte[]> committed = Workloads.producer(source.bootstrapServers(), Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "c"));
             KafkaProducer<byte[], byte[]> a = Workloads.producer(source.bootstrapServers(), Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "a"));
             KafkaProducer<byte[], byte[]> b = Workloads.producer(source.bootstrapServers(), Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "b"))) {
            committed.initTransactions();
            a.initTransactions();
            b.initTransactions();
            for (int t = 0; t < 3; t++) {
                committed.beginTransaction();
                Workloads.sendBatch(committed, topic, 0, "committed" + t, 4);
                committed.commitTransaction();
            }
            // A's transaction starts first; B's is still open when A commits, so the source's LSO stops at B's first
            // offset: the mirror copies A's records but not A's commit marker, an open transaction on the destination.
            a.beginTransaction();
            Workloads.sendBatch(a, topic, 0, "a", 3);
            b.beginTransaction();
            Workloads.sendBatch(b, topic, 0, "b", 3);
            a.commitTransaction();

            mirrors.createClusterMirror("failover", MirrorAssertions.mirrorConfig(source)).all().get();
            mirrors.startMirrorTopics("failover", List.of(topic), List.of()).all().get();
            long sourceLso = lastStableOffset(source, tp);
            try (Admin admin = destination.admin()) {
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(admin, tp) == sourceLso, MirrorAssertions.TIMEOUT,
                    "destination did not mirror up to the source LSO " + sourceLso);
            }
            long destinationLsoBefore = lastStableOffset(destination, tp);
            assertTrue(destinationLsoBefore < sourceLso, "A's transaction is open on the destination: LSO " + destinationLsoBefore);
            assertWriteDenied(topic);
            // A follower that holds the open transaction's records is out of the ISR during the stop.
            int leader = destination.leaderOf(tp);
            for (int broker : MirrorAssertions.replicasOf(destination, tp)) {
                TestUtils.waitFor(() -> LogBatches.read(destination.partitionDir(broker, tp), Long.MAX_VALUE).size()
                    == LogBatches.read(destination.partitionDir(leader, tp), Long.MAX_VALUE).size(), MirrorAssertions.TIMEOUT,
                    "replica on broker " + broker + " did not replicate the mirrored data");
            }
            staleReplica = MirrorAssertions.replicasOf(destination, tp).stream().filter(id -> id != leader).findFirst().orElseThrow();
            destination.shutdownBroker(staleReplica);

            assertEquals(List.of(topic), mirrors.stopMirrorTopics("failover", List.of(topic), List.of()).topics().get());
            awaitState("failover", topic, 1, PartitionState.STOPPED);
            b.abortTransaction();
        }
        MirrorPartitionDescription stopped = describe("failover", topic, 0);
        long barrier = stopped.barrierOffset();
        assertEquals(lastStableOffsetOfTruncation(stopped), barrier, "the barrier follows the last record kept");
        assertTrue(stopped.truncatedFromOffset() >= 0 && stopped.truncatedToOffset() > stopped.truncatedFromOffset(),
            "describe reports the truncated range: " + stopped);
        try (Admin admin = destination.admin()) {
            long end = MirrorAssertions.endOffset(admin, tp);
            assertEquals(barrier + 1, end);
            assertEquals(end, lastStableOffset(destination, tp), "no transaction is left open");
        }
        String sourceClusterId;
        try (Admin admin = source.admin()) {
            sourceClusterId = admin.describeCluster().clusterId().get();
        }
        // The replica that missed the stop's truncation is truncated to the barrier offset when it returns: the stop handed
        // the leadership to an in-sync replica, so the barrier starts a new leader epoch that Kafka's divergence check sees.
        destination.startBroker(staleReplica);
        for (int broker : MirrorAssertions.replicasOf(destination, tp)) {
            TestUtils.waitFor(() -> {
                List<LogBatches.Batch> batches = LogBatches.read(destination.partitionDir(broker, tp), Long.MAX_VALUE);
                return !batches.isEmpty() && batches.get(batches.size() - 1).baseOffset() == barrier;
            }, MirrorAssertions.TIMEOUT, "replica on broker " + broker + " did not get the barrier");
            List<LogBatches.Batch> batches = LogBatches.read(destination.partitionDir(broker, tp), Long.MAX_VALUE);
            LogBatches.Batch last = batches.get(batches.size() - 1);
            assertTrue(last.isBarrier() && last.producerId() == -1, "barrier on broker " + broker + ": " + last);
            assertEquals(sourceClusterId, last.barrierSourceClusterId());
            assertTrue(batches.stream().noneMatch(x -> x.lastOffset() >= stopped.truncatedFromOffset() && x.baseOffset() < barrier),
                "nothing of the truncated range is left on broker " + broker);
        }
        // Consumers see exactly the source's committed records below the truncation point.
        List<String> expected = MirrorAssertions.readAll(source, tp).stream()
            .filter(r -> Long.parseLong(r.substring(0, r.indexOf(' '))) < stopped.truncatedFromOffset()).toList();
        assertEquals(expected, MirrorAssertions.readAll(destination, tp));
        try (KafkaProducer<byte[], byte[]> producer = destinationProducer(Map.of())) {
            RecordMetadata md = producer.send(new ProducerRecord<>(topic, 0, null, Workloads.bytes("after-failover"))).get();
            assertEquals(barrier + 1, md.offset());
        }
    }

    /**
     * A transaction that began below the cut and was aborted above it stays aborted: the cut removes its abort marker,
     * and without one its records below the cut would read as committed once the barrier clears the producer state.
     */
    @Test
    void aTransactionAbortedAboveTheCutStaysInvisibleAfterTheStop() throws Exception {
        String topic = "aborted-across-the-cut";
        TopicPartition tp = new TopicPartition(topic, 0);
        createSourceTopic(topic, 1);
        try (KafkaProducer<byte[], byte[]> a = Workloads.producer(source.bootstrapServers(), Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "abort-a"));
             KafkaProducer<byte[], byte[]> b = Workloads.producer(source.bootstrapServers(), Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "abort-b"));
             KafkaProducer<byte[], byte[]> open = Workloads.producer(source.bootstrapServers(), Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "abort-open"))) {
            a.initTransactions();
            b.initTransactions();
            open.initTransactions();
            a.beginTransaction();
            Workloads.sendBatch(a, topic, 0, "committed", 2);
            a.commitTransaction();
            // A begins, then B; A aborts; a third transaction begins, then B commits. The source's last stable offset is
            // the open transaction's first offset, so the destination holds A's abort marker but not B's commit marker:
            // B is open there, and the destination's last stable offset (the stop's cut) is B's first offset, above A's
            // records and below A's abort marker.
            a.beginTransaction();
            Workloads.sendBatch(a, topic, 0, "aborted", 2);
            b.beginTransaction();
            Workloads.sendBatch(b, topic, 0, "b", 2);
            a.abortTransaction();
            open.beginTransaction();
            Workloads.sendBatch(open, topic, 0, "open", 1);
            b.commitTransaction();

            mirrors.createClusterMirror("aborted-across", MirrorAssertions.mirrorConfig(source)).all().get();
            mirrors.startMirrorTopics("aborted-across", List.of(topic), List.of()).all().get();
            long sourceLso = lastStableOffset(source, tp);
            try (Admin admin = destination.admin()) {
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(admin, tp) >= sourceLso, MirrorAssertions.TIMEOUT,
                    "destination did not mirror up to the source LSO " + sourceLso);
            }
            assertEquals(List.of(topic), mirrors.stopMirrorTopics("aborted-across", List.of(topic), List.of()).topics().get());
            awaitState("aborted-across", topic, 1, PartitionState.STOPPED);
            open.abortTransaction();
        }
        MirrorPartitionDescription stopped = describe("aborted-across", topic, 0);
        assertTrue(stopped.truncatedFromOffset() >= 0, "the stop cut B's open transaction: " + stopped);
        List<String> expected = MirrorAssertions.readAll(source, tp).stream()
            .filter(r -> Long.parseLong(r.substring(0, r.indexOf(' '))) < stopped.truncatedFromOffset()).toList();
        assertTrue(expected.stream().noneMatch(r -> r.contains("aborted")), "the source never shows A's records: " + expected);
        assertEquals(expected, MirrorAssertions.readAll(destination, tp), "read_committed on the destination after the stop");
    }

    /** The barrier sits where the truncation started, or at the old end when nothing was truncated. */
    private static long lastStableOffsetOfTruncation(MirrorPartitionDescription d) {
        return d.truncatedFromOffset() >= 0 ? d.truncatedFromOffset() : d.barrierOffset();
    }

    /** The number of partitions the mirror's fetchers hold on each destination broker (Kafka metrics registry). */
    private static long fetchedPartitions(String mirror) {
        long total = 0;
        for (int id : destination.brokerIds()) {
            org.apache.kafka.common.Metric m = destination.broker(id).metrics().metric(
                new org.apache.kafka.common.MetricName("partitions", "cluster-mirror", "", Map.of("mirror", mirror)));
            total += m == null ? 0 : ((Number) m.metricValue()).longValue();
        }
        return total;
    }

    @Test
    void pauseAndResumeUnderLoadKeepIdentityAndPausedTopicsStayReadOnly() throws Exception {
        String topic = "pausing";
        createSourceTopic(topic, 2);
        Workloads.writeAllKinds(source.bootstrapServers(), topic, 2, 3);
        mirrors.createClusterMirror("pausing", MirrorAssertions.mirrorConfig(source)).all().get();
        mirrors.startMirrorTopics("pausing", List.of(topic), List.of()).all().get();
        java.util.concurrent.atomic.AtomicBoolean loading = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicReference<Exception> loadError = new java.util.concurrent.atomic.AtomicReference<>();
        Thread load = new Thread(() -> {
            try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of(
                    ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd"))) {
                for (int i = 0; loading.get(); i++) {
                    producer.send(Workloads.record(topic, i % 2, "load", i)).get();
                }
            } catch (Exception e) {
                loadError.set(e);
            }
        }, "pause-load");
        load.start();
        TopicPartition tp = new TopicPartition(topic, 0);
        try {
            TestUtils.waitFor(() -> fetchedPartitions("pausing") == 2, MirrorAssertions.TIMEOUT, "both partitions fetched");
            mirrors.pauseMirrorTopics("pausing", List.of(topic), List.of()).all().get();
            awaitState("pausing", topic, 2, PartitionState.PAUSED);
            assertEquals(0, fetchedPartitions("pausing"), "a paused partition is in no fetcher, so nothing fetches it");
            assertWriteDenied(topic);
            long pausedEnd;
            try (Admin admin = destination.admin()) {
                pausedEnd = MirrorAssertions.endOffset(admin, tp);
            }
            Workloads.writeAllKinds(source.bootstrapServers(), topic, 2, 3); // while the load goes on too
            ExecutionException notPaused = assertThrows(ExecutionException.class,
                () -> mirrors.pauseMirrorTopics("pausing", List.of(topic), List.of()).all().get());
            assertEquals(MirrorError.MIRROR_TOPIC_NOT_MIRRORING, ((ClusterMirrorException) notPaused.getCause()).error());
            try (Admin admin = destination.admin()) {
                assertEquals(pausedEnd, MirrorAssertions.endOffset(admin, tp), "a paused partition copies nothing");
            }
            assertEquals(0, fetchedPartitions("pausing"));
            mirrors.resumeMirrorTopics("pausing", List.of(topic), List.of()).all().get();
            ExecutionException notResumable = assertThrows(ExecutionException.class,
                () -> mirrors.resumeMirrorTopics("pausing", List.of(topic), List.of()).all().get());
            assertEquals(MirrorError.MIRROR_TOPIC_NOT_PAUSED, ((ClusterMirrorException) notResumable.getCause()).error());
            try (Admin admin = destination.admin()) {
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(admin, tp) > pausedEnd, MirrorAssertions.TIMEOUT, "no progress after resume");
            }
        } finally {
            loading.set(false);
            load.join();
        }
        assertEquals(null, loadError.get(), "the source load failed");
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 2);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic, 2);
        MirrorAssertions.assertSameRecords(source, destination, topic, 2);
    }

    @Test
    void aMirrorIsDeletedOnlyWhenAllItsTopicsStoppedAndItsNameCanBeReused() throws Exception {
        String topic = "deleting";
        createSourceTopic(topic, 1);
        Workloads.writeAllKinds(source.bootstrapServers(), topic, 1, 2);
        mirrors.createClusterMirror("deleting", MirrorAssertions.mirrorConfig(source)).all().get();
        mirrors.startMirrorTopics("deleting", List.of(topic), List.of()).all().get();
        ExecutionException e = assertThrows(ExecutionException.class, () -> mirrors.deleteClusterMirror("deleting").all().get());
        assertEquals(MirrorError.CLUSTER_MIRROR_NOT_EMPTY, ((ClusterMirrorException) e.getCause()).error());
        mirrors.stopMirrorTopics("deleting", List.of(".*"), List.of()).all().get();
        awaitState("deleting", topic, 1, PartitionState.STOPPED);
        mirrors.deleteClusterMirror("deleting").all().get();
        assertTrue(!mirrors.listClusterMirrors().names().get().contains("deleting"));
        // The name is free again, and the stopped topic is an ordinary topic that is no longer in any mirror.
        mirrors.createClusterMirror("deleting", MirrorAssertions.mirrorConfig(source)).all().get();
        String again = "deleting-again";
        createSourceTopic(again, 1);
        Workloads.writeAllKinds(source.bootstrapServers(), again, 1, 2);
        mirrors.startMirrorTopics("deleting", List.of(again), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, again, 1);
        MirrorAssertions.assertIdenticalLogs(source, destination, again, 1);
        try (KafkaProducer<byte[], byte[]> producer = destinationProducer(Map.of())) {
            producer.send(new ProducerRecord<>(topic, 0, null, Workloads.bytes("still-writable"))).get();
        }
    }
}
