package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The topologies of docs/DESIGN.md on real clusters that all run the extension: chain A -> B -> C with a
 * failover in the middle and at the end, fan-out, fan-in, repeated failover/failback between two clusters, an
 * unclean leader election on the source, and loops. The clusters are shared; every test has its own topics and
 * mirrors.
 */
@MirrorClusterTest(topologies = "topologies")
class TopologiesTest {
    private static MirrorTestCluster a;
    private static MirrorTestCluster b;
    private static MirrorTestCluster c;
    private static ClusterMirrorAdmin mirrorsOnA;
    private static ClusterMirrorAdmin mirrorsOnB;
    private static ClusterMirrorAdmin mirrorsOnC;

    /** Three clusters that all run the extension: a of two brokers, b and c of one. */
    static ClusterPair.Topologies topologies() {
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("topo-a").brokers(2).withExtension(true).topology(),
            MirrorTestCluster.builder().name("topo-b").brokers(1).topology(),
            MirrorTestCluster.builder().name("topo-c").brokers(1).withExtension(true).topology());
    }

    @BeforeAll
    static void nameTheClusters(ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters) {
        a = clusters.source;
        b = clusters.destination;
        c = clusters.other("topo-c");
        mirrorsOnA = clusters.mirrorsOn(a);
        mirrorsOnB = clusters.mirrors;
        mirrorsOnC = clusters.mirrorsOn(c);
    }

    private static void createTopic(MirrorTestCluster cluster, String topic, int partitions, Map<String, String> configs) throws Exception {
        try (Admin admin = cluster.admin()) {
            short rf = (short) Math.min(2, cluster.brokerIds().size());
            Workloads.createTopics(admin, List.of(new NewTopic(topic, partitions, rf).configs(configs)));
        }
    }

    private static void mirror(ClusterMirrorAdmin admin, String mirror, MirrorTestCluster source, String... topics) throws Exception {
        admin.createClusterMirror(mirror, MirrorAssertions.mirrorConfig(source)).all().get();
        admin.startMirrorTopics(mirror, List.of(topics), List.of()).all().get();
    }

    private static void stop(ClusterMirrorAdmin admin, String mirror, String topic) throws Exception {
        admin.stopMirrorTopics(mirror, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitState(admin, mirror, topic, 1, PartitionState.STOPPED);
    }

    private static long endOffset(MirrorTestCluster cluster, TopicPartition tp) throws Exception {
        try (Admin admin = cluster.admin()) {
            return MirrorAssertions.endOffset(admin, tp);
        }
    }

    private static String clusterId(MirrorTestCluster cluster) throws Exception {
        try (Admin admin = cluster.admin()) {
            return admin.describeCluster().clusterId().get();
        }
    }

    private static MirrorError errorOf(Throwable e) {
        return assertInstanceOf(ClusterMirrorException.class, e instanceof ExecutionException ? e.getCause() : e, String.valueOf(e)).error();
    }

    /** Whether every acknowledged record is readable (read_committed) at its offset on the cluster. */
    private static void assertReadable(MirrorTestCluster cluster, TopicPartition tp, List<Workloads.Acked> acked) throws Exception {
        List<String> records = MirrorAssertions.readAll(cluster, tp);
        for (Workloads.Acked w : acked) {
            assertTrue(records.stream().anyMatch(r -> r.startsWith(w.offset() + " ") && r.contains(w.headerMark())),
                "acknowledged record " + w + " is not readable on " + cluster.name() + " at its offset");
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Chain A -> B -> C

    /**
     * The id a new producer on a single-broker cluster gets next is one above the highest it handed out: this writes
     * with new idempotent producers to a scratch topic and returns the id the last one got.
     */
    private static long drawProducerIds(MirrorTestCluster cluster, int producers) throws Exception {
        TopicPartition scratch = new TopicPartition("pid-scratch", 0);
        try (Admin admin = cluster.admin()) {
            if (!admin.listTopics().names().get().contains(scratch.topic())) {
                Workloads.createTopics(admin, List.of(new NewTopic(scratch.topic(), 1, (short) 1)));
            }
        }
        for (int i = 0; i < producers; i++) {
            try (KafkaProducer<byte[], byte[]> p = Workloads.producer(cluster.bootstrapServers(), Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
                Workloads.sendBatch(p, scratch.topic(), 0, "scratch", 1);
            }
        }
        return MirrorAssertions.producerIds(cluster, scratch).stream().mapToLong(Long::longValue).max().orElseThrow();
    }

    @Test
    void chainCopiesTheMiddleClustersBarrierAndEveryFailoverLeavesACleanProducerState() throws Exception {
        String topic = "chain";
        TopicPartition tp = new TopicPartition(topic, 0);
        createTopic(a, topic, 1, Map.of());
        Set<Long> mirroredIds = new HashSet<>();
        Workloads.writeIdempotentAndTransactional(a.bootstrapServers(), topic, "chain-a1");
        mirror(mirrorsOnB, "chain-ab", a, topic);
        mirror(mirrorsOnC, "chain-bc", b, topic);   // C's source is B, whose topic is itself a mirror topic
        MirrorAssertions.awaitCaughtUp(a, b, topic, 1);
        MirrorAssertions.awaitCaughtUp(b, c, topic, 1);
        MirrorAssertions.assertIdenticalLogs(a, b, topic, 1);
        MirrorAssertions.assertIdenticalLogs(b, c, topic, 1);
        mirroredIds.addAll(MirrorAssertions.producerIds(a, tp));

        // B fails over: its barrier (naming A) follows A's last record, and B's own producers write after it.
        stop(mirrorsOnB, "chain-ab", topic);
        long barrierOfB = MirrorAssertions.describe(mirrorsOnB, "chain-ab", topic, 0).barrierOffset();
        assertTrue(barrierOfB >= 0, "B recorded its barrier");
        // B and C hand out producer ids one by one from the same start: bring the one behind level with the other, so
        // that B's many producers below take the ids C's producers will get after C's failover.
        long nextOnB = drawProducerIds(b, 1);
        long nextOnC = drawProducerIds(c, 1);
        if (nextOnB < nextOnC) {
            drawProducerIds(b, (int) (nextOnC - nextOnB));
        } else if (nextOnC < nextOnB) {
            drawProducerIds(c, (int) (nextOnB - nextOnC));
        }
        List<Workloads.Acked> writtenOnB = new ArrayList<>(Workloads.writeIdempotentAndTransactional(b.bootstrapServers(), topic, "chain-b1"));
        for (int i = 0; i < 40; i++) {
            try (KafkaProducer<byte[], byte[]> p = Workloads.producer(b.bootstrapServers(), Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
                writtenOnB.addAll(Workloads.sendBatch(p, topic, 0, "chain-b-many-" + i, 1));
            }
        }
        mirroredIds.addAll(MirrorAssertions.producerIds(b, tp));

        // C follows B batch for batch, B's barrier included; the barrier cleared A's producers on C as it did on B.
        MirrorAssertions.awaitCaughtUp(b, c, topic, 1);
        MirrorAssertions.assertIdenticalLogs(b, c, topic, 1);
        MirrorAssertions.assertSameRecords(b, c, topic, 1);
        String aId = clusterId(a);
        List<LogBatches.Batch> onC = LogBatches.read(c.partitionDir(c.leaderOf(tp), tp), endOffset(c, tp));
        List<LogBatches.Batch> barriersOnC = onC.stream().filter(LogBatches.Batch::isBarrier).toList();
        assertEquals(1, barriersOnC.size(), "C holds B's barrier and no other: " + barriersOnC);
        assertEquals(barrierOfB, barriersOnC.get(0).baseOffset(), "B's barrier sits at the same offset on C");
        assertEquals(aId, barriersOnC.get(0).barrierSourceClusterId(), "B's barrier names B's source, A");
        Set<Long> onB = MirrorAssertions.producerIds(b, tp);
        TestUtils.waitFor(() -> MirrorAssertions.producerIds(c, tp).equals(onB), MirrorAssertions.TIMEOUT,
            "C's producer state holds exactly B's producers after B's barrier: B " + onB);
        assertReadable(c, tp, writtenOnB);

        // C fails over: local producers whose ids equal mirrored ones (A's or B's) work on C.
        stop(mirrorsOnC, "chain-bc", topic);
        MirrorPartitionDescription stoppedC = MirrorAssertions.describe(mirrorsOnC, "chain-bc", topic, 0);
        assertEquals(endOffset(b, tp), stoppedC.barrierOffset(), "C's barrier follows B's last record");
        assertTrue(MirrorAssertions.producerIds(c, tp).isEmpty(), "no mirrored producer left on C: " + MirrorAssertions.producerIds(c, tp));
        Set<Long> localIds = new HashSet<>();
        List<Workloads.Acked> writtenOnC = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Set<Long> before = MirrorAssertions.producerIds(c, tp);
            writtenOnC.addAll(Workloads.writeIdempotentAndTransactional(c.bootstrapServers(), topic, "chain-c-" + i));
            Set<Long> now = MirrorAssertions.producerIds(c, tp);
            now.removeAll(before);
            localIds.addAll(now);
        }
        assertReadable(c, tp, writtenOnC);
        assertReadable(c, tp, writtenOnB);
        localIds.retainAll(mirroredIds);
        assertFalse(localIds.isEmpty(), "C's local producers reused none of the mirrored producer ids " + mirroredIds
            + ": the test would prove little");
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Fan-out and fan-in

    @Test
    void fanOutMirrorsIndependentlyAndStoppingOneLeavesTheOtherMirroring() throws Exception {
        String topic = "fanout";
        TopicPartition tp = new TopicPartition(topic, 0);
        createTopic(a, topic, 2, Map.of());
        Workloads.writeAllKinds(a.bootstrapServers(), topic, 2, 3);
        mirror(mirrorsOnB, "fanout-ab", a, topic);
        mirror(mirrorsOnC, "fanout-ac", a, topic);
        for (MirrorTestCluster destination : List.of(b, c)) {
            MirrorAssertions.awaitCaughtUp(a, destination, topic, 2);
            MirrorAssertions.assertIdenticalLogs(a, destination, topic, 2);
            MirrorAssertions.assertSameRecords(a, destination, topic, 2);
        }

        stop(mirrorsOnB, "fanout-ab", topic);
        long barrierOfB = MirrorAssertions.describe(mirrorsOnB, "fanout-ab", topic, 0).barrierOffset();
        long endOfB = endOffset(b, tp);
        assertEquals(barrierOfB + 1, endOfB);
        Workloads.writeAllKinds(a.bootstrapServers(), topic, 2, 3);
        MirrorAssertions.awaitCaughtUp(a, c, topic, 2);
        MirrorAssertions.assertIdenticalLogs(a, c, topic, 2);
        MirrorAssertions.assertSameRecords(a, c, topic, 2);
        assertTrue(LogBatches.read(c.partitionDir(c.leaderOf(tp), tp), endOffset(c, tp)).stream().noneMatch(LogBatches.Batch::isBarrier),
            "B's failover wrote no barrier on C");
        assertEquals(endOfB, endOffset(b, tp), "the stopped mirror copies nothing more");
        assertEquals(PartitionState.MIRRORING, MirrorAssertions.describe(mirrorsOnC, "fanout-ac", topic, 0).state());

        // Each destination fails over on its own: C writes its own barrier, at its own end.
        long endOfC = endOffset(c, tp);
        stop(mirrorsOnC, "fanout-ac", topic);
        assertEquals(endOfC, MirrorAssertions.describe(mirrorsOnC, "fanout-ac", topic, 0).barrierOffset());
        List<Workloads.Acked> local = Workloads.writeIdempotentAndTransactional(c.bootstrapServers(), topic, "fanout-c");
        assertReadable(c, tp, local);
    }

    @Test
    void fanInMirrorsTwoSourcesAndStoppingOneLeavesTheOtherMirroring() throws Exception {
        String x = "fanin-x";
        String y = "fanin-y";
        createTopic(a, x, 1, Map.of());
        createTopic(b, y, 1, Map.of());
        Workloads.writeAllKinds(a.bootstrapServers(), x, 1, 3);
        Workloads.writeAllKinds(b.bootstrapServers(), y, 1, 3);
        mirror(mirrorsOnC, "fanin-ac", a, x);
        mirror(mirrorsOnC, "fanin-bc", b, y);
        MirrorAssertions.awaitCaughtUp(a, c, x, 1);
        MirrorAssertions.awaitCaughtUp(b, c, y, 1);
        MirrorAssertions.assertIdenticalLogs(a, c, x, 1);
        MirrorAssertions.assertIdenticalLogs(b, c, y, 1);
        MirrorAssertions.assertSameRecords(a, c, x, 1);
        MirrorAssertions.assertSameRecords(b, c, y, 1);

        // Stopping x (from A) leaves y (from B) mirroring, and the other way round.
        stop(mirrorsOnC, "fanin-ac", x);
        long endOfX = endOffset(c, new TopicPartition(x, 0));
        Workloads.writeAllKinds(a.bootstrapServers(), x, 1, 2);
        Workloads.writeAllKinds(b.bootstrapServers(), y, 1, 2);
        MirrorAssertions.awaitCaughtUp(b, c, y, 1);
        MirrorAssertions.assertIdenticalLogs(b, c, y, 1);
        MirrorAssertions.assertSameRecords(b, c, y, 1);
        assertEquals(endOfX, endOffset(c, new TopicPartition(x, 0)), "the stopped topic copies nothing more");
        assertEquals(PartitionState.MIRRORING, MirrorAssertions.describe(mirrorsOnC, "fanin-bc", y, 0).state());
        List<Workloads.Acked> local = Workloads.writeIdempotentAndTransactional(c.bootstrapServers(), x, "fanin-c");
        assertReadable(c, new TopicPartition(x, 0), local);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Repeated failover and failback between two clusters

    /** A truncation a cluster reported, and the step at which it was first seen. */
    private record Truncation(MirrorTestCluster cluster, long from, long to, int step) {
    }

    /** An acknowledged write on a cluster at a step. */
    private record Write(MirrorTestCluster cluster, Workloads.Acked acked, int step) {
    }

    private static void recordTruncation(List<Truncation> truncations, MirrorTestCluster cluster, MirrorPartitionDescription d, int step) {
        if (d.truncatedFromOffset() < 0) {
            return;
        }
        boolean known = truncations.stream().anyMatch(t -> t.cluster() == cluster && t.from() == d.truncatedFromOffset()
            && t.to() == d.truncatedToOffset());
        if (!known) {
            truncations.add(new Truncation(cluster, d.truncatedFromOffset(), d.truncatedToOffset(), step));
        }
    }

    @Test
    void alternatingFailoversAndFailbacksKeepBothLogsIdenticalAndLoseOnlyReportedRanges() throws Exception {
        String topic = "cycles";
        TopicPartition tp = new TopicPartition(topic, 0);
        createTopic(a, topic, 1, Map.of());
        Map<MirrorTestCluster, ClusterMirrorAdmin> admins = Map.of(a, mirrorsOnA, b, mirrorsOnB);
        Map<MirrorTestCluster, String> mirrorOn = Map.of(a, "cycles-from-b", b, "cycles-from-a");
        Set<MirrorTestCluster> created = new HashSet<>();
        List<Write> writes = new ArrayList<>();
        List<Truncation> truncations = new ArrayList<>();
        int step = 0;
        int cycles = 6;
        for (int cycle = 0; cycle <= cycles; cycle++) {
            MirrorTestCluster writable = cycle % 2 == 0 ? a : b;
            MirrorTestCluster readOnly = cycle % 2 == 0 ? b : a;
            ClusterMirrorAdmin admin = admins.get(readOnly);
            String mirror = mirrorOn.get(readOnly);
            String tag = "cycle" + cycle;
            int s = ++step;
            Workloads.writeIdempotentAndTransactional(writable.bootstrapServers(), topic, tag + "-before").forEach(w -> writes.add(new Write(writable, w, s)));

            // (Re)start the mirror on the read-only side: a failback onto a log that holds data.
            if (created.add(readOnly)) {
                admin.createClusterMirror(mirror, MirrorAssertions.mirrorConfig(writable)).all().get();
                admin.startMirrorTopics(mirror, List.of(topic), List.of()).all().get();
            } else {
                // The topic is stopped in this side's mirror and holds the split-brain writes made after the other side
                // took over: starting it again removes them only when the operator says so.
                ExecutionException refused = assertThrows(ExecutionException.class,
                    () -> admin.startMirrorTopics(mirror, List.of(topic), List.of()).all().get());
                assertEquals(MirrorError.MIRROR_TOPIC_HAS_LOCAL_WRITES,
                    assertInstanceOf(ClusterMirrorException.class, refused.getCause()).error());
                admin.startMirrorTopics(mirror, List.of(topic), List.of(), new MirrorTopicsOptions().discardLocalWrites(true)).all().get();
            }
            MirrorAssertions.awaitCaughtUp(writable, readOnly, topic, 1);
            recordTruncation(truncations, readOnly, MirrorAssertions.describe(admin, mirror, topic, 0), ++step);
            MirrorAssertions.assertIdenticalLogs(writable, readOnly, topic, 1);
            MirrorAssertions.assertSameRecords(writable, readOnly, topic, 1);
            if (cycle == cycles) {
                break; // ends mirroring, caught up
            }

            // Writes while mirroring, then the failover to the read-only side, then writes on the old side that the
            // next failback must cut away (split brain).
            int s2 = ++step;
            Workloads.writeIdempotentAndTransactional(writable.bootstrapServers(), topic, tag + "-during").forEach(w -> writes.add(new Write(writable, w, s2)));
            stop(admin, mirror, topic);
            recordTruncation(truncations, readOnly, MirrorAssertions.describe(admin, mirror, topic, 0), ++step);
            int s3 = ++step;
            Workloads.writeIdempotentAndTransactional(writable.bootstrapServers(), topic, tag + "-after").forEach(w -> writes.add(new Write(writable, w, s3)));
        }

        // Both logs are identical (the last cycle ended caught up), and each acknowledged write is still at its offset
        // on the cluster that acknowledged it, or a truncation that cluster reported later covered it.
        MirrorAssertions.assertIdenticalLogs(a, b, topic, 1);
        MirrorAssertions.assertSameRecords(a, b, topic, 1);
        Map<MirrorTestCluster, List<String>> finalRecords = Map.of(a, MirrorAssertions.readAll(a, tp), b, MirrorAssertions.readAll(b, tp));
        int present = 0;
        int truncated = 0;
        for (Write w : writes) {
            boolean there = finalRecords.get(w.cluster()).stream()
                .anyMatch(r -> r.startsWith(w.acked().offset() + " ") && r.contains(w.acked().headerMark()));
            if (there) {
                present++;
                continue;
            }
            Optional<Truncation> cut = truncations.stream().filter(t -> t.cluster() == w.cluster() && t.step() > w.step()
                && t.from() <= w.acked().offset() && w.acked().offset() < t.to()).findFirst();
            assertTrue(cut.isPresent(), "acknowledged write " + w.acked() + " on " + w.cluster().name() + " is neither present nor in a "
                + "truncated range reported after it: " + truncations);
            truncated++;
        }
        assertTrue(truncated > 0 && present > 0, "present " + present + ", truncated " + truncated);
        for (Write w : writes) {
            if (w.acked().tag().contains("-after")) {
                assertTrue(finalRecords.get(w.cluster()).stream().noneMatch(r -> r.contains(w.acked().headerMark())),
                    "a write after the other side's failover survived the failback: " + w.acked());
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Unclean leader election on the source

    @Test
    void theDestinationFollowsTheSourceThroughAnUncleanLeaderElection() throws Exception {
        // A source of its own, without the extension (any Kafka cluster can be a source): its brokers go down here.
        try (MirrorTestCluster source = MirrorTestCluster.builder().name("topo-unclean-source").brokers(2).start()) {
            followUncleanElection(source);
        }
    }

    private static void followUncleanElection(MirrorTestCluster a) throws Exception {
        String topic = "unclean";
        TopicPartition tp = new TopicPartition(topic, 0);
        List<Integer> ids = a.brokerIds().stream().sorted().toList();
        int leader = ids.get(0);
        int follower = ids.get(1);
        try (Admin admin = a.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, Map.of(0, List.of(leader, follower)))
                .configs(Map.of("unclean.leader.election.enable", "true", "min.insync.replicas", "1"))));
        }
        TestUtils.waitFor(() -> a.leaderOf(tp) == leader, MirrorAssertions.TIMEOUT, "broker " + leader + " leads " + tp);
        Workloads.writeIdempotentAndTransactional(a.bootstrapServers(), topic, "unclean-1");
        mirror(mirrorsOnC, "unclean-ac", a, topic);
        MirrorAssertions.awaitCaughtUp(a, c, topic, 1);

        // The follower misses records that the leader acknowledges (acks=1) and the mirror copies.
        a.shutdownBroker(follower);
        try (Admin admin = a.admin()) {
            TestUtils.waitFor(() -> isr(admin, tp).equals(List.of(leader)), MirrorAssertions.TIMEOUT, "ISR of " + tp + " shrinks to the leader");
        }
        long divergencePoint = endOffset(a, tp);
        try (KafkaProducer<byte[], byte[]> p = Workloads.producer(a.bootstrapServers(), Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false, ProducerConfig.ACKS_CONFIG, "1"))) {
            Workloads.sendBatch(p, topic, 0, "unclean-lost", 6);
        }
        MirrorAssertions.awaitCaughtUp(a, c, topic, 1);
        long mirroredEnd = endOffset(c, tp);

        // The stale follower becomes the leader uncleanly and takes new writes; the old leader comes back and truncates.
        a.shutdownBroker(leader);
        a.startBroker(follower);
        try (Admin admin = a.admin()) {
            TestUtils.waitFor(() -> {
                Optional<Integer> current = leaderId(admin, tp);
                if (current.isPresent() && current.get() == follower) {
                    return true;
                }
                try {
                    admin.electLeaders(ElectionType.UNCLEAN, Set.of(tp)).all().get();
                } catch (ExecutionException e) {
                    // not yet possible (the follower is still registering) or already done: check again
                }
                return false;
            }, MirrorAssertions.TIMEOUT, "broker " + follower + " elected uncleanly for " + tp);
        }
        // Only idempotent writes while the old leader is down: the internal topics (transactions) lost their ISR with it.
        List<Workloads.Acked> afterElection = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = Workloads.producer(a.bootstrapServers(), Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
            afterElection.addAll(Workloads.sendBatch(p, topic, 0, "unclean-2", 10));
        }
        assertTrue(endOffset(a, tp) > mirroredEnd, "the new leader's log must outgrow the mirrored one for the end offsets to tell");
        a.startBroker(leader);
        try (Admin admin = a.admin()) {
            TestUtils.waitFor(() -> isr(admin, tp).size() == 2, MirrorAssertions.TIMEOUT, "the old leader rejoins the ISR of " + tp);
        }
        afterElection.addAll(Workloads.writeIdempotentAndTransactional(a.bootstrapServers(), topic, "unclean-3"));

        // The destination cut the divergent records and copies the new leader's log.
        MirrorAssertions.awaitCaughtUp(a, c, topic, 1);
        MirrorPartitionDescription d = MirrorAssertions.describe(mirrorsOnC, "unclean-ac", topic, 0);
        assertEquals(PartitionState.MIRRORING, d.state(), "after the divergence: " + d);
        MirrorAssertions.assertIdenticalLogs(a, c, topic, 1);
        MirrorAssertions.assertSameRecords(a, c, topic, 1);
        List<String> onC = MirrorAssertions.readAll(c, tp);
        assertTrue(onC.stream().noneMatch(r -> r.contains("unclean-lost")), "no record the source lost is left on C");
        assertReadable(c, tp, afterElection);
        assertTrue(divergencePoint < mirroredEnd, "C had mirrored the records the source lost");
        TestUtils.waitFor(() -> {
            MirrorPartitionDescription now = MirrorAssertions.describe(mirrorsOnC, "unclean-ac", topic, 0);
            return now.truncatedFromOffset() == divergencePoint && now.truncatedToOffset() == mirroredEnd;
        }, MirrorAssertions.TIMEOUT, "describe reports the divergent range [" + divergencePoint + ", " + mirroredEnd + ") as truncated");
    }

    private static List<Integer> isr(Admin admin, TopicPartition tp) throws Exception {
        return Leadership.partitionInfo(admin, tp).isr().stream().map(n -> n.id()).toList();
    }

    private static Optional<Integer> leaderId(Admin admin, TopicPartition tp) throws Exception {
        TopicPartitionInfo info = Leadership.partitionInfo(admin, tp);
        return info.leader() == null || info.leader().isEmpty() ? Optional.empty() : Optional.of(info.leader().id());
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Loops

    @Test
    void mirroringATopicBackToTheClusterThatCopiesItIsALoop() throws Exception {
        String topic = "loop";
        createTopic(a, topic, 1, Map.of());
        Workloads.writeIdempotentAndTransactional(a.bootstrapServers(), topic, "loop-a");
        mirror(mirrorsOnB, "loop-from-a", a, topic);
        MirrorAssertions.awaitCaughtUp(a, b, topic, 1);

        mirrorsOnA.createClusterMirror("loop-from-b", MirrorAssertions.mirrorConfig(b)).all().get();
        ExecutionException loop = assertThrows(ExecutionException.class,
            () -> mirrorsOnA.startMirrorTopics("loop-from-b", List.of(topic), List.of()).all().get());
        assertEquals(MirrorError.MIRROR_LOOP, errorOf(loop));
        assertTrue(mirrorsOnA.describeClusterMirrors(List.of("loop-from-b")).all().get().get("loop-from-b").topics().isEmpty(),
            "the refused topic is in no mirror of A");
        // B goes on mirroring A.
        Workloads.writeIdempotentAndTransactional(a.bootstrapServers(), topic, "loop-a2");
        MirrorAssertions.awaitCaughtUp(a, b, topic, 1);
        MirrorAssertions.assertIdenticalLogs(a, b, topic, 1);
    }

    @Test
    void startingBothDirectionsAtOnceNeverMirrorsBoth() throws Exception {
        String topic = "loop-race";
        TopicPartition tp = new TopicPartition(topic, 0);
        createTopic(a, topic, 1, Map.of());
        createTopic(b, topic, 1, Map.of());
        mirrorsOnA.createClusterMirror("race-from-b", MirrorAssertions.mirrorConfig(b)).all().get();
        mirrorsOnB.createClusterMirror("race-from-a", MirrorAssertions.mirrorConfig(a)).all().get();
        // Both commands are sent before either answers.
        KafkaFuture<Void> onA = mirrorsOnA.startMirrorTopics("race-from-b", List.of(topic), List.of()).all();
        KafkaFuture<Void> onB = mirrorsOnB.startMirrorTopics("race-from-a", List.of(topic), List.of()).all();
        Map<MirrorTestCluster, Throwable> refused = new HashMap<>();
        for (Map.Entry<MirrorTestCluster, KafkaFuture<Void>> e : Map.of(a, onA, b, onB).entrySet()) {
            try {
                e.getValue().get();
            } catch (ExecutionException ex) {
                refused.put(e.getKey(), ex.getCause());
            }
        }
        refused.values().forEach(t -> assertEquals(MirrorError.MIRROR_LOOP, errorOf(t), String.valueOf(t)));
        // Whatever both commands passed is refused when the partitions prepare: never both directions mirror.
        TestUtils.waitFor(() -> {
            int mirroring = 0;
            int loops = refused.size();
            for (MirrorTestCluster side : List.of(a, b)) {
                if (refused.containsKey(side)) {
                    continue;
                }
                ClusterMirrorAdmin admin = side == a ? mirrorsOnA : mirrorsOnB;
                MirrorPartitionDescription d = MirrorAssertions.describe(admin, side == a ? "race-from-b" : "race-from-a", topic, 0);
                if (d.state() == PartitionState.MIRRORING) {
                    mirroring++;
                } else if (d.state() == PartitionState.FAILED && d.lastError() != null && d.lastError().contains(MirrorError.MIRROR_LOOP.name())) {
                    loops++;
                } else {
                    return false;
                }
            }
            assertTrue(mirroring <= 1, "both directions mirror " + topic);
            return loops >= 1;
        }, MirrorAssertions.TIMEOUT, "one direction of " + topic + " refused as a loop");
        // A side refused while preparing retries with backoff, and must be refused again each time: watch one retry
        // (PREPARING again, then FAILED again) and never see it MIRRORING.
        for (MirrorTestCluster side : List.of(a, b)) {
            ClusterMirrorAdmin admin = side == a ? mirrorsOnA : mirrorsOnB;
            String mirror = side == a ? "race-from-b" : "race-from-a";
            if (refused.containsKey(side) || MirrorAssertions.describe(admin, mirror, topic, 0).state() != PartitionState.FAILED) {
                continue;
            }
            java.util.concurrent.atomic.AtomicBoolean retried = new java.util.concurrent.atomic.AtomicBoolean();
            TestUtils.waitFor(() -> {
                MirrorPartitionDescription d = MirrorAssertions.describe(admin, mirror, topic, 0);
                assertTrue(d.state() == PartitionState.FAILED || d.state() == PartitionState.PREPARING,
                    "a preparation refused as a loop must stay refused on retries: " + d);
                if (d.state() == PartitionState.PREPARING) {
                    retried.set(true);
                }
                return retried.get() && d.state() == PartitionState.FAILED && d.lastError().contains(MirrorError.MIRROR_LOOP.name());
            }, MirrorAssertions.TIMEOUT, "a retry of the refused preparation on " + side.name());
        }
        // A side whose start passed but whose preparation was refused keeps refusing on retries, and its topic stays a
        // read-only mirror topic until the operator stops that direction. It never mirrored anything, so the stop keeps
        // its log as it is (no truncation, no barrier); then it is the writable source of the other direction.
        for (MirrorTestCluster side : List.of(a, b)) {
            MirrorTestCluster other = side == a ? b : a;
            ClusterMirrorAdmin admin = side == a ? mirrorsOnA : mirrorsOnB;
            String mirror = side == a ? "race-from-b" : "race-from-a";
            if (refused.containsKey(side) || MirrorAssertions.describe(admin, mirror, topic, 0).state() != PartitionState.MIRRORING) {
                continue;
            }
            ClusterMirrorAdmin otherAdmin = side == a ? mirrorsOnB : mirrorsOnA;
            String otherMirror = side == a ? "race-from-a" : "race-from-b";
            if (!refused.containsKey(other)) {
                MirrorPartitionDescription refusedSide = MirrorAssertions.describe(otherAdmin, otherMirror, topic, 0);
                assertTrue((refusedSide.state() == PartitionState.FAILED || refusedSide.state() == PartitionState.PREPARING)
                    && refusedSide.lastError() != null && refusedSide.lastError().contains(MirrorError.MIRROR_LOOP.name()),
                    "the loop stays refused after retries (FAILED, or PREPARING its next retry): " + refusedSide);
                long endBefore;
                try (Admin admin2 = other.admin()) {
                    endBefore = MirrorAssertions.endOffset(admin2, tp);
                }
                otherAdmin.stopMirrorTopics(otherMirror, List.of(topic), List.of()).all().get();
                MirrorAssertions.awaitState(otherAdmin, otherMirror, topic, 1, PartitionState.STOPPED);
                MirrorPartitionDescription stopped = MirrorAssertions.describe(otherAdmin, otherMirror, topic, 0);
                assertEquals(-1, stopped.barrierOffset(), "a partition never mirrored into gets no barrier: " + stopped);
                assertEquals(-1, stopped.truncatedFromOffset(), "and loses nothing: " + stopped);
                try (Admin admin2 = other.admin()) {
                    assertEquals(endBefore, MirrorAssertions.endOffset(admin2, tp));
                }
            }
            Workloads.writeIdempotentAndTransactional(other.bootstrapServers(), topic, "race");
            MirrorAssertions.awaitCaughtUp(other, side, topic, 1);
            MirrorAssertions.assertIdenticalLogs(other, side, topic, 1);
            assertEquals(MirrorAssertions.readAll(other, tp), MirrorAssertions.readAll(side, tp));
        }
    }
}
