package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.StopTransactions;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a migration off a cluster of another Kafka release needs, checked against a real broker of that release (see
 * {@link ReleaseSource}); each subclass names the release and how it keeps its metadata. The source has no
 * {@code __mirror_*} topics, so loop and failback detection find no mirror state there and must not get in the way.
 */
@Tag(ProcessCluster.TAG)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@MirrorClusterTest(topologies = "topologies")
abstract class SourceReleaseContract {
    private ReleaseSource source;
    private MirrorTestCluster destination;
    private ClusterMirrorAdmin mirrors;

    /**
     * The clusters of a subclass: the source of the release it is about ({@link ReleaseSource#topology}) and a one-broker
     * in-JVM destination named after it. Each subclass returns them from its own static {@code topologies()}.
     */
    static ClusterPair.Topologies withDestination(ClusterTopology source) {
        return ClusterPair.Topologies.of(source, MirrorTestCluster.builder().name(source.name() + "-destination").brokers(1).topology());
    }

    /** The source cluster, for subclasses' own tests. */
    ReleaseSource source() {
        return source;
    }

    MirrorTestCluster destination() {
        return destination;
    }

    ClusterMirrorAdmin mirrors() {
        return mirrors;
    }

    @BeforeAll
    void createTheMirror(ClusterPair<ReleaseSource, MirrorTestCluster> clusters) throws Exception {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
        Map<String, String> config = new HashMap<>(MirrorAssertions.mirrorConfig(source));
        config.put("mirror.metadata.refresh.interval.ms", "1000");
        mirrors.createClusterMirror("old", config).all().get();
    }

    void createSourceTopic(String topic, int partitions, Map<String, String> configs) throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, partitions, (short) 1).configs(configs)));
        }
    }

    /**
     * Plain, idempotent and transactional (committed and aborted) batches in every codec, and a compacted topic,
     * land at the same offsets with the same bytes; a consumer reads the same records; the stop (failover) cuts
     * nothing that was committed and the topic takes local writes after its barrier.
     */
    @Test
    void everyProducerKindCodecAndACompactedTopicMirrorByteIdenticallyAndFailOver() throws Exception {
        createSourceTopic("old-kinds", 2, Map.of());
        Workloads.writeAllKinds(source.bootstrapServers(), "old-kinds", 2, 4);
        createSourceTopic("old-compacted", 1, Map.of("cleanup.policy", "compact"));
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(),
                Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
            for (int i = 0; i < 60; i++) {
                producer.send(new ProducerRecord<>("old-compacted", 0, Workloads.bytes("key-" + (i % 7)), Workloads.bytes("value-" + i))).get();
            }
        }
        mirrors.startMirrorTopics("old", List.of("old-kinds", "old-compacted"), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, "old-kinds", 2);
        MirrorAssertions.awaitCaughtUp(source, destination, "old-compacted", 1);
        MirrorAssertions.assertIdenticalLogs(source, destination, "old-kinds", 2);
        MirrorAssertions.assertSameRecords(source, destination, "old-kinds", 2);
        MirrorAssertions.assertIdenticalLogs(source, destination, "old-compacted", 1);
        MirrorAssertions.assertSameRecords(source, destination, "old-compacted", 1);

        mirrors.stopMirrorTopics("old", List.of("old-kinds"), List.of()).all().get();
        MirrorAssertions.awaitState(mirrors, "old", "old-kinds", 2, PartitionState.STOPPED);
        TopicPartition tp = new TopicPartition("old-kinds", 0);
        MirrorPartitionDescription stopped = MirrorAssertions.describe(mirrors, "old", "old-kinds", 0);
        assertEquals(-1, stopped.truncatedFromOffset(), "nothing was open on the source, so nothing is cut: " + stopped);
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(destination.bootstrapServers(),
                Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
            RecordMetadata md = producer.send(new ProducerRecord<>("old-kinds", 0, null, Workloads.bytes("after-failover"))).get();
            assertEquals(stopped.barrierOffset() + 1, md.offset(), "the first local write follows the barrier");
        }
        try (Admin admin = source.admin()) {
            List<String> sourceRecords = MirrorAssertions.readAll(source, tp);
            List<String> destinationRecords = MirrorAssertions.readAll(destination, tp);
            assertEquals(sourceRecords, destinationRecords.subList(0, sourceRecords.size()),
                "every committed source record is kept by the failover");
            assertEquals(MirrorAssertions.endOffset(admin, tp), stopped.barrierOffset());
        }
    }

    /** Topic configs, partition growth, committed group offsets and ACLs of the old source reach the destination. */
    @Test
    void metadataSyncsFromTheOldSource() throws Exception {
        String topic = "old-synced";
        createSourceTopic(topic, 2, Map.of("retention.ms", "86400000"));
        Workloads.writeToEveryPartition(source.bootstrapServers(), topic, 2, "sync", 10);
        TopicPartition first = new TopicPartition(topic, 0);
        Map<TopicPartition, OffsetAndMetadata> committed = Map.of(first, new OffsetAndMetadata(4),
            new TopicPartition(topic, 1), new OffsetAndMetadata(7));
        // On a group nobody here uses (a copied ACL closes its resource to the principals it does not name); the sync copies
        // the ACLs of synced groups (every group by default), not of topics outside the mirror.
        AclBinding acl = new AclBinding(new ResourcePattern(ResourceType.GROUP, "old-acl-only", PatternType.LITERAL),
            new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
        try (Admin admin = source.admin()) {
            admin.alterConsumerGroupOffsets("old-app", committed).all().get();
            admin.createAcls(List.of(acl)).all().get();
        }
        mirrors.startMirrorTopics("old", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 2);
        try (Admin src = source.admin(); Admin dst = destination.admin()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            src.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry("max.message.bytes", "3600000"),
                AlterConfigOp.OpType.SET)))).all().get();
            src.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get();
            TestUtils.waitFor(() -> "3600000".equals(dst.describeConfigs(List.of(resource)).all().get().get(resource).get("max.message.bytes").value()),
                MirrorAssertions.TIMEOUT, "the source's topic config on the destination");
            TestUtils.waitFor(() -> dst.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size() == 3,
                MirrorAssertions.TIMEOUT, "the source's new partition on the destination");
            MirrorAssertions.awaitState(mirrors, "old", topic, 3, PartitionState.MIRRORING);
            TestUtils.waitFor(() -> committed.equals(dst.listConsumerGroupOffsets("old-app").partitionsToOffsetAndMetadata().get()
                    .entrySet().stream().collect(java.util.stream.Collectors.toMap(Map.Entry::getKey,
                        e -> new OffsetAndMetadata(e.getValue().offset())))),
                MirrorAssertions.TIMEOUT, "the source group's committed offsets on the destination");
            TestUtils.waitFor(() -> dst.describeAcls(AclBindingFilter.ANY).values().get().contains(acl),
                MirrorAssertions.TIMEOUT, "the source's ACL on the destination");
        }
        assertEquals(PartitionState.MIRRORING, MirrorAssertions.describe(mirrors, "old", topic, 2).state(),
            "the partition the source grew mirrors");
    }

    /**
     * The source's coordinator logs, in this release's formats, are read for a consistent stop: a read-process-write
     * application's transactions over two partitions and its transactional offset commits. The dry-run then knows the
     * source's transactions up to after it read the destination, and the offset the last transaction committed.
     */
    @Test
    void theSourcesTransactionAndOffsetLogsAreReadForAConsistentStop() throws Exception {
        createSourceTopic("old-tx-in", 1, Map.of());
        createSourceTopic("old-tx-out", 2, Map.of());
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of())) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>("old-tx-in", 0, null, Workloads.bytes("input-" + i))).get();
            }
        }
        mirrors.startMirrorTopics("old", List.of("old-tx-in", "old-tx-out"), List.of()).all().get();
        try (ConsistentStopTest.ReadProcessWrite app = new ConsistentStopTest.ReadProcessWrite(source.bootstrapServers(), "old-tx-app",
                "old-tx-in", List.of("old-tx-out"))) {
            app.step(5);
            app.step(5);
        }
        MirrorAssertions.awaitCaughtUp(source, destination, "old-tx-out", 2);
        List<StopTransactions.GroupOffset> expected = List.of(new StopTransactions.GroupOffset("old-tx-app", "old-tx-in", 0, 10, 0));
        StopTransactions[] last = {null};
        TestUtils.waitFor(() -> {
            last[0] = mirrors.previewStopMirrorTopics("old", List.of("old-tx-in", "old-tx-out"), List.of()).transactions().get();
            return last[0].sourceLogCurrent() && last[0].groupOffsets().equals(expected);
        }, MirrorAssertions.TIMEOUT, () -> "the dry-run never knew the source's logs past it with the group's offset 10: " + last[0]);
    }
}
