package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.HeldLogStart;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.ClusterTopology.LaunchMode;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Unclean crashes of destination brokers (the contract in docs/DESIGN.md, points 4 and 6): the destination's nodes are separate
 * processes ({@link ProcessCluster}) killed with SIGKILL, so nothing of a clean shutdown runs (no extension close,
 * no producer state snapshot, no clean shutdown marker) and the restarted broker recovers its logs.
 *
 * <p>The producer-id collision test runs first: a restarted node gets a new block of producer ids, so only nodes no
 * earlier test restarted still hand out the low ids of the blocks a fresh source's producers used.
 */
@Tag(ProcessCluster.TAG)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ParameterizedClass(name = "{0}")
@EnumSource(value = LaunchMode.class, names = {"LAUNCHER", "DROP_IN"})
@MirrorClusterTest(topologies = "topologies")
class CrashTest {
    private static final Logger log = LoggerFactory.getLogger(CrashTest.class);

    private static ClusterPair<MirrorTestCluster, ProcessCluster> clusters;
    private static MirrorTestCluster source;
    private static ProcessCluster destination;
    private static ClusterMirrorAdmin mirrors;

    /** How the destination's nodes are started: every test runs against launcher nodes and drop-in nodes. */
    @Parameter
    LaunchMode mode;

    /** Each launch mode's pair: the destination's nodes launched that way. */
    static ClusterPair.Topologies topologies(LaunchMode mode) {
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("crash-source").brokers(3).topology(),
            ProcessCluster.topology("crash-destination-" + mode).combined(3).launchMode(mode).build());
    }

    @BeforeParameterizedClassInvocation(injectArguments = false)
    static void nameTheClusters() {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
    }

    private static long destinationEnd(TopicPartition tp) throws Exception {
        try (Admin admin = destination.admin()) {
            return MirrorAssertions.endOffset(admin, tp);
        }
    }

    /** Creates a source topic (one partition, three replicas) holding every kind of batch. */
    private static void createSourceTopic(String topic, int perBatch) throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 3)));
        }
        Workloads.writeAllKinds(source.bootstrapServers(), topic, 1, perBatch);
    }

    /** Creates a source topic with {@link #createSourceTopic} and mirrors it to the end with a mirror of the same name. */
    private static void mirrorFully(String topic, int perBatch) throws Exception {
        createSourceTopic(topic, perBatch);
        mirrors.createClusterMirror(topic, MirrorAssertions.mirrorConfig(source)).all().get();
        mirrors.startMirrorTopics(topic, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
    }

    /** Kills (SIGKILL) the partition's leader and waits until another node leads it; returns the killed node. */
    private static int killLeader(TopicPartition tp) throws Exception {
        int leader = destination.leaderOf(tp);
        destination.kill(leader);
        try (Admin admin = destination.admin()) {
            TestUtils.waitFor(() -> ProcessCluster.leader(admin, tp).filter(l -> l != leader).isPresent(),
                MirrorAssertions.TIMEOUT, "a new leader of " + tp + " after node " + leader + " was killed");
        }
        return leader;
    }

    /**
     * Invariant 6: the destination leader's process dies (SIGKILL) while it mirrors and a producer writes on the source.
     * The new leader resumes from its own log end, the killed node truncates what it alone had and catches up when it
     * is back: every replica ends up holding exactly the source's batches, nothing lost and nothing duplicated.
     */
    @Test
    void mirroringSurvivesAnUncleanCrashOfTheDestinationLeader() throws Exception {
        String topic = "crash";
        TopicPartition tp = new TopicPartition(topic, 0);
        createSourceTopic(topic, 3);
        AtomicBoolean stopWriting = new AtomicBoolean();
        CompletableFuture<Integer> writer = CompletableFuture.supplyAsync(() -> writeUntilStopped(topic, stopWriting));
        try {
            mirrors.createClusterMirror("crash", MirrorAssertions.mirrorConfig(source)).all().get();
            mirrors.startMirrorTopics("crash", List.of(topic), List.of()).all().get();
            TestUtils.waitFor(() -> destinationEnd(tp) > 0, MirrorAssertions.TIMEOUT, "mirroring of " + tp + " to start");
            long seen = destinationEnd(tp);
            TestUtils.waitFor(() -> destinationEnd(tp) > seen, MirrorAssertions.TIMEOUT, "mirroring of " + tp + " to go on");

            long endAtKill = destinationEnd(tp);
            int leader = killLeader(tp);
            log.info("Killed destination leader {} of {} at end offset {} or later", leader, tp, endAtKill);
            try (Admin admin = destination.admin()) {
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(admin, tp) > endAtKill, MirrorAssertions.TIMEOUT,
                    "mirroring of " + tp + " to go on on the new leader");
            }
            assertEquals(PartitionState.MIRRORING, MirrorAssertions.describe(mirrors, "crash", topic, 0).state());

            destination.start(leader);
            long endAtRestart = destinationEnd(tp);
            TestUtils.waitFor(() -> destinationEnd(tp) > endAtRestart, MirrorAssertions.TIMEOUT,
                "mirroring of " + tp + " to go on after node " + leader + " restarted");
        } finally {
            stopWriting.set(true);
        }
        int written = writer.get(MirrorAssertions.TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        log.info("The source writer wrote {} batches while the destination leader crashed", written);

        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic, 1);
        MirrorAssertions.assertSameRecords(source, destination, topic, 1);
        assertEquals(PartitionState.MIRRORING, MirrorAssertions.describe(mirrors, "crash", topic, 0).state());
    }

    /**
     * A move of the source's log start that the destination holds (a DeleteRecords on the source, under the default
     * {@code mirror.source.destructive.policy=hold}) stays held when the destination leader dies (SIGKILL): the new
     * leader keeps every mirrored record readable and the hold's start, so a crash neither applies the move early nor
     * restarts its hold; --apply-held then applies it on the new leader.
     */
    @Test
    void aHeldLogStartMoveSurvivesACrashOfTheDestinationLeader() throws Exception {
        String topic = "crash-held";
        TopicPartition tp = new TopicPartition(topic, 0);
        mirrorFully(topic, 3);
        long deleteBefore = destinationEnd(tp) - 1;
        List<String> mirrored = MirrorAssertions.readAll(destination, tp);
        try (Admin src = source.admin()) {
            src.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(deleteBefore))).all().get();
        }
        TestUtils.waitFor(() -> !MirrorAssertions.describe(mirrors, topic, topic, 0).heldLogStarts().isEmpty(), MirrorAssertions.TIMEOUT,
            "the destination holds the move of the source's log start to " + deleteBefore);
        List<HeldLogStart> held = MirrorAssertions.describe(mirrors, topic, topic, 0).heldLogStarts();
        assertEquals(deleteBefore, held.get(0).offset());

        int leader = killLeader(tp);
        Workloads.writeIdempotentAndTransactional(source.bootstrapServers(), topic, "crash-held-after");
        long sourceEnd;
        try (Admin src = source.admin()) {
            sourceEnd = MirrorAssertions.endOffset(src, tp);
        }
        TestUtils.waitFor(() -> destinationEnd(tp) == sourceEnd, MirrorAssertions.TIMEOUT, "the new leader mirrors on to " + sourceEnd);
        assertEquals(held, MirrorAssertions.describe(mirrors, topic, topic, 0).heldLogStarts(), "the same move, held since the same time");
        assertEquals(mirrored, MirrorAssertions.readAll(destination, tp).subList(0, mirrored.size()),
            "the new leader keeps every record mirrored before the move");
        destination.start(leader);

        mirrors.applyHeldChanges(topic, List.of(topic), List.of()).all().get();
        try (Admin admin = destination.admin()) {
            TestUtils.waitFor(() -> MirrorAssertions.startOffset(admin, tp) == deleteBefore, MirrorAssertions.TIMEOUT,
                "--apply-held moves the destination log start to " + deleteBefore);
        }
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        MirrorAssertions.assertSameRecords(source, destination, topic, 1);
    }

    /**
     * A node restarted after a crash that leads a fully mirrored partition again as soon as it is in sync may not have
     * loaded the partition's record from {@code __mirror_state} yet (here: behind a long history in its state partition,
     * while it already knows the mirror topic): it must go on mirroring from its log end all the same, and never cut the
     * log. Every replica keeps every batch mirrored before as it was, and no node logs a truncation of the partition.
     */
    @Test
    void aRestartedNodeThatLeadsAtOnceKeepsTheMirroredLog() throws Exception {
        String topic = "crash-kept";
        TopicPartition tp = new TopicPartition(topic, 0);
        createSourceTopic(topic, 3);
        mirrors.createClusterMirror(topic, MirrorAssertions.mirrorConfig(source)).all().get();
        writeStateHistory(topic, tp, 100_000);
        mirrors.startMirrorTopics(topic, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        MirrorAssertions.MirroredLog before = MirrorAssertions.captureMirroredLog(destination, mirrors, topic, tp);

        int leader = killLeader(tp);
        // Launched, not awaited: the node leads again as soon as it is back in the ISR, perhaps before its extension
        // has read the mirror state.
        destination.launch(leader);
        Leadership.moveTo(destination, tp, leader);
        destination.awaitReady(leader);
        MirrorAssertions.awaitState(mirrors, topic, topic, 1, PartitionState.MIRRORING);

        Workloads.writeIdempotentAndTransactional(source.bootstrapServers(), topic, "crash-kept-after");
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        MirrorAssertions.assertMirroredLogKept(destination, mirrors, topic, before);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic, 1);
        MirrorAssertions.assertSameRecords(source, destination, topic, 1);
        String truncation = "partition " + tp + ": truncating to offset";
        for (int node : destination.nodeIds()) {
            String output = destination.outputSinceLastStart(node);
            assertFalse(output.contains(truncation), () -> "node " + node + " truncated " + tp + ": "
                + output.substring(output.indexOf(truncation)).lines().findFirst().orElse(""));
        }
    }

    /**
     * Writes {@code records} tombstones of long-gone partitions to the {@code __mirror_state} partition that will hold
     * {@code tp}'s record, ahead of it: the history a production state topic has (every leader records its progress
     * every few seconds, and compaction leaves the active segment alone). A broker that starts reads all of it before
     * it learns {@code tp}'s record, while it already knows the mirror topic from {@code __mirror_metadata}.
     */
    private static void writeStateHistory(String mirror, TopicPartition tp, int records) throws Exception {
        // The record of the partition's first leader epoch (0, a new topic's), where the first leader records its progress.
        int partition = BuiltInPartitioner.partitionForKey(
            RecordCodec.encodeKey(PartitionStateRecord.stateLogKey(mirror, tp.topic(), tp.partition(), 0)), InternalTopics.STATE_PARTITIONS);
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(destination.bootstrapServers(), Map.of(
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024, ProducerConfig.LINGER_MS_CONFIG, 20))) {
            Future<RecordMetadata> last = null;
            for (int i = 0; i < records; i++) {
                byte[] key = RecordCodec.encodeKey(PartitionStateRecord.stateKey(mirror + "-gone", tp.topic() + "-gone-" + i, 0));
                last = producer.send(new ProducerRecord<>(InternalTopics.STATE, partition, key, null));
            }
            producer.flush();
            log.info("Wrote {} tombstones to {}-{} up to offset {}", records, InternalTopics.STATE, partition, last.get().offset());
        }
    }

    /**
     * Invariant 3 across a restart: a restarted broker that leads a mirror topic partition must refuse client writes from
     * its first request on, also before its extension is attached and has read the mirror metadata. The test restarts
     * the leader of a MIRRORING partition, makes it leader again as soon as it is in sync, and tries to produce to it
     * all the while, until the broker logs that it denied a write because the topic is a read-only mirror topic.
     *
     * <p>The broker fails closed: until its extension has loaded the mirror state it refuses client writes to every
     * topic (the contract in docs/DESIGN.md, point 3).
     */
    @Test
    void aRestartedLeaderRefusesWritesToMirrorTopicsBeforeItsExtensionIsReady() throws Exception {
        String topic = "crash-readonly";
        TopicPartition tp = new TopicPartition(topic, 0);
        mirrorFully(topic, 2);
        int leader = killLeader(tp);
        destination.launch(leader);
        List<String> accepted = new ArrayList<>();
        String denied = "Denied WRITE on topic '" + topic + "'";
        Map<String, Object> props = new HashMap<>(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false, ProducerConfig.ACKS_CONFIG, "1",
            ProducerConfig.RETRIES_CONFIG, 0, ProducerConfig.MAX_BLOCK_MS_CONFIG, 2_000, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 2_000,
            ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 4_000, ProducerConfig.METADATA_MAX_AGE_CONFIG, 200, ProducerConfig.LINGER_MS_CONFIG, 0));
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(destination.bootstrapServers(), props);
             Admin admin = destination.admin()) {
            TestUtils.waitFor(() -> {
                if (ProcessCluster.leader(admin, tp).orElse(-1) != leader) {
                    try {
                        admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get();
                    } catch (ExecutionException e) {
                        // not in sync yet
                    }
                }
                try {
                    long offset = producer.send(new ProducerRecord<>(topic, 0, null, Workloads.bytes("forbidden"))).get().offset();
                    accepted.add("offset " + offset + " (leader " + ProcessCluster.leader(admin, tp).orElse(-1) + ")");
                } catch (ExecutionException e) {
                    // refused (TOPIC_AUTHORIZATION_FAILED) or no leader reachable yet
                }
                return ProcessCluster.leader(admin, tp).orElse(-1) == leader && destination.outputSinceLastStart(leader).contains(denied);
            }, MirrorAssertions.TIMEOUT, "node " + leader + " to lead " + tp + " again and refuse a write to it");
        }
        destination.awaitReady(leader);
        assertEquals(List.of(), accepted, "client writes the destination accepted on mirror topic " + topic + " while it was MIRRORING");
    }

    /** Idempotent and transactional batches (commits and aborts) on the source until told to stop; returns the batch count. */
    private static int writeUntilStopped(String topic, AtomicBoolean stop) {
        int batches = 0;
        try (KafkaProducer<byte[], byte[]> idempotent = Workloads.producer(source.bootstrapServers(),
                 Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"));
             KafkaProducer<byte[], byte[]> transactional = Workloads.producer(source.bootstrapServers(),
                 Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "crash-writer"))) {
            transactional.initTransactions();
            for (int i = 0; i < 100_000 && !stop.get(); i++) {
                Workloads.sendBatch(idempotent, topic, 0, "live-idem-" + i, 5);
                transactional.beginTransaction();
                Workloads.sendBatch(transactional, topic, 0, "live-tx-" + i, 3);
                if (i % 4 == 3) {
                    transactional.abortTransaction();
                } else {
                    transactional.commitTransaction();
                }
                batches += 2;
            }
        } catch (Exception e) {
            throw new IllegalStateException("writing to the source failed after " + batches + " batches", e);
        }
        return batches;
    }

    /**
     * Invariant 4 after unclean crashes: once the topic is STOPPED, the leader's process is killed, restarted and made
     * leader again, and later a follower's; each time, new local idempotent and transactional producers write and commit
     * without error, some with producer ids the mirrored data also uses, and every acknowledged record is readable.
     */
    @Test
    @Order(1)
    void localProducersWithMirroredIdsWorkAfterUncleanCrashesOfLeaderAndFollower() throws Exception {
        String topic = "crash-collide";
        TopicPartition tp = new TopicPartition(topic, 0);
        // Producer ids come in blocks per broker, from 0 on a fresh cluster: a fresh 3-broker source whose producers
        // spread over its brokers' blocks uses the same low ids of each block that the destination's brokers hand out
        // (a restarted broker gets a new block, but the others keep theirs).
        Set<Long> mirroredIds = new HashSet<>();
        try (MirrorTestCluster collideSource = MirrorTestCluster.builder().name("crash-collide-source").brokers(3).start()) {
            try (Admin admin = collideSource.admin()) {
                Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 3)));
            }
            Workloads.writeWithManyProducers(collideSource.bootstrapServers(), topic, 120, 5);
            mirroredIds.addAll(MirrorAssertions.producerIds(collideSource, tp));
            mirrors.createClusterMirror("crash-collide", MirrorAssertions.mirrorConfig(collideSource)).all().get();
            mirrors.startMirrorTopics("crash-collide", List.of(topic), List.of()).all().get();
            MirrorAssertions.awaitCaughtUp(collideSource, destination, topic, 1);
            mirrors.stopMirrorTopics("crash-collide", List.of(topic), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, "crash-collide", topic, 1, PartitionState.STOPPED);
        }
        List<String> written = new ArrayList<>();
        Set<Long> localIds = new HashSet<>();
        writeWithCollidingIds(tp, mirroredIds, localIds, written, "after-stop");

        // The leader crashes: its producer state is rebuilt from the log on restart (no clean shutdown snapshot).
        int leader = killLeader(tp);
        writeWithCollidingIds(tp, mirroredIds, localIds, written, "leader-crashed");
        destination.start(leader);
        awaitMirroredProducersRemovedAfterRecovery(tp, leader);
        Leadership.moveTo(destination, tp, leader);
        writeWithCollidingIds(tp, mirroredIds, localIds, written, "crashed-leader-leads-again");

        // A follower crashes, comes back and takes the lead.
        int follower = destination.nodeIds().stream().filter(n -> n != leader).findFirst().orElseThrow();
        Leadership.awaitInSync(destination, tp, follower);
        destination.kill(follower);
        writeWithCollidingIds(tp, mirroredIds, localIds, written, "follower-crashed");
        destination.start(follower);
        awaitMirroredProducersRemovedAfterRecovery(tp, follower);
        Leadership.moveTo(destination, tp, follower);
        writeWithCollidingIds(tp, mirroredIds, localIds, written, "crashed-follower-leads");

        Set<Long> collisions = new HashSet<>(localIds);
        collisions.retainAll(mirroredIds);
        log.info("Local producer ids {}, of which mirrored ones: {}", localIds, collisions);
        assertTrue(collisions.size() >= 3, "local producers reused mirrored producer ids " + collisions
            + "; fewer than 3 collisions would prove little (local ids: " + localIds + ", mirrored ids: " + mirroredIds + ")");
        List<String> values = MirrorAssertions.readAll(destination, tp).stream().map(r -> r.split(" ")[2]).toList();
        assertTrue(values.containsAll(written), "every acknowledged local write is readable: " + written + " in " + values);
        assertEquals(written.size(), values.stream().filter(written::contains).count(), "no local write is duplicated: " + values);
        assertReplicasIdentical(tp);
    }

    /**
     * After an unclean shutdown Kafka recovers the segments after the recovery point (here: the whole small log) and
     * rebuilds the producer state from the batches, mirrored ones included: the MIRROR_PID_RESET barrier means nothing
     * to it. The extension must find them and remove them again on the restarted replica.
     */
    private static void awaitMirroredProducersRemovedAfterRecovery(TopicPartition tp, int node) throws InterruptedException {
        String line = "from the producer state of " + tp + " on broker " + node + " ";
        TestUtils.waitFor(() -> destination.outputSinceLastStart(node).contains(line), MirrorAssertions.TIMEOUT,
            "node " + node + " to remove the mirrored producers its recovery brought back into the producer state of " + tp
                + " (a log line '... mirrored producer(s) before the barrier ... " + line + "')");
    }

    /** All replicas hold the same batches (the crashed ones truncated and caught up). */
    private static void assertReplicasIdentical(TopicPartition tp) throws Exception {
        long end = destinationEnd(tp);
        List<Integer> replicas = MirrorAssertions.replicasOf(destination, tp);
        List<LogBatches.Batch> expected = LogBatches.read(destination.partitionDir(replicas.get(0), tp), end);
        for (int node : replicas) {
            TestUtils.waitFor(() -> LogBatches.read(destination.partitionDir(node, tp), end).equals(expected), MirrorAssertions.TIMEOUT,
                "replica on node " + node + " of " + tp + " to hold the same batches as node " + replicas.get(0));
        }
    }

    private static KafkaProducer<byte[], byte[]> destinationProducer(Map<String, Object> extra) {
        Map<String, Object> props = new HashMap<>(Map.of(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000,
            ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000));
        props.putAll(extra);
        return Workloads.producer(destination.bootstrapServers(), props);
    }

    /** The producer id of the batch holding {@code offset} in the leader's log (what the leader stored for our write). */
    private static long producerIdAt(TopicPartition tp, long offset) throws Exception {
        int leader = destination.leaderOf(tp);
        return LogBatches.read(destination.partitionDir(leader, tp), offset, Long.MAX_VALUE).stream()
            .filter(b -> b.baseOffset() <= offset && offset <= b.lastOffset())
            .findFirst().orElseThrow(() -> new AssertionError("no batch at offset " + offset + " of " + tp + " on node " + leader))
            .producerId();
    }

    /**
     * Writes with three new idempotent and two new transactional producers (each writes twice) and collects the
     * producer ids they were given, as stored with their batches. Once the leader took these writes, no mirrored
     * producer may be left in its producer state, except as a local producer that got the same id.
     */
    private static void writeWithCollidingIds(TopicPartition tp, Set<Long> mirroredIds, Set<Long> localIds, List<String> written,
                                              String tag) throws Exception {
        Set<Long> round = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            try (KafkaProducer<byte[], byte[]> idempotent = destinationProducer(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
                String value = "idem-" + tag + "-" + i;
                long offset = TestUtils.waitForValue(() -> {
                    try {
                        return Optional.of(idempotent.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, Workloads.bytes(value))).get().offset());
                    } catch (ExecutionException e) {
                        // Right after a leader change the new leader refuses writes until its producer state is clean.
                        if (e.getCause() instanceof TopicAuthorizationException) {
                            return Optional.empty();
                        }
                        throw e;
                    }
                }, MirrorAssertions.TIMEOUT, "idempotent write " + value);
                written.add(value);
                round.add(producerIdAt(tp, offset));
                String second = value + "-second";
                idempotent.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, Workloads.bytes(second))).get();
                written.add(second);
            }
        }
        for (int i = 0; i < 2; i++) {
            try (KafkaProducer<byte[], byte[]> transactional = destinationProducer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "dest-" + tag + "-" + i))) {
                transactional.initTransactions();
                for (int t = 0; t < 2; t++) {
                    transactional.beginTransaction();
                    String value = "tx-" + tag + "-" + i + "-" + t;
                    long offset = transactional.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, Workloads.bytes(value))).get().offset();
                    transactional.commitTransaction();
                    written.add(value);
                    round.add(producerIdAt(tp, offset));
                }
            }
        }
        localIds.addAll(round);
        Set<Long> stale = MirrorAssertions.producerIds(destination, tp);
        stale.retainAll(mirroredIds);
        stale.removeAll(localIds);
        int leader = destination.leaderOf(tp);
        assertTrue(stale.isEmpty(), "mirrored producers " + stale + " are in the producer state of leader " + leader
            + " of " + tp + " after local writes (" + tag + ")");
        Set<Long> colliding = new HashSet<>(round);
        colliding.retainAll(mirroredIds);
        log.info("Round {} on leader {}: local producer ids {}, of which mirrored ones: {}", tag, leader, round, colliding);
    }
}
