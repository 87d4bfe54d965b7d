package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.MirrorPartitionDescription;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replica that missed a stop never brings its stale records back, on launched processes: a follower is killed
 * (SIGKILL) while it holds a mirrored open transaction, the topic is stopped (the stop truncates that transaction and
 * writes the barrier), local producers write, and the follower restarts on its old log. As soon as it is in the ISR the
 * two other replicas are killed: it leads with the barrier, every local write and nothing of the truncated range, and a
 * consumer reads exactly that; the other replicas, back, hold the same batches with the same leader epochs.
 */
@Tag(ProcessCluster.TAG)
class MissedStopTest {
    private static final Logger log = LoggerFactory.getLogger(MissedStopTest.class);
    private static final String TOPIC = "missed-stop";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @Test
    void aReplicaThatMissedTheStopIsTruncatedByKafkaWhenItReturns() throws Exception {
        try (MirrorTestCluster source = MirrorTestCluster.builder().name("missed-stop-source").brokers(1).start();
             // Five voters: the quorum survives the death of two of the partition's three replicas.
             ProcessCluster destination = ProcessCluster.start("missed-stop-destination", 5);
             ClusterMirrorAdmin mirrors = ClusterMirrorAdmin.create(destination.clientProperties())) {
            try (Admin admin = source.admin()) {
                Workloads.createTopics(admin, List.of(new NewTopic(TOPIC, 1, (short) 1)));
            }
            Workloads.writeToEveryPartition(source.bootstrapServers(), TOPIC, 1, "committed", 3);
            int stale;
            // A's records, then B's, then A's commit: the mirror copies A's records without the commit, a transaction the
            // stop truncates away.
            try (KafkaProducer<byte[], byte[]> a = Workloads.producer(source.bootstrapServers(), Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "missed-a"));
                 KafkaProducer<byte[], byte[]> b = Workloads.producer(source.bootstrapServers(), Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "missed-b"))) {
                a.initTransactions();
                b.initTransactions();
                a.beginTransaction();
                Workloads.sendBatch(a, TOPIC, 0, "a", 3);
                b.beginTransaction();
                Workloads.sendBatch(b, TOPIC, 0, "b", 3);
                a.commitTransaction();
                mirrors.createClusterMirror(TOPIC, MirrorAssertions.mirrorConfig(source)).all().get();
                mirrors.startMirrorTopics(TOPIC, List.of(TOPIC), List.of()).all().get();
                long sourceLso;
                try (Admin admin = source.admin()) {
                    sourceLso = lastStableOffset(admin);
                }
                try (Admin admin = destination.admin()) {
                    TestUtils.waitFor(() -> MirrorAssertions.endOffset(admin, TP) == sourceLso, MirrorAssertions.TIMEOUT,
                        "the destination to mirror up to the source's last stable offset " + sourceLso);
                }
                int leader = destination.leaderOf(TP);
                for (int node : MirrorAssertions.replicasOf(destination, TP)) {
                    TestUtils.waitFor(() -> LogBatches.read(destination.partitionDir(node, TP), Long.MAX_VALUE).size()
                        == LogBatches.read(destination.partitionDir(leader, TP), Long.MAX_VALUE).size(), MirrorAssertions.TIMEOUT,
                        "the replica on node " + node + " to hold the mirrored open transaction");
                }
                stale = MirrorAssertions.replicasOf(destination, TP).stream().filter(id -> id != leader).findFirst().orElseThrow();
                destination.kill(stale);
                log.info("Killed node {}, a follower of {} holding the mirrored open transaction", stale, TP);

                mirrors.stopMirrorTopics(TOPIC, List.of(TOPIC), List.of()).topics().get();
                MirrorAssertions.awaitState(mirrors, TOPIC, TOPIC, 1, PartitionState.STOPPED);
                b.abortTransaction();
            }
            MirrorPartitionDescription stopped = MirrorAssertions.describe(mirrors, TOPIC, TOPIC, 0);
            long barrier = stopped.barrierOffset();
            assertEquals(3, stopped.truncatedFromOffset(), "the stop truncated A's transaction: " + stopped);
            assertEquals(3, barrier, "the barrier follows the last record kept: " + stopped);
            List<String> local = writeLocally(destination, 5);

            // As soon as the returning replica is in the ISR, the other two replicas die: it leads, and nothing is lost.
            List<Integer> others = MirrorAssertions.replicasOf(destination, TP).stream().filter(id -> id != stale).toList();
            destination.launch(stale);
            Leadership.awaitInSync(destination, TP, stale);
            for (int node : others) {
                destination.kill(node);
            }
            destination.awaitReady(stale);
            try (Admin admin = destination.admin()) {
                TestUtils.waitFor(() -> ProcessCluster.leader(admin, TP).orElse(-1) == stale, MirrorAssertions.TIMEOUT,
                    "node " + stale + ", the last replica alive, to lead " + TP);
            }
            long end = barrier + 1 + local.size();
            List<LogBatches.Stored> survivor = LogBatches.readStored(destination.partitionDir(stale, TP), 0, Long.MAX_VALUE);
            assertEquals(end - 1, survivor.get(survivor.size() - 1).batch().lastOffset(), "every local write is on node " + stale);
            int barrierIndex = survivor.stream().map(s -> s.batch().baseOffset()).toList().indexOf(barrier);
            assertTrue(barrierIndex > 0 && survivor.get(barrierIndex).batch().isBarrier(), "the barrier is at offset " + barrier
                + " on node " + stale + ": " + survivor);
            assertTrue(survivor.get(barrierIndex).partitionLeaderEpoch() > survivor.get(barrierIndex - 1).partitionLeaderEpoch(),
                "the barrier starts a new leader epoch, so Kafka's divergence check truncated the replica that missed the stop: "
                + survivor);
            assertTrue(survivor.stream().noneMatch(s -> s.batch().lastOffset() >= stopped.truncatedFromOffset() && s.batch().baseOffset() < barrier),
                "nothing of the truncated range is left on node " + stale + ": " + survivor);
            // Kafka's fetcher truncated the returning replica before the extension on its node had read the mirror state:
            // the extension's own repair found nothing to do.
            assertFalse(destination.outputSinceLastStart(stale).contains("Truncating it to offset"),
                "node " + stale + " was repaired by the extension, not by Kafka");

            List<String> expectedRecords = new ArrayList<>(MirrorAssertions.readAll(source, TP).stream()
                .filter(r -> Long.parseLong(r.substring(0, r.indexOf(' '))) < barrier).toList());
            assertEquals(3, expectedRecords.size(), "the source's committed records below the barrier");
            List<String> read = MirrorAssertions.readAll(destination, TP);
            assertEquals(expectedRecords, read.subList(0, Math.min(read.size(), expectedRecords.size())), "mirrored records");
            assertEquals(local, read.subList(expectedRecords.size(), read.size()).stream().map(MissedStopTest::value).toList(),
                "local writes after the stop");

            for (int node : others) {
                destination.start(node);
            }
            assertEquals(survivor, awaitIdenticalReplicas(destination, TP, end), "the replicas follow the survivor's log");
        }
    }

    /**
     * The same for a cut of the alignment: a stopped topic with local writes is started again with its local writes
     * discarded while a follower that holds them is down. The leader cuts them in its current epoch, so it must hand the
     * leadership over first (found by the chaos runner's failover/failback cycles): otherwise the returning follower's
     * log looks like a prefix of the leader's, and it keeps the local writes where the others hold the source's records.
     */
    @Test
    void aReplicaThatMissedAnAlignmentCutIsTruncatedByKafkaWhenItReturns() throws Exception {
        String topic = "missed-cut";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (MirrorTestCluster source = MirrorTestCluster.builder().name("missed-cut-source").brokers(1).start();
             ProcessCluster destination = ProcessCluster.start("missed-cut-destination", 3);
             ClusterMirrorAdmin mirrors = ClusterMirrorAdmin.create(destination.clientProperties())) {
            try (Admin admin = source.admin()) {
                Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 1)));
            }
            Workloads.writeToEveryPartition(source.bootstrapServers(), topic, 1, "before", 3);
            mirrors.createClusterMirror(topic, MirrorAssertions.mirrorConfig(source)).all().get();
            mirrors.startMirrorTopics(topic, List.of(topic), List.of()).all().get();
            try (Admin admin = destination.admin()) {
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(admin, tp) == 3, MirrorAssertions.TIMEOUT, "the mirror to copy 3 records");
            }
            mirrors.stopMirrorTopics(topic, List.of(topic), List.of()).topics().get();
            MirrorAssertions.awaitState(mirrors, topic, topic, 1, PartitionState.STOPPED);
            long barrier = MirrorAssertions.describe(mirrors, topic, topic, 0).barrierOffset();
            assertEquals(3, barrier);
            writeLocally(destination, topic, 5);
            long localEnd = barrier + 1 + 5;
            awaitIdenticalReplicas(destination, tp, localEnd);

            int leader = destination.leaderOf(tp);
            int stale = MirrorAssertions.replicasOf(destination, tp).stream().filter(id -> id != leader).findFirst().orElseThrow();
            destination.kill(stale);
            log.info("Killed node {}, a follower of {} holding the local writes [{}, {})", stale, tp, barrier, localEnd);

            Workloads.writeToEveryPartition(source.bootstrapServers(), topic, 1, "after", 10);
            long sourceEnd = 3 + 10;
            mirrors.startMirrorTopics(topic, List.of(topic), List.of(), new MirrorTopicsOptions().discardLocalWrites(true)).topics().get();
            MirrorAssertions.awaitState(mirrors, topic, topic, 1, PartitionState.MIRRORING);
            try (Admin admin = destination.admin()) {
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(admin, tp) == sourceEnd, MirrorAssertions.TIMEOUT,
                    "the mirror to copy the source's records after the cut, past the stale follower's log end " + localEnd);
            }
            assertEquals(barrier, MirrorAssertions.describe(mirrors, topic, topic, 0).truncatedFromOffset(), "the start cut the local writes");

            destination.launch(stale);
            Leadership.awaitInSync(destination, tp, stale);
            List<LogBatches.Stored> replicated = awaitIdenticalReplicas(destination, tp, sourceEnd);
            assertEquals(MirrorAssertions.readAll(source, tp), MirrorAssertions.readAll(destination, tp), "the source's records");
            assertTrue(LogBatches.readStored(destination.partitionDir(stale, tp), 0, Long.MAX_VALUE).equals(replicated),
                "node " + stale + " holds the leader's batches, none of the local writes it missed the cut of");
        }
    }

    private static long lastStableOffset(Admin admin) throws Exception {
        return admin.listOffsets(Map.of(TP, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
            .all().get().get(TP).offset();
    }

    /** Idempotent writes (acks=all) on the stopped topic; returns their values. */
    private static List<String> writeLocally(ProcessCluster destination, int count) throws Exception {
        return writeLocally(destination, TOPIC, count);
    }

    private static List<String> writeLocally(ProcessCluster destination, String topic, int count) throws Exception {
        List<String> values = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(destination.bootstrapServers(),
                Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all"))) {
            for (int i = 0; i < count; i++) {
                String value = "local-" + i;
                producer.send(new ProducerRecord<>(topic, 0, null, Workloads.bytes(value))).get();
                values.add(value);
            }
        }
        return values;
    }

    /** The value of a record as {@link MirrorAssertions#readAll} prints it ("offset key value headers timestamp"). */
    private static String value(String record) {
        return record.split(" ")[2];
    }

    /** Waits until every replica holds the same batches, with the same leader epochs, up to {@code end}. */
    private static List<LogBatches.Stored> awaitIdenticalReplicas(ProcessCluster destination, TopicPartition tp, long end) throws Exception {
        int leader = destination.leaderOf(tp);
        List<Integer> replicas = MirrorAssertions.replicasOf(destination, tp);
        TestUtils.waitFor(() -> {
            List<LogBatches.Stored> leaderLog = LogBatches.readStored(destination.partitionDir(leader, tp), 0, Long.MAX_VALUE);
            if (leaderLog.isEmpty() || leaderLog.get(leaderLog.size() - 1).batch().lastOffset() != end - 1) {
                return false;
            }
            for (int node : replicas) {
                if (!LogBatches.readStored(destination.partitionDir(node, tp), 0, Long.MAX_VALUE).equals(leaderLog)) {
                    return false;
                }
            }
            return true;
        }, MirrorAssertions.TIMEOUT, "every replica of " + tp + " to hold the same batches up to offset " + end);
        return LogBatches.readStored(destination.partitionDir(leader, tp), 0, Long.MAX_VALUE);
    }
}
