package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.HeldLogStart;
import io.clustermirror.admin.HeldTopicChange;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Destructive changes of the source are held on the destination, not applied, under the default
 * {@code mirror.source.destructive.policy=hold}, on real clusters (one source broker, one destination broker; each test
 * has its own mirror and topic): a DeleteRecords on the source leaves the destination's records readable until an
 * operator applies it or its hold passes; a retention shrink is not copied, and stays uncopied once rejected; a growth
 * beyond {@code mirror.partitions.max.growth} waits for an operator; mirroring goes on meanwhile. The policy
 * {@code apply} keeps the behaviour of earlier versions: the destination follows at once.
 */
@MirrorClusterTest(source = "held-source", destination = "held-destination")
class HeldSourceChangesTest {
    private static final String DAY_MS = String.valueOf(24 * 60 * 60 * 1000L);
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

    /**
     * The source deletes its first 15 records after they were mirrored: the destination keeps them readable (its log
     * start stays at 0), shows the held move in describe and the gauge, and goes on mirroring; --apply-held moves its
     * log start to 15 at once.
     */
    @Test
    void aSourceDeleteRecordsIsHeldWithTheRecordsReadableUntilAnOperatorAppliesIt() throws Exception {
        TopicPartition tp = mirroredTopic("held-delete", 1, Map.of(), Map.of());
        Workloads.writeToEveryPartition(source.bootstrapServers(), tp.topic(), 1, "first", 20);
        MirrorAssertions.awaitCaughtUp(source, destination, tp.topic(), 1);
        List<String> mirrored = MirrorAssertions.readAll(destination, tp);

        deleteOnSource(tp, 15);
        HeldLogStart held = awaitHeldLogStart("held-delete", tp);
        assertEquals(15, held.offset(), "the held move names the source's new log start");
        assertEquals(held.sinceMs() + 24 * 60 * 60 * 1000L, held.appliesAtMs(), "it applies a day after it was first seen");
        assertEquals(0, destinationStart(tp), "the destination keeps the records the source deleted");
        assertEquals(1.0, MirrorAssertions.mirrorMetric(destination, "partitions-log-start-held", "held-delete"));

        Workloads.writeToEveryPartition(source.bootstrapServers(), tp.topic(), 1, "after", 5);
        awaitDestinationEnd(tp, 25);
        List<String> all = MirrorAssertions.readAll(destination, tp);
        assertEquals(mirrored, all.subList(0, 20), "offsets 0-19 read as they were mirrored");
        assertEquals(MirrorAssertions.readAll(source, tp), all.subList(15, 25), "mirroring went on while the move was held");

        mirrors.applyHeldChanges("held-delete", List.of(tp.topic()), List.of()).all().get();
        TestUtils.waitFor(() -> destinationStart(tp) == 15, MirrorAssertions.TIMEOUT, "--apply-held moves the destination log start to 15");
        TestUtils.waitFor(() -> MirrorAssertions.describe(mirrors, "held-delete", tp.topic(), 0).heldLogStarts().isEmpty(),
            MirrorAssertions.TIMEOUT, "nothing is held once applied");
        TestUtils.waitFor(() -> MirrorAssertions.mirrorMetric(destination, "partitions-log-start-held", "held-delete") == 0.0, MirrorAssertions.TIMEOUT,
            "the gauge falls to 0");
        MirrorAssertions.assertSameRecords(source, destination, tp.topic(), 1);
    }

    /** With a hold of 15 s, a held move of the source's log start applies by itself once the hold has passed. */
    @Test
    void aHeldLogStartMoveAppliesByItselfOnceItsHoldHasPassed() throws Exception {
        TopicPartition tp = mirroredTopic("held-timed", 1, Map.of(MirrorConfig.SOURCE_DESTRUCTIVE_HOLD_MS, "15000"), Map.of());
        Workloads.writeToEveryPartition(source.bootstrapServers(), tp.topic(), 1, "first", 20);
        MirrorAssertions.awaitCaughtUp(source, destination, tp.topic(), 1);

        deleteOnSource(tp, 12);
        HeldLogStart held = awaitHeldLogStart("held-timed", tp);
        long seenStart = destinationStart(tp);
        assertTrue(seenStart == 0 || System.currentTimeMillis() >= held.appliesAtMs(),
            "held until " + held.appliesAtMs() + ", yet the destination log start is " + seenStart);
        TestUtils.waitFor(() -> destinationStart(tp) == 12, MirrorAssertions.TIMEOUT, "the move applies once its hold has passed");
        assertTrue(System.currentTimeMillis() >= held.appliesAtMs(), "not before its hold has passed");
    }

    /**
     * The source shrinks retention.ms to 1: the destination keeps a day and every record, describe shows the held
     * change; once rejected it stays uncopied, while a harmless change of the source is copied. A longer retention
     * is copied at once.
     */
    @Test
    void aRetentionShrinkIsHeldAndARejectedOneIsNeverCopied() throws Exception {
        TopicPartition tp = mirroredTopic("held-retention", 1, Map.of(), Map.of("retention.ms", DAY_MS));
        Workloads.writeToEveryPartition(source.bootstrapServers(), tp.topic(), 1, "first", 10);
        MirrorAssertions.awaitCaughtUp(source, destination, tp.topic(), 1);

        alterOnSource(tp.topic(), "retention.ms", "1");
        HeldTopicChange held = awaitHeldChange("held-retention", tp.topic(), "retention.ms=1", "HELD");
        assertEquals(held.sinceMs() + 24 * 60 * 60 * 1000L, held.appliesAtMs());
        assertEquals(DAY_MS, destinationConfig(tp.topic(), "retention.ms"), "the destination keeps its retention");
        assertEquals(1.0, brokerMetric("topic-changes-held"), "the held change is counted");

        mirrors.rejectHeldChanges("held-retention", List.of(tp.topic()), List.of()).all().get();
        awaitHeldChange("held-retention", tp.topic(), "retention.ms=1", "REJECTED");
        TestUtils.waitFor(() -> brokerMetric("topic-changes-held") == 0.0, MirrorAssertions.TIMEOUT, "a rejected change is not counted");
        alterOnSource(tp.topic(), "max.message.bytes", "200000");
        TestUtils.waitFor(() -> "200000".equals(destinationConfig(tp.topic(), "max.message.bytes")), MirrorAssertions.TIMEOUT,
            "a harmless change of the source is copied");
        assertEquals(DAY_MS, destinationConfig(tp.topic(), "retention.ms"), "the rejected shrink is not copied by later rounds");
        assertEquals(10, MirrorAssertions.readAll(destination, tp).size(), "every mirrored record is readable");

        alterOnSource(tp.topic(), "retention.ms", String.valueOf(2 * 24 * 60 * 60 * 1000L));
        TestUtils.waitFor(() -> String.valueOf(2 * 24 * 60 * 60 * 1000L).equals(destinationConfig(tp.topic(), "retention.ms")),
            MirrorAssertions.TIMEOUT, "a longer retention is copied at once");
        TestUtils.waitFor(() -> topicDescription("held-retention", tp.topic()).heldChanges().isEmpty(), MirrorAssertions.TIMEOUT,
            "the rejected change is forgotten once the source took it back");
    }

    /**
     * The source grows by 3 partitions with {@code mirror.partitions.max.growth=2}: the destination keeps 1 partition
     * and goes on mirroring it; --apply-held grows it to 4, which then mirror.
     */
    @Test
    void aGrowthBeyondTheCapWaitsForAnOperator() throws Exception {
        TopicPartition tp = mirroredTopic("held-growth", 1, Map.of(MirrorConfig.PARTITIONS_MAX_GROWTH, "2"), Map.of());
        Workloads.writeToEveryPartition(source.bootstrapServers(), tp.topic(), 1, "first", 5);
        MirrorAssertions.awaitCaughtUp(source, destination, tp.topic(), 1);

        try (Admin src = source.admin()) {
            src.createPartitions(Map.of(tp.topic(), NewPartitions.increaseTo(4))).all().get();
        }
        awaitHeldChange("held-growth", tp.topic(), "growth to 4 partitions", "HELD");
        Workloads.writeToEveryPartition(source.bootstrapServers(), tp.topic(), 1, "more", 5);
        awaitDestinationEnd(tp, 10);
        assertEquals(1, destinationPartitions(tp.topic()), "the destination keeps its partition count");

        mirrors.applyHeldChanges("held-growth", List.of(tp.topic()), List.of()).all().get();
        TestUtils.waitFor(() -> destinationPartitions(tp.topic()) == 4, MirrorAssertions.TIMEOUT, "--apply-held grows the topic to 4");
        Workloads.writeToEveryPartition(source.bootstrapServers(), tp.topic(), 4, "grown", 3);
        MirrorAssertions.awaitCaughtUp(source, destination, tp.topic(), 4);
        MirrorAssertions.assertSameRecords(source, destination, tp.topic(), 4);
        TestUtils.waitFor(() -> topicDescription("held-growth", tp.topic()).heldChanges().isEmpty(), MirrorAssertions.TIMEOUT,
            "nothing is held once the growth is copied");
    }

    /** {@code mirror.source.destructive.policy=apply}: a DeleteRecords and a retention shrink reach the destination at once. */
    @Test
    void policyApplyFollowsTheSourceAtOnce() throws Exception {
        TopicPartition tp = mirroredTopic("held-apply", 1, Map.of(MirrorConfig.SOURCE_DESTRUCTIVE_POLICY, "apply"),
            Map.of("retention.ms", DAY_MS));
        Workloads.writeToEveryPartition(source.bootstrapServers(), tp.topic(), 1, "first", 20);
        MirrorAssertions.awaitCaughtUp(source, destination, tp.topic(), 1);

        deleteOnSource(tp, 15);
        alterOnSource(tp.topic(), "retention.ms", "3600000");
        TestUtils.waitFor(() -> destinationStart(tp) == 15, MirrorAssertions.TIMEOUT, "the destination follows the source's log start");
        TestUtils.waitFor(() -> "3600000".equals(destinationConfig(tp.topic(), "retention.ms")), MirrorAssertions.TIMEOUT,
            "the shrink is copied");
        assertTrue(MirrorAssertions.describe(mirrors, "held-apply", tp.topic(), 0).heldLogStarts().isEmpty());
        assertTrue(topicDescription("held-apply", tp.topic()).heldChanges().isEmpty());
    }

    private static TopicPartition mirroredTopic(String name, int partitions, Map<String, String> mirrorConfig,
                                                Map<String, String> topicConfig) throws Exception {
        Workloads.createTopic(source, name, partitions, topicConfig);
        Map<String, String> config = new HashMap<>(MirrorAssertions.mirrorConfig(source));
        config.put("mirror.metadata.refresh.interval.ms", "1000");
        config.putAll(mirrorConfig);
        mirrors.createClusterMirror(name, config).all().get();
        mirrors.startMirrorTopics(name, List.of(name), List.of()).all().get();
        MirrorAssertions.awaitState(mirrors, name, name, partitions, PartitionState.MIRRORING);
        return new TopicPartition(name, 0);
    }

    private static void deleteOnSource(TopicPartition tp, long before) throws Exception {
        try (Admin src = source.admin()) {
            src.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(before))).all().get();
        }
    }

    private static void alterOnSource(String topic, String name, String value) throws Exception {
        try (Admin src = source.admin()) {
            src.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic),
                List.of(new AlterConfigOp(new ConfigEntry(name, value), AlterConfigOp.OpType.SET)))).all().get();
        }
    }

    private static HeldLogStart awaitHeldLogStart(String mirror, TopicPartition tp) throws Exception {
        TestUtils.waitFor(() -> !MirrorAssertions.describe(mirrors, mirror, tp.topic(), tp.partition()).heldLogStarts().isEmpty(),
            MirrorAssertions.TIMEOUT, "describe shows the held log start move of " + tp);
        MirrorPartitionDescription d = MirrorAssertions.describe(mirrors, mirror, tp.topic(), tp.partition());
        return d.heldLogStarts().get(d.heldLogStarts().size() - 1);
    }

    private static HeldTopicChange awaitHeldChange(String mirror, String topic, String change, String status) throws Exception {
        TestUtils.waitFor(() -> topicDescription(mirror, topic).heldChanges().stream()
                .anyMatch(c -> c.change().equals(change) && c.status().equals(status)), MirrorAssertions.TIMEOUT,
            "describe shows " + change + " " + status + " on " + topic);
        return topicDescription(mirror, topic).heldChanges().stream().filter(c -> c.change().equals(change)).findFirst().orElseThrow();
    }

    private static MirrorTopicDescription topicDescription(String mirror, String topic) throws Exception {
        return mirrors.describeClusterMirrors(List.of(mirror)).all().get().get(mirror).topics().stream()
            .filter(t -> t.topic().equals(topic)).findFirst().orElseThrow();
    }

    private static long destinationStart(TopicPartition tp) throws Exception {
        try (Admin dst = destination.admin()) {
            return MirrorAssertions.startOffset(dst, tp);
        }
    }

    private static void awaitDestinationEnd(TopicPartition tp, long end) throws Exception {
        try (Admin dst = destination.admin()) {
            TestUtils.waitFor(() -> MirrorAssertions.endOffset(dst, tp) == end, MirrorAssertions.TIMEOUT,
                "the destination mirrors " + tp + " to " + end);
        }
    }

    /** A metric of the group cluster-mirror with no tags, on the destination broker. */
    private static double brokerMetric(String name) {
        int broker = destination.brokerIds().iterator().next();
        return destination.broker(broker).metrics().metrics().entrySet().stream()
            .filter(e -> e.getKey().name().equals(name) && e.getKey().group().equals("cluster-mirror") && e.getKey().tags().isEmpty())
            .map(e -> ((Number) e.getValue().metricValue()).doubleValue())
            .findFirst().orElseThrow(() -> new AssertionError("no metric " + name));
    }

    private static String destinationConfig(String topic, String name) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin dst = destination.admin()) {
            return dst.describeConfigs(List.of(resource)).all().get().get(resource).get(name).value();
        }
    }

    private static int destinationPartitions(String topic) throws Exception {
        try (Admin dst = destination.admin()) {
            return dst.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
        }
    }
}
