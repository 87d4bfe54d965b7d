package io.clustermirror.it;

import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Every client write path against a MIRRORING topic, on a destination that enforces ACLs with the client as a super
 * user: whatever is refused is refused by the read-only rule, not for want of an ACL, and an ordinary topic of the same
 * destination takes each of the same calls (the control). Refused: produce (plain, idempotent, transactional), adding a
 * partition to a transaction (AddPartitionsToTxn), record deletion, new partitions, topic deletion, config changes
 * (incremental and legacy). Not refusable on stock Kafka:
 * {@code Admin.abortTransaction} (authorized on the cluster), which the mirror repairs. Allowed: replica reassignment and
 * leader elections. After each call the source writes more and the topic must still mirror it, byte for byte, with
 * nothing mirrored before cut or copied again (but the repaired abort marker).
 */
@MirrorClusterTest(topologies = "topologies")
class WritePathsTest {
    private static final Logger log = LoggerFactory.getLogger(WritePathsTest.class);
    private static final String MIRROR = "paths";
    private static final String TOPIC = "paths";
    private static final int PARTITIONS = 2;

    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;

    /**
     * Three destination brokers: the mirror topic has three replicas, so they can be reordered and leaders elected.
     * ACLs are enforced on every node (the test kit gives broker configs to the controller too), and PLAINTEXT
     * clients are User:ANONYMOUS, a super user: only the read-only rule can refuse them.
     */
    static ClusterPair.Topologies topologies() {
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("paths-source").topology(),
            MirrorTestCluster.builder().name("paths-destination").brokers(3)
                .brokerConfig("super.users", "User:ANONYMOUS")
                .brokerConfig("allow.everyone.if.no.acl.found", "false").topology());
    }

    @BeforeAll
    static void mirrorAllKinds() throws Exception {
        try (Admin admin = clusters.source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1)));
        }
        Workloads.writeAllKinds(clusters.source.bootstrapServers(), TOPIC, PARTITIONS, 2);
        clusters.mirrors.createClusterMirror(MIRROR, MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, TOPIC, PARTITIONS);
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, TOPIC, PARTITIONS, PartitionState.MIRRORING);
        try (Admin admin = clusters.destination.admin()) {
            log.info("Destination transaction.version: {}", admin.describeFeatures().featureMetadata().get().finalizedFeatures()
                .get("transaction.version"));
        }
    }

    /** A client call that writes to a topic of the destination; it throws what the client sees if it is refused. */
    @FunctionalInterface
    private interface TopicCall {
        void apply(String topic) throws Exception;
    }

    /** The write paths the read-only rule refuses. */
    private enum Write {
        PLAIN_PRODUCE(topic -> produce(topic, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false, ProducerConfig.ACKS_CONFIG, "1"))),
        IDEMPOTENT_PRODUCE(topic -> produce(topic, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))),
        TRANSACTIONAL_PRODUCE(WritePathsTest::produceInTransaction),
        /** What transactional clients send before they produce where the transaction version is below 2. */
        ADD_PARTITIONS_TO_TXN(topic -> LegacyClientRequests.addPartitionToTransaction(clusters.destination, topic, "paths-add-" + topic)),
        DELETE_RECORDS(topic -> admin(a -> a.deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(1))).all().get())),
        CREATE_PARTITIONS(topic -> admin(a -> a.createPartitions(Map.of(topic, NewPartitions.increaseTo(PARTITIONS + 1))).all().get())),
        DELETE_TOPIC(topic -> admin(a -> a.deleteTopics(List.of(topic)).all().get())),
        INCREMENTAL_ALTER_CONFIGS(topic -> admin(a -> a.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic),
            List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET)))).all().get())),
        /** The legacy AlterConfigs request of the {@code Admin.alterConfigs} that Kafka 4.0 removed. */
        LEGACY_ALTER_CONFIGS(topic -> LegacyClientRequests.alterConfigs(clusters.destination, topic, Map.of("retention.ms", "3600000")));

        final TopicCall call;

        Write(TopicCall call) {
            this.call = call;
        }
    }

    @ParameterizedTest
    @EnumSource(Write.class)
    void anOrdinaryTopicOfTheDestinationTakesIt(Write write) throws Exception {
        String topic = "ordinary-" + write.name().toLowerCase(Locale.ROOT).replace('_', '-');
        try (Admin admin = clusters.destination.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, PARTITIONS, (short) 3)));
        }
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(), Map.of())) {
            Workloads.sendBatch(producer, topic, 0, "ordinary", 2); // records to delete
        }
        write.call.apply(topic);
    }

    @ParameterizedTest
    @EnumSource(Write.class)
    void isRefusedOnAMirroringTopic(Write write) throws Exception {
        List<MirrorAssertions.MirroredLog> before = captureMirroredLogs();
        TopicShape shapeBefore = topicShape();
        Exception thrown = assertThrows(Exception.class, () -> write.call.apply(TOPIC), write + " of a MIRRORING topic must be refused");
        Throwable refusal = thrown instanceof ExecutionException ? thrown.getCause() : thrown;
        log.info("{} of MIRRORING topic {} refused with {}", write, TOPIC, refusal.toString());
        assertEquals(TopicAuthorizationException.class, refusal.getClass(), write + " is refused with " + refusal);
        assertStillMirroring("after-" + write, before);
        assertEquals(shapeBefore, topicShape(), "partitions and retention.ms of " + TOPIC + " after the refused " + write);
    }

    /**
     * WriteTxnMarkers is authorized on the CLUSTER, so the marker lands in the MIRRORING partition; the mirror cuts it
     * once the source writes more and copies the source's data there.
     */
    @Test
    void anAbortMarkerWrittenWithAbortTransactionIsRepaired() throws Exception {
        TopicPartition tp = new TopicPartition(TOPIC, 1);
        long markerAt = Workloads.writeForeignAbortMarker(clusters.source, clusters.destination, tp, "paths-open-tx");
        assertMirrorsMoreWrites("after-abort-transaction");
        MirrorPartitionDescription d = MirrorAssertions.describe(clusters.mirrors, MIRROR, TOPIC, tp.partition());
        assertEquals(List.of(markerAt, markerAt + 1), List.of(d.truncatedFromOffset(), d.truncatedToOffset()),
            "describe reports the cut of the marker: " + d);
    }

    @Test
    void reassigningReplicasIsAllowed() throws Exception {
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        List<Integer> replicas = MirrorAssertions.replicasOf(clusters.destination, tp);
        List<Integer> reordered = new ArrayList<>(replicas);
        Collections.reverse(reordered);
        List<MirrorAssertions.MirroredLog> before = captureMirroredLogs();
        reassign(tp, reordered);
        assertStillMirroring("after-reorder", before);

        // A move: the leader's replica leaves (leadership moves to another replica), then comes back empty and
        // copies the new leader's log.
        int leader = clusters.destination.leaderOf(tp);
        List<Integer> without = reordered.stream().filter(b -> b != leader).toList();
        before = captureMirroredLogs();
        reassign(tp, without);
        assertNotEquals(leader, clusters.destination.leaderOf(tp), "the leader of " + tp + " after its replica left");
        assertStillMirroring("after-replica-removed", before);

        before = captureMirroredLogs();
        reassign(tp, replicas);
        assertStillMirroring("after-replica-added", before);
    }

    @Test
    void aPreferredLeaderElectionIsAllowed() throws Exception {
        TopicPartition tp = new TopicPartition(TOPIC, 1);
        int leader = clusters.destination.leaderOf(tp);
        List<Integer> replicas = MirrorAssertions.replicasOf(clusters.destination, tp);
        int preferred = replicas.stream().filter(b -> b != leader).findFirst().orElseThrow();
        Leadership.awaitInSync(clusters.destination, tp, preferred);
        List<Integer> reordered = new ArrayList<>(replicas);
        reordered.remove(Integer.valueOf(preferred));
        reordered.add(0, preferred);
        reassign(tp, reordered);
        assertEquals(leader, clusters.destination.leaderOf(tp), "reordering the replicas of " + tp + " kept its leader");

        List<MirrorAssertions.MirroredLog> before = captureMirroredLogs();
        try (Admin admin = clusters.destination.admin()) {
            assertEquals(Optional.empty(), admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get().get(tp),
                "the preferred election of " + tp);
            TestUtils.waitFor(() -> clusters.destination.leaderOf(tp) == preferred, MirrorAssertions.TIMEOUT,
                "broker " + preferred + " to lead " + tp);
            assertStillMirroring("after-preferred-election", before);
            assertInstanceOf(ElectionNotNeededException.class,
                admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get().get(tp).orElse(null),
                "a second preferred election of " + tp);
        }
    }

    /** A partition whose leader is in sync needs no unclean election: Kafka answers ELECTION_NOT_NEEDED, nothing changes. */
    @Test
    void anUncleanElectionOfAPartitionWithALeaderChangesNothing() throws Exception {
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        int leader = clusters.destination.leaderOf(tp);
        int leaderEpoch = clusters.destination.broker(leader).leaderLogState(tp).orElseThrow().leaderEpoch();
        List<MirrorAssertions.MirroredLog> before = captureMirroredLogs();
        try (Admin admin = clusters.destination.admin()) {
            Optional<Throwable> result = admin.electLeaders(ElectionType.UNCLEAN, Set.of(tp)).partitions().get().get(tp);
            log.info("Unclean election of {} (leader {} in sync): {}", tp, leader, result);
            assertInstanceOf(ElectionNotNeededException.class, result.orElse(null), "the unclean election of " + tp);
        }
        assertStillMirroring("after-unclean-election", before);
        assertEquals(leader, clusters.destination.leaderOf(tp), "leader of " + tp);
        assertEquals(leaderEpoch, clusters.destination.broker(leader).leaderLogState(tp).orElseThrow().leaderEpoch(),
            "leader epoch of " + tp);
    }

    /** What the destination holds of every partition of the mirror topic now. */
    private static List<MirrorAssertions.MirroredLog> captureMirroredLogs() throws Exception {
        List<MirrorAssertions.MirroredLog> logs = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            logs.add(MirrorAssertions.captureMirroredLog(clusters.destination, clusters.mirrors, MIRROR, new TopicPartition(TOPIC, p)));
        }
        return logs;
    }

    /** The topic mirrors new source writes and still holds everything it held before as it was, on every replica. */
    private static void assertStillMirroring(String tag, List<MirrorAssertions.MirroredLog> before) throws Exception {
        assertMirrorsMoreWrites(tag);
        for (MirrorAssertions.MirroredLog partition : before) {
            MirrorAssertions.assertMirroredLogKept(clusters.destination, clusters.mirrors, MIRROR, partition);
        }
    }

    /** The source writes more; the destination catches up, identical batch for batch and record for record, MIRRORING. */
    private static void assertMirrorsMoreWrites(String tag) throws Exception {
        Workloads.writeToEveryPartition(clusters.source.bootstrapServers(), TOPIC, PARTITIONS, tag, 3);
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, TOPIC, PARTITIONS);
        MirrorAssertions.assertIdenticalLogs(clusters.source, clusters.destination, TOPIC, PARTITIONS);
        MirrorAssertions.assertSameRecords(clusters.source, clusters.destination, TOPIC, PARTITIONS);
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, TOPIC, PARTITIONS, PartitionState.MIRRORING);
    }

    /** What the refused calls would have changed but the records: the partition count and a config. */
    private record TopicShape(int partitions, String retentionMs) {
    }

    private static TopicShape topicShape() throws Exception {
        try (Admin admin = clusters.destination.admin()) {
            int partitions = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).partitions().size();
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
            String retention = admin.describeConfigs(List.of(resource)).all().get().get(resource).get("retention.ms").value();
            return new TopicShape(partitions, retention);
        }
    }

    /** Reassigns the partition's replicas and waits until the reassignment is done. */
    private static void reassign(TopicPartition tp, List<Integer> replicas) throws Exception {
        try (Admin admin = clusters.destination.admin()) {
            admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(replicas)))).all().get();
            TestUtils.waitFor(() -> admin.listPartitionReassignments(Set.of(tp)).reassignments().get().isEmpty()
                    && Leadership.partitionInfo(admin, tp).replicas().stream().map(Node::id).toList().equals(replicas),
                MirrorAssertions.TIMEOUT, "the replicas of " + tp + " to be " + replicas);
        }
    }

    @FunctionalInterface
    private interface AdminCall {
        void run(Admin admin) throws Exception;
    }

    private static void admin(AdminCall call) throws Exception {
        try (Admin admin = clusters.destination.admin()) {
            call.run(admin);
        }
    }

    /** Producer settings that make a refused produce fail within seconds rather than retry for a minute. */
    private static Map<String, Object> failFast(Map<String, Object> overrides) {
        Map<String, Object> config = new HashMap<>(overrides);
        config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000);
        config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        return config;
    }

    private static void produce(String topic, Map<String, Object> config) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(), failFast(config))) {
            producer.send(Workloads.record(topic, 0, "written", 0)).get();
        }
    }

    /**
     * One record in a transaction, committed; aborted if the send fails (the failure is rethrown). At transaction version 2
     * (this destination's) the producer sends no AddPartitionsToTxn: the broker authorizes the Produce on the topic
     * before it adds the partition to the transaction itself.
     */
    private static void produceInTransaction(String topic) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(),
                failFast(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "paths-tx-" + topic)))) {
            producer.initTransactions();
            producer.beginTransaction();
            try {
                producer.send(Workloads.record(topic, 0, "written-in-transaction", 0)).get();
            } catch (ExecutionException e) {
                producer.abortTransaction();
                throw e;
            }
            producer.commitTransaction();
        }
    }
}
