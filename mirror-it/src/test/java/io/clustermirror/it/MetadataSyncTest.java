package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The metadata sync on real clusters: a 1-broker source with ACLs enabled and a 2-broker
 * destination, shared by the tests; each test has its own mirror (refresh every second, except the tests of the default
 * config) and topics. On both clusters the tests' clients (User:ANONYMOUS) are super users, so that the ACLs the tests
 * create on the source, and those the sync copies, change what the clusters hold, not what the tests may do.
 */
@MirrorClusterTest(topologies = "topologies")
class MetadataSyncTest {
    private static final Duration TIMEOUT = MirrorAssertions.TIMEOUT;
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;
    private static ClusterMirrorAdmin mirrors;

    /** A source that enforces ACLs (the sync copies them), a destination of two brokers. */
    static ClusterPair.Topologies topologies() {
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("sync-source").brokers(1)
                .brokerConfig("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                .brokerConfig("allow.everyone.if.no.acl.found", "true")
                .brokerConfig("super.users", "User:ANONYMOUS").topology(),
            MirrorTestCluster.builder().name("sync-destination").brokers(2).topology());
    }

    @BeforeAll
    static void nameTheClusters() {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
    }

    // ---- consumer groups ----

    /**
     * Failover with zero duplicates and zero skips, with nothing configured but the source's bootstrap.servers (every
     * group is synced by default, at the default refresh interval): a group consumes part of a 6-partition topic on
     * the source and commits; after a sync the same group id resumes on the destination exactly at the next record
     * of every partition, and reads each remaining record once.
     */
    @Test
    void withTheDefaultConfigAGroupResumesOnTheDestinationAtTheNextRecordOfEveryPartition() throws Exception {
        String topic = "orders";
        String group = "app-orders";
        createSourceTopic(topic, 6, Map.of());
        produce(topic, 6, 20);
        Map<TopicPartition, Long> consumed = new HashMap<>();
        for (int p = 0; p < 6; p++) {
            consumed.put(new TopicPartition(topic, p), 3L + 2 * p); // a different point in every partition
        }
        consumePartAndCommit(source, group, topic, consumed);

        createDefaultMirror("m-groups");
        mirrors.startMirrorTopics("m-groups", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 6);
        awaitCommitted(destination, group, consumed);

        moveConsumersToDestination("m-groups", topic);
        Map<TopicPartition, List<String>> resumed = consumeToEnd(destination, group, topic, 6);
        for (TopicPartition tp : consumed.keySet()) {
            List<String> expected = new ArrayList<>();
            for (long o = consumed.get(tp); o < 20; o++) {
                expected.add(o + " " + tp.topic() + "-" + tp.partition() + "-" + o);
            }
            assertEquals(expected, resumed.get(tp), "records of " + tp + " read on the destination after the failover");
        }
        mirrors.deleteClusterMirror("m-groups").all().get(); // its ACL sync (on by default) would copy the ACL tests' ACLs
    }

    /**
     * The failover of the consumer group test: the topic is stopped (after the sync copied the group's offsets) and
     * awaited STOPPED; from then on the group's offsets belong to the destination.
     */
    private static void moveConsumersToDestination(String mirror, String topic) throws Exception {
        mirrors.stopMirrorTopics(mirror, List.of(topic), List.of()).all().get();
        TestUtils.waitFor(() -> mirrors.describeClusterMirrors(List.of(mirror)).all().get().get(mirror).topics().stream()
                .filter(t -> t.topic().equals(topic)).flatMap(t -> t.partitions().stream())
                .allMatch(p -> p.state() == io.clustermirror.common.PartitionState.STOPPED),
            TIMEOUT, topic + " did not stop");
    }

    /** A group whose source offset is past what the mirror copied (an open transaction) gets the destination end. */
    @Test
    void groupOffsetBeyondTheMirroredEndIsClampedToTheDestinationEnd() throws Exception {
        String topic = "clamp-high";
        TopicPartition tp = new TopicPartition(topic, 0);
        createSourceTopic(topic, 1, Map.of());
        produce(topic, 1, 10);
        try (KafkaProducer<byte[], byte[]> tx = Workloads.producer(source.bootstrapServers(), Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "clamp-high-tx", ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 120_000))) {
            tx.initTransactions();
            tx.beginTransaction();
            for (int i = 0; i < 5; i++) {
                tx.send(new ProducerRecord<>(topic, 0, null, Workloads.bytes("open-" + i)));
            }
            tx.flush();
            // A read_uncommitted consumer of the source got to 15; the mirror (read_committed) stops at the LSO, 10.
            commitOnSource("clamp-high-g", Map.of(tp, 15L));
            createMirror("m-clamp-high", Map.of("mirror.groups.include", "clamp-high-g"));
            mirrors.startMirrorTopics("m-clamp-high", List.of(topic), List.of()).all().get();
            try (Admin dst = destination.admin()) {
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(dst, tp) == 10, TIMEOUT, "destination stops at the source LSO 10");
            }
            awaitCommitted(destination, "clamp-high-g", Map.of(tp, 10L));
            tx.commitTransaction();
        }
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        awaitCommitted(destination, "clamp-high-g", Map.of(tp, 15L)); // follows the source once mirrored
    }

    /** A group whose source offset is below the destination log start gets the destination log start. */
    @Test
    void groupOffsetBelowTheDestinationLogStartIsClampedToIt() throws Exception {
        String topic = "clamp-low";
        TopicPartition tp = new TopicPartition(topic, 0);
        createSourceTopic(topic, 1, Map.of());
        produce(topic, 1, 20);
        commitOnSource("clamp-low-g", Map.of(tp, 5L));
        try (Admin src = source.admin()) {
            src.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(10))).all().get();
        }
        createMirror("m-clamp-low", Map.of("mirror.groups.include", "clamp-low-.*"));
        mirrors.startMirrorTopics("m-clamp-low", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        awaitCommitted(destination, "clamp-low-g", Map.of(tp, 10L));
    }

    /** A group with active members on the destination is never overwritten; once it is empty, it is synced. */
    @Test
    void groupWithActiveMembersOnTheDestinationIsNeverOverwritten() throws Exception {
        String topic = "busy";
        TopicPartition tp = new TopicPartition(topic, 0);
        createSourceTopic(topic, 1, Map.of());
        produce(topic, 1, 20);
        createMirror("m-busy", Map.of("mirror.groups.include", "busy-.*"));
        mirrors.startMirrorTopics("m-busy", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);

        try (KafkaConsumer<byte[], byte[]> member = consumer(destination, "busy-active", "earliest")) {
            member.subscribe(List.of(topic));
            TestUtils.waitFor(() -> {
                member.poll(Duration.ofMillis(100));
                return !member.assignment().isEmpty();
            }, TIMEOUT, "the destination consumer joined busy-active");
            member.commitSync(Map.of(tp, new OffsetAndMetadata(3)));

            commitOnSource("busy-active", Map.of(tp, 7L));
            // A control group in the same mirror shows that sync rounds ran after the source commit: two changes
            // of it reach the destination, so at least one whole round saw busy-active's new source offset.
            commitOnSource("busy-control", Map.of(tp, 7L));
            awaitCommitted(destination, "busy-control", Map.of(tp, 7L));
            commitOnSource("busy-control", Map.of(tp, 9L));
            awaitCommitted(destination, "busy-control", Map.of(tp, 9L));
            assertEquals(Map.of(tp, 3L), committed(destination, "busy-active"), "an active group is not overwritten");
            member.poll(Duration.ofMillis(100)); // still a live member
        }
        awaitCommitted(destination, "busy-active", Map.of(tp, 7L));
    }

    // ---- share groups ----

    /**
     * Share groups fail over like consumer groups: a share consumer of the source accepts the first 3 + 2p records of
     * each partition p of a 3-partition topic, releases the 10 after them, and closes (the group is empty, its start
     * offset at 3 + 2p). The sync gives the destination's group of the same id the same start offset per partition; after
     * the topic is stopped, a share consumer of that group on the destination reads exactly the records from there to
     * the end of each partition: none before the synced start offset, none twice, none missing. Without the sync, the
     * destination group (share.auto.offset.reset at its default, latest) would read nothing.
     */
    @Test
    void aShareGroupResumesOnTheDestinationAtItsSyncedStartOffsets() throws Exception {
        String topic = "jobs";
        String group = "jobs-share";
        createSourceTopic(topic, 3, Map.of());
        Map<TopicPartition, Long> accepted = new HashMap<>();
        for (int p = 0; p < 3; p++) {
            accepted.put(new TopicPartition(topic, p), 3L + 2 * p);
        }
        Map<TopicPartition, Integer> firstRecords = new HashMap<>();
        accepted.forEach((tp, n) -> firstRecords.put(tp, n.intValue()));
        produce(firstRecords);
        try (Admin admin = source.admin()) {
            ConfigResource groupResource = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(groupResource, List.of(set("share.auto.offset.reset", "earliest")))).all().get();
        }
        produce(topic, 3, 10);
        acceptFirstRecords(group, topic, accepted);
        awaitShareStartOffsets(source, group, accepted);

        createMirror("m-share", Map.of());
        mirrors.startMirrorTopics("m-share", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 3);
        awaitShareStartOffsets(destination, group, accepted);

        moveConsumersToDestination("m-share", topic);
        Map<TopicPartition, List<Long>> expected = new HashMap<>();
        accepted.forEach((tp, n) -> expected.put(tp, LongStream.range(n, n + 10).boxed().toList()));
        assertEquals(expected, shareConsume(destination, group, topic, Map.of(
            new TopicPartition(topic, 0), 10L, new TopicPartition(topic, 1), 10L, new TopicPartition(topic, 2), 10L)),
            "offsets the destination share group reads per partition after the failover");
    }

    /**
     * A share consumer of the source accepts the first {@code accepted} records of each partition, releases the others
     * and closes. It keeps polling until each partition had a release written after its acceptance: the share
     * coordinator records the start offset a partition had before each write, so only a later write records the
     * start offset past the accepted records.
     */
    private static void acceptFirstRecords(String group, String topic, Map<TopicPartition, Long> accepted) throws Exception {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        Map<TopicPartition, Long> acceptedSoFar = new HashMap<>();
        Set<TopicPartition> releasedAfterAcceptance = new HashSet<>();
        try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            TestUtils.waitFor(() -> {
                Set<TopicPartition> acceptedBefore = new HashSet<>();
                accepted.forEach((tp, n) -> {
                    if (acceptedSoFar.getOrDefault(tp, 0L).equals(n)) {
                        acceptedBefore.add(tp);
                    }
                });
                Set<TopicPartition> released = new HashSet<>();
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (r.offset() < accepted.get(tp)) {
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        acceptedSoFar.merge(tp, 1L, Long::sum);
                    } else {
                        c.acknowledge(r, AcknowledgeType.RELEASE);
                        released.add(tp);
                    }
                }
                c.commitSync();
                released.stream().filter(acceptedBefore::contains).forEach(releasedAfterAcceptance::add);
                return releasedAfterAcceptance.equals(accepted.keySet());
            }, TIMEOUT, "the source share consumer accepts " + accepted + " records per partition and releases the next ones");
        }
        assertEquals(accepted, acceptedSoFar, "records the source share group accepted, each once");
    }

    /**
     * A share consumer of {@code group} reads until it got {@code count} records of each partition, accepts them and
     * closes; returns the offsets it read per partition, sorted (values checked against their offset).
     */
    private static Map<TopicPartition, List<Long>> shareConsume(MirrorTestCluster cluster, String group, String topic,
                                                                Map<TopicPartition, Long> count) throws Exception {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        Map<TopicPartition, List<Long>> read = new HashMap<>();
        try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            TestUtils.waitFor(() -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    assertEquals(topic + "-" + r.partition() + "-" + r.offset(), new String(r.value(), StandardCharsets.UTF_8));
                    read.computeIfAbsent(tp, k -> new ArrayList<>()).add(r.offset());
                }
                return count.entrySet().stream().allMatch(e -> read.getOrDefault(e.getKey(), List.of()).size() >= e.getValue());
            }, TIMEOUT, "the share consumer of " + group + " on " + cluster.name() + " reads " + count + " records per partition");
            c.commitSync(); // implicit acknowledgement: accepts what the last poll returned
        }
        read.values().forEach(offsets -> offsets.sort(null));
        return read;
    }

    private static void awaitShareStartOffsets(MirrorTestCluster cluster, String group, Map<TopicPartition, Long> expected) throws Exception {
        AtomicReference<Map<TopicPartition, Long>> last = new AtomicReference<>(Map.of());
        try {
            TestUtils.waitFor(() -> {
                last.set(shareStartOffsets(cluster, group));
                return last.get().equals(expected);
            }, TIMEOUT, "share group " + group + " on " + cluster.name() + " starts at " + expected);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last read: " + last.get(), e);
        }
    }

    private static Map<TopicPartition, Long> shareStartOffsets(MirrorTestCluster cluster, String group) throws Exception {
        try (Admin admin = cluster.admin()) {
            Map<TopicPartition, Long> out = new HashMap<>();
            admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group).get()
                .forEach((tp, info) -> {
                    if (info != null) {
                        out.put(tp, info.startOffset());
                    }
                });
            return out;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return Map.of();
            }
            throw e;
        }
    }

    // ---- partitions ----

    /** Source partitions 3 -> 6 while mirroring: the destination grows to 6 and mirrors all identically. */
    @Test
    void sourcePartitionGrowthIsMirrored() throws Exception {
        String topic = "grow";
        createSourceTopic(topic, 3, Map.of());
        produce(topic, 3, 10);
        createMirror("m-grow", Map.of());
        mirrors.startMirrorTopics("m-grow", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 3);

        try (Admin src = source.admin()) {
            src.createPartitions(Map.of(topic, NewPartitions.increaseTo(6))).all().get();
        }
        produce(topic, 6, 10);
        try (Admin dst = destination.admin()) {
            TestUtils.waitFor(() -> dst.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size() == 6,
                TIMEOUT, "destination topic grows to 6 partitions");
        }
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 6);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic, 6);
        MirrorAssertions.assertSameRecords(source, destination, topic, 6);
        TestUtils.waitFor(() -> {
            MirrorTopicDescription t = mirrors.describeClusterMirrors(List.of("m-grow")).all().get().get("m-grow").topics().get(0);
            return t.partitions().size() == 6 && t.partitions().stream().allMatch(p -> p.state() == PartitionState.MIRRORING);
        }, TIMEOUT, "all 6 partitions of 'grow' are MIRRORING");
    }

    // ---- topic configs ----

    /** Changed source configs reach the destination (set and removed); excluded ones never do; clients stay read-only. */
    @Test
    void sourceTopicConfigChangesReachTheDestinationExceptExcludedOnes() throws Exception {
        String topic = "conf";
        createSourceTopic(topic, 1, Map.of("retention.ms", "3600000", "max.message.bytes", "100000"));
        produce(topic, 1, 5);
        // Policy apply: the copy of every change at once is what this test is about (HeldSourceChangesTest holds them).
        createMirror("m-conf", Map.of("mirror.topic.properties.exclude", "max\\.message\\.bytes",
            MirrorConfig.SOURCE_DESTRUCTIVE_POLICY, "apply"));
        mirrors.startMirrorTopics("m-conf", List.of(topic), List.of()).all().get();
        assertEquals("3600000", explicitConfigs(destination, topic).get("retention.ms"), "copied at start");

        alterOnSource(topic, List.of(
            set("retention.ms", "7200000"), set("cleanup.policy", "compact"),
            set("unclean.leader.election.enable", "true"),   // never copied
            set("max.message.bytes", "200000")));            // excluded by the mirror's config
        TestUtils.waitFor(() -> {
            Map<String, String> c = explicitConfigs(destination, topic);
            return "7200000".equals(c.get("retention.ms")) && "compact".equals(c.get("cleanup.policy"));
        }, TIMEOUT, "changed source configs reach the destination");
        Map<String, String> synced = explicitConfigs(destination, topic);
        assertFalse(synced.containsKey("unclean.leader.election.enable"), "never-copied config stays unset: " + synced);
        assertFalse(synced.containsKey("max.message.bytes"), "excluded config stays unset: " + synced);

        alterOnSource(topic, List.of(new AlterConfigOp(new ConfigEntry("retention.ms", null), AlterConfigOp.OpType.DELETE)));
        TestUtils.waitFor(() -> !explicitConfigs(destination, topic).containsKey("retention.ms"), TIMEOUT,
            "a config removed at the source is removed on the destination");

        // The sync's own change passed the read-only rule; a client's still does not.
        try (Admin dst = destination.admin()) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> dst.incrementalAlterConfigs(Map.of(
                new ConfigResource(ConfigResource.Type.TOPIC, topic), List.of(set("retention.ms", "1")))).all().get());
            assertInstanceOf(TopicAuthorizationException.class, e.getCause());
        }
    }

    // ---- ACLs ----

    /**
     * A matching ACL on a mirrored topic added at the source appears on the destination and disappears there when
     * removed at the source, also after a restart of the broker running the sync; a non-matching one is not copied; an
     * ACL created directly on the destination is never touched.
     */
    @Test
    void aclsFollowTheSourceAndOnlyTheMirrorsOwnAreRemoved() throws Exception {
        AclBinding topicAcl = acl(ResourceType.TOPIC, "acl-orders", PatternType.LITERAL, "User:alice");
        AclBinding groupAcl = acl(ResourceType.GROUP, "acl-group", PatternType.PREFIXED, "User:alice");
        AclBinding notIncluded = acl(ResourceType.TOPIC, "other-orders", PatternType.LITERAL, "User:alice");
        AclBinding localOnly = acl(ResourceType.TOPIC, "acl-local", PatternType.LITERAL, "User:bob");
        createSourceTopic("acl-orders", 1, Map.of());
        createSourceTopic("other-orders", 1, Map.of());
        try (Admin src = source.admin(); Admin dst = destination.admin()) {
            src.createAcls(List.of(topicAcl, groupAcl, notIncluded)).all().get();
            dst.createAcls(List.of(localOnly)).all().get();
            createMirror("m-acl", Map.of("mirror.acl.include", "acl-.*"));
            mirrors.startMirrorTopics("m-acl", List.of("acl-orders", "other-orders"), List.of()).all().get();

            TestUtils.waitFor(() -> acls(dst).containsAll(List.of(topicAcl, groupAcl)), TIMEOUT, "source ACLs reach the destination");
            assertFalse(acls(dst).contains(notIncluded), "an ACL not matching mirror.acl.include is not copied");

            // The sync runs next to the mirror controller. Restart that broker: the sync that takes over must know,
            // from __mirror_state, which ACLs the mirror created.
            destination.restartBroker(destination.leaderOf(new TopicPartition(InternalTopics.COMMANDS, 0)));
            src.deleteAcls(List.of(topicAcl.toFilter())).all().get();
            TestUtils.waitFor(() -> !acls(dst).contains(topicAcl), TIMEOUT, "an ACL removed at the source is removed on the destination");
            Set<AclBinding> after = acls(dst);
            assertTrue(after.contains(groupAcl), "the other mirrored ACL stays: " + after);
            assertTrue(after.contains(localOnly), "an ACL created on the destination is untouched: " + after);
        }
    }

    /**
     * With nothing configured but the source's bootstrap.servers, the ACL of a synced group (every group by default) is
     * copied and a cluster ACL is not: the sync creates the ACLs it wants in one request, which the controller applies
     * atomically, so once the group ACL is on the destination the cluster ACL would be too had it been selected.
     */
    @Test
    void theDefaultConfigCopiesGroupAclsButNotClusterAcls() throws Exception {
        AclBinding groupAcl = acl(ResourceType.GROUP, "dflt-app", PatternType.LITERAL, "User:alice");
        AclBinding clusterAcl = clusterAcl();
        try (Admin src = source.admin(); Admin dst = destination.admin()) {
            src.createAcls(List.of(groupAcl, clusterAcl)).all().get();
            try {
                createDefaultMirror("m-acl-default");
                TestUtils.waitFor(() -> acls(dst).contains(groupAcl), TIMEOUT, "the source's group ACL reaches the destination");
                assertFalse(acls(dst).contains(clusterAcl), "a cluster ACL is not copied by default");
            } finally {
                src.deleteAcls(List.of(clusterAcl.toFilter())).all().get();
                mirrors.deleteClusterMirror("m-acl-default").all().get(); // a mirror with no topics: deletable at once
            }
        }
    }

    /** A source cluster ACL is copied when kafka-cluster is listed in mirror.acl.include, and removed with the source's. */
    @Test
    void clusterAclsAreCopiedWhenKafkaClusterIsListed() throws Exception {
        AclBinding clusterAcl = clusterAcl();
        try (Admin src = source.admin(); Admin dst = destination.admin()) {
            src.createAcls(List.of(clusterAcl)).all().get();
            try {
                createMirror("m-acl-cluster", Map.of("mirror.acl.include", "kafka-cluster"));
                TestUtils.waitFor(() -> acls(dst).contains(clusterAcl), TIMEOUT, "the cluster ACL reaches the destination");
            } finally {
                src.deleteAcls(List.of(clusterAcl.toFilter())).all().get();
            }
            TestUtils.waitFor(() -> !acls(dst).contains(clusterAcl), TIMEOUT,
                "the cluster ACL removed at the source is removed on the destination");
            mirrors.deleteClusterMirror("m-acl-cluster").all().get();
        }
    }

    /**
     * The hostile source ACLs: {@code DENY User:* ALL TOPIC:*} and {@code ALLOW User:evil ALL TOPIC:*}, with
     * {@code mirror.acl.include=.*}. By default neither reaches the destination, while an ALLOW of a named user on the
     * mirrored topic, created on the source in the same request, does: the sync ran over all three. With
     * {@code mirror.acl.sync.wildcard} and {@code mirror.acl.sync.deny} both are copied, and removed again with the source's.
     */
    @Test
    void aDenyAllAndAnAllowAllOnTheSourceAreNotCopiedByDefaultOnlyWithTheirOptIns() throws Exception {
        String topic = "acl-guarded";
        String mirror = "m-acl-hostile";
        AclBinding denyEveryone = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "*", PatternType.LITERAL),
            new AccessControlEntry("User:*", "*", AclOperation.ALL, AclPermissionType.DENY));
        AclBinding evilEverywhere = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "*", PatternType.LITERAL),
            new AccessControlEntry("User:evil", "*", AclOperation.ALL, AclPermissionType.ALLOW));
        AclBinding aliceOnMirrored = acl(ResourceType.TOPIC, topic, PatternType.LITERAL, "User:alice");
        createSourceTopic(topic, 1, Map.of());
        createMirror(mirror, Map.of("mirror.acl.include", ".*", "mirror.groups.include", ""));
        mirrors.startMirrorTopics(mirror, List.of(topic), List.of()).all().get();
        try (Admin src = source.admin(); Admin dst = destination.admin(); LogCapture logs = LogCapture.start()) {
            try {
                src.createAcls(List.of(denyEveryone, evilEverywhere, aliceOnMirrored)).all().get();
                TestUtils.waitFor(() -> acls(dst).contains(aliceOnMirrored), TIMEOUT, "the ACL on the mirrored topic reaches the destination");
                Set<AclBinding> copied = acls(dst);
                assertFalse(copied.contains(denyEveryone), "DENY User:* ALL TOPIC:* is not copied by default: " + copied);
                assertFalse(copied.contains(evilEverywhere), "ALLOW User:evil ALL TOPIC:* is not copied by default: " + copied);
                String created = "Mirror '" + mirror + "': created ACL " + aliceOnMirrored + " on the destination as at the source (mirrored topic)";
                TestUtils.waitFor(() -> logs.lines().stream().anyMatch(l -> l.startsWith("INFO ") && l.endsWith(created)), TIMEOUT,
                    "an INFO line names the mirror, the ACL created and why");

                mirrors.alterClusterMirrorConfigs(mirror, List.of(set("mirror.acl.sync.wildcard", "true"),
                    set("mirror.acl.sync.deny", "true"))).all().get();
                TestUtils.waitFor(() -> acls(dst).containsAll(List.of(denyEveryone, evilEverywhere)), TIMEOUT,
                    "with mirror.acl.sync.wildcard and mirror.acl.sync.deny both reach the destination");
            } finally {
                src.deleteAcls(List.of(denyEveryone.toFilter(), evilEverywhere.toFilter(), aliceOnMirrored.toFilter())).all().get();
            }
            TestUtils.waitFor(() -> acls(dst).stream().noneMatch(a -> List.of(denyEveryone, evilEverywhere, aliceOnMirrored).contains(a)),
                TIMEOUT, "the mirror removes the ACLs it copied once the source removed them");
        } finally {
            mirrors.alterClusterMirrorConfigs(mirror, List.of(set("mirror.acl.include", ""))).all().get();
        }
    }

    // ---- auto-discovery ----

    /** A new source topic matching mirror.topics.include mirrors without a command; one matching the exclude does not. */
    @Test
    void newSourceTopicsMatchingTheIncludePatternAreMirroredWithoutACommand() throws Exception {
        createMirror("m-disc", Map.of("mirror.topics.include", "disc-.*", "mirror.topics.exclude", "disc-skip-.*"));
        createSourceTopic("disc-skip-1", 1, Map.of());
        produce("disc-skip-1", 1, 5);
        createSourceTopic("disc-new", 2, Map.of());
        produce("disc-new", 2, 10);

        TestUtils.waitFor(() -> topicsOf("m-disc").contains("disc-new"), TIMEOUT, "disc-new starts mirroring by itself");
        MirrorAssertions.awaitCaughtUp(source, destination, "disc-new", 2);
        MirrorAssertions.assertSameRecords(source, destination, "disc-new", 2);
        // The round that started disc-new had disc-skip-1 in view too.
        assertFalse(topicsOf("m-disc").contains("disc-skip-1"), "an excluded topic is not mirrored");
        try (Admin dst = destination.admin()) {
            assertFalse(dst.listTopics().names().get().contains("disc-skip-1"), "no destination topic for an excluded one");
        }
    }

    // ---- helpers ----

    /**
     * A mirror that syncs every second and, unless {@code extra} says otherwise, copies no ACL: ACLs are cluster-wide,
     * so a mirror left running by a test about something else would copy the ACLs of the ACL tests, which assert
     * exactly which ones their mirror copies.
     */
    private static void createMirror(String name, Map<String, String> extra) throws Exception {
        Map<String, String> config = new HashMap<>(MirrorAssertions.mirrorConfig(source));
        config.put("mirror.metadata.refresh.interval.ms", "1000");
        config.put("mirror.acl.include", "");
        config.putAll(extra);
        mirrors.createClusterMirror(name, config).all().get();
    }

    /** A mirror configured with the source's bootstrap.servers only: every mirror.* setting at its default. */
    private static void createDefaultMirror(String name) throws Exception {
        mirrors.createClusterMirror(name, MirrorAssertions.mirrorConfig(source)).all().get();
    }

    private static void createSourceTopic(String topic, int partitions, Map<String, String> configs) throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, partitions, (short) 1).configs(configs)));
        }
    }

    /** {@code perPartition} records to each partition; the value of offset o of partition p is "topic-p-o" (fresh partitions). */
    private static void produce(String topic, int partitions, int perPartition) throws Exception {
        Map<TopicPartition, Integer> counts = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            counts.put(new TopicPartition(topic, p), perPartition);
        }
        produce(counts);
    }

    /** The given number of records to each partition, valued as by {@link #produce(String, int, int)}. */
    private static void produce(Map<TopicPartition, Integer> counts) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of());
             Admin admin = source.admin()) {
            for (Map.Entry<TopicPartition, Integer> e : counts.entrySet()) {
                TopicPartition tp = e.getKey();
                long next = MirrorAssertions.endOffset(admin, tp);
                for (int i = 0; i < e.getValue(); i++) {
                    String value = tp.topic() + "-" + tp.partition() + "-" + (next + i);
                    producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, Workloads.bytes(value)));
                }
                producer.flush();
            }
        }
    }

    private static KafkaConsumer<byte[], byte[]> consumer(MirrorTestCluster cluster, String group) {
        return consumer(cluster, group, "none"); // a missing offset is a failure, never a silent reset
    }

    private static KafkaConsumer<byte[], byte[]> consumer(MirrorTestCluster cluster, String group, String offsetReset) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, offsetReset);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** The group reads each partition up to {@code upTo} (exclusive), commits exactly there, and leaves. */
    private static void consumePartAndCommit(MirrorTestCluster cluster, String group, String topic, Map<TopicPartition, Long> upTo)
            throws Exception {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            Map<TopicPartition, Long> read = new HashMap<>();
            TestUtils.waitFor(() -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    read.merge(new TopicPartition(r.topic(), r.partition()), r.offset() + 1, Math::max);
                }
                return upTo.entrySet().stream().allMatch(e -> read.getOrDefault(e.getKey(), 0L) >= e.getValue());
            }, TIMEOUT, "the source group reads its part");
            Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
            upTo.forEach((tp, o) -> commit.put(tp, new OffsetAndMetadata(o)));
            c.commitSync(commit);
        }
    }

    /** Reads every partition from the group's committed offsets to the end; records as "offset value", per partition. */
    private static Map<TopicPartition, List<String>> consumeToEnd(MirrorTestCluster cluster, String group, String topic, int partitions)
            throws Exception {
        Map<TopicPartition, Long> ends = new HashMap<>();
        try (Admin admin = cluster.admin()) {
            for (int p = 0; p < partitions; p++) {
                ends.put(new TopicPartition(topic, p), MirrorAssertions.endOffset(admin, new TopicPartition(topic, p)));
            }
        }
        Map<TopicPartition, List<String>> out = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> c = consumer(cluster, group)) {
            c.subscribe(List.of(topic));
            TestUtils.waitFor(() -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    out.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new ArrayList<>())
                        .add(r.offset() + " " + new String(r.value(), StandardCharsets.UTF_8));
                }
                return c.assignment().size() == partitions && ends.entrySet().stream().allMatch(e -> c.position(e.getKey()) >= e.getValue());
            }, TIMEOUT, "the destination group reads to the end");
        }
        return out;
    }

    private static void commitOnSource(String group, Map<TopicPartition, Long> offsets) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> m = new HashMap<>();
        offsets.forEach((tp, o) -> m.put(tp, new OffsetAndMetadata(o)));
        try (Admin admin = source.admin()) {
            admin.alterConsumerGroupOffsets(group, m).all().get();
        }
    }

    private static Map<TopicPartition, Long> committed(MirrorTestCluster cluster, String group) throws Exception {
        try (Admin admin = cluster.admin()) {
            Map<TopicPartition, Long> out = new HashMap<>();
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().forEach((tp, om) -> {
                if (om != null) {
                    out.put(tp, om.offset());
                    assertEquals(Optional.empty(), om.leaderEpoch(), "synced offsets carry no source leader epoch");
                }
            });
            return out;
        }
    }

    private static void awaitCommitted(MirrorTestCluster cluster, String group, Map<TopicPartition, Long> expected) throws Exception {
        TestUtils.waitFor(() -> committed(cluster, group).equals(expected), TIMEOUT,
            "committed offsets of " + group + " on " + cluster.name() + " become " + expected);
    }

    private static Map<String, String> explicitConfigs(MirrorTestCluster cluster, String topic) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = cluster.admin()) {
            Map<String, String> out = new HashMap<>();
            admin.describeConfigs(List.of(r)).all().get().get(r).entries().stream()
                .filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG)
                .forEach(e -> out.put(e.name(), e.value()));
            return out;
        }
    }

    private static AlterConfigOp set(String key, String value) {
        return new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET);
    }

    private static void alterOnSource(String topic, Collection<AlterConfigOp> ops) throws Exception {
        try (Admin admin = source.admin()) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic), ops)).all().get();
        }
    }

    private static AclBinding acl(ResourceType type, String name, PatternType patternType, String principal) {
        return new AclBinding(new ResourcePattern(type, name, patternType),
            new AccessControlEntry(principal, "*", AclOperation.READ, AclPermissionType.ALLOW));
    }

    /**
     * An ACL on the cluster resource that leaves every test client (User:ANONYMOUS) all its rights, on the source and
     * wherever it is copied: with allow.everyone.if.no.acl.found, any ACL on the cluster resource denies what it does
     * not allow, and these clusters are shared by the other tests.
     */
    private static AclBinding clusterAcl() {
        return new AclBinding(new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL),
            new AccessControlEntry("User:ANONYMOUS", "*", AclOperation.ALL, AclPermissionType.ALLOW));
    }

    private static Set<AclBinding> acls(Admin admin) throws Exception {
        return new HashSet<>(admin.describeAcls(AclBindingFilter.ANY).values().get());
    }

    private static List<String> topicsOf(String mirror) throws Exception {
        return mirrors.describeClusterMirrors(List.of(mirror)).all().get().get(mirror).topics().stream()
            .map(MirrorTopicDescription::topic).toList();
    }
}
