package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** The invariants of the contract (docs/DESIGN.md), checked on real clusters. */
final class MirrorAssertions {
    static final Duration TIMEOUT = Duration.ofSeconds(90);

    private MirrorAssertions() {
    }

    static long endOffset(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get().get(tp).offset();
    }

    /** The last stable offset: the end of what read_committed consumers may read. */
    static long committedEnd(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
            .all().get().get(tp).offset();
    }

    static long startOffset(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get().get(tp).offset();
    }

    /**
     * Waits until the destination's end offset equals the source's for every partition of the topic, and its
     * log start offset too (the destination follows the source's retention and deleteRecords).
     */
    static void awaitCaughtUp(TestCluster source, TestCluster destination, String topic, int partitions) throws Exception {
        try (Admin src = source.admin(); Admin dst = destination.admin()) {
            for (int p = 0; p < partitions; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                long sourceEnd = endOffset(src, tp);
                TestUtils.waitFor(() -> endOffset(dst, tp) == sourceEnd, TIMEOUT,
                    "destination " + tp + " did not reach the source end offset " + sourceEnd);
                long sourceStart = startOffset(src, tp);
                TestUtils.waitFor(() -> startOffset(dst, tp) == sourceStart, TIMEOUT,
                    "destination " + tp + " did not follow the source log start offset " + sourceStart);
            }
        }
    }

    /**
     * Invariant 1: every source batch sits at the same offsets on every destination replica, identical in all
     * but the partitionLeaderEpoch (CRC, producer id/epoch/sequence, attributes, count, size), and all
     * destination replicas hold identical logs.
     */
    static void assertIdenticalLogs(TestCluster source, TestCluster destination, String topic, int partitions) throws Exception {
        try (Admin src = source.admin()) {
            for (int p = 0; p < partitions; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                long end = endOffset(src, tp);
                long start = startOffset(src, tp);
                List<LogBatches.Batch> expected = LogBatches.read(source.partitionDir(source.leaderOf(tp), tp), start, end);
                assertFalse(expected.isEmpty(), "source " + tp + " has batches");
                for (int broker : replicasOf(destination, tp)) {
                    TestUtils.waitFor(() -> LogBatches.read(destination.partitionDir(broker, tp), start, end).size() == expected.size(), TIMEOUT,
                        "replica on broker " + broker + " of " + tp + " did not get all batches");
                    assertEquals(expected, LogBatches.read(destination.partitionDir(broker, tp), start, end),
                        "batches of " + tp + " on destination broker " + broker);
                }
            }
        }
    }

    /**
     * What a destination partition held at one point: its log start and end offsets and its batches as its leader
     * stored them (each with the leader epoch it was stored at), and what describe said of it.
     */
    record MirroredLog(TopicPartition tp, long logStart, long logEnd, List<LogBatches.Stored> batches,
                       MirrorPartitionDescription described) {
    }

    /** Captures what the destination holds of the mirror's partition (call it once caught up). */
    static MirroredLog captureMirroredLog(TestCluster destination, ClusterMirrorAdmin mirrors, String mirror, TopicPartition tp)
            throws Exception {
        try (Admin admin = destination.admin()) {
            long start = startOffset(admin, tp);
            long end = endOffset(admin, tp);
            List<LogBatches.Stored> batches = LogBatches.readStored(destination.partitionDir(destination.leaderOf(tp), tp), start, end);
            assertFalse(batches.isEmpty(), "destination " + tp + " holds mirrored batches");
            return new MirroredLog(tp, start, end, batches, describe(mirrors, mirror, tp.topic(), tp.partition()));
        }
    }

    /**
     * Nothing the destination held before is gone or copied again: the log start offset is the same, every replica
     * still holds every batch captured before at the same offsets, with the same CRC and the same leader epoch (a batch
     * that was truncated and copied again carries a later one), and describe reports no new truncation.
     */
    static void assertMirroredLogKept(TestCluster destination, ClusterMirrorAdmin mirrors, String mirror, MirroredLog before)
            throws Exception {
        TopicPartition tp = before.tp();
        MirrorPartitionDescription now = describe(mirrors, mirror, tp.topic(), tp.partition());
        assertEquals(List.of(before.described().truncatedFromOffset(), before.described().truncatedToOffset()),
            List.of(now.truncatedFromOffset(), now.truncatedToOffset()),
            "the truncated range [from, to) describe reports for " + tp + " changed: the mirrored log was cut (" + now + ")");
        try (Admin admin = destination.admin()) {
            assertEquals(before.logStart(), startOffset(admin, tp), "log start offset of " + tp);
        }
        for (int broker : replicasOf(destination, tp)) {
            Path dir = destination.partitionDir(broker, tp);
            TestUtils.waitFor(() -> LogBatches.readStored(dir, before.logStart(), before.logEnd()).size() >= before.batches().size(),
                TIMEOUT, "replica on broker " + broker + " of " + tp + " to hold the " + before.batches().size() + " batches mirrored before");
            List<LogBatches.Stored> batches = LogBatches.readStored(dir, before.logStart(), before.logEnd());
            List<Integer> changed = new ArrayList<>();
            for (int i = 0; i < before.batches().size(); i++) {
                if (i >= batches.size() || !before.batches().get(i).equals(batches.get(i))) {
                    changed.add(i);
                }
            }
            if (!changed.isEmpty() || batches.size() != before.batches().size()) {
                int first = changed.isEmpty() ? before.batches().size() : changed.get(0);
                throw new AssertionError("replica on broker " + broker + " of " + tp + " no longer holds the batches mirrored into [" + before.logStart()
                    + ", " + before.logEnd() + ") as they were: " + changed.size() + " of " + before.batches().size() + " differ (" + batches.size()
                    + " now); first: " + (first < before.batches().size() ? before.batches().get(first) : "none") + " is now "
                    + (first < batches.size() ? batches.get(first) : "missing") + " (the same batch at a later leader epoch was cut and copied again)");
            }
        }
    }

    static List<Integer> replicasOf(TestCluster cluster, TopicPartition tp) throws Exception {
        try (Admin admin = cluster.admin()) {
            return admin.describeTopics(List.of(tp.topic())).allTopicNames().get().get(tp.topic())
                .partitions().get(tp.partition()).replicas().stream().map(n -> n.id()).toList();
        }
    }

    /** Invariant 2 as a consumer sees it: read_committed consumers read identical records at identical offsets. */
    static void assertSameRecords(TestCluster source, TestCluster destination, String topic, int partitions) throws Exception {
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(topic, p);
            List<String> expected = readAll(source, tp);
            assertFalse(expected.isEmpty(), "source " + tp + " has committed records");
            assertEquals(expected, readAll(destination, tp), "records of " + tp);
        }
    }

    /** Every committed record of a partition as "offset key value headers". */
    static List<String> readAll(TestCluster cluster, TopicPartition tp) throws Exception {
        long end;
        try (Admin admin = cluster.admin()) {
            end = endOffset(admin, tp);
        }
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + TIMEOUT.toMillis();
            while (consumer.position(tp) < end) {
                if (System.currentTimeMillis() > deadline) {
                    throw new AssertionError("could not read " + tp + " to " + end + " on " + cluster.name());
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(r.offset() + " " + str(r.key()) + " " + str(r.value()) + " " + Arrays.stream(r.headers().toArray())
                        .map(h -> h.key() + "=" + str(h.value())).collect(Collectors.joining(",")) + " " + r.timestamp());
                }
            }
        }
        return out;
    }

    private static String str(byte[] b) {
        return b == null ? "null" : new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }

    static MirrorPartitionDescription describe(ClusterMirrorAdmin mirrors, String mirror, String topic, int partition) throws Exception {
        ClusterMirrorDescription d = mirrors.describeClusterMirrors(List.of(mirror)).all().get().get(mirror);
        return d.topics().stream().filter(t -> t.topic().equals(topic)).findFirst().orElseThrow()
            .partitions().stream().filter(p -> p.partition() == partition).findFirst().orElseThrow();
    }

    static void awaitState(ClusterMirrorAdmin mirrors, String mirror, String topic, int partitions, PartitionState state)
            throws InterruptedException {
        TestUtils.waitFor(() -> {
            for (int p = 0; p < partitions; p++) {
                if (describe(mirrors, mirror, topic, p).state() != state) {
                    return false;
                }
            }
            return true;
        }, TIMEOUT, "partitions of " + topic + " did not reach " + state);
    }

    /** Producer ids the partition leader's producer state knows (describeProducers). */
    static Set<Long> producerIds(TestCluster cluster, TopicPartition tp) throws Exception {
        try (Admin admin = cluster.admin()) {
            Set<Long> ids = new HashSet<>();
            for (ProducerState s : admin.describeProducers(List.of(tp)).partitionResult(tp).get().activeProducers()) {
                ids.add(s.producerId());
            }
            return ids;
        }
    }

    /** Waits until every partition of the topic is MIRRORING with no last error. */
    static void awaitMirroringWithoutError(ClusterMirrorAdmin mirrors, String mirror, String topic, int partitions)
            throws InterruptedException {
        TestUtils.waitFor(() -> {
            for (int p = 0; p < partitions; p++) {
                MirrorPartitionDescription d = describe(mirrors, mirror, topic, p);
                if (d.state() != PartitionState.MIRRORING || d.lastError() != null) {
                    return false;
                }
            }
            return true;
        }, TIMEOUT, "every partition of " + topic + " MIRRORING with no last error");
    }


    /** The value of a metric of the group {@code cluster-mirror} tagged with the mirror, on the cluster's first broker. */
    static double mirrorMetric(MirrorTestCluster cluster, String name, String mirror) {
        int broker = cluster.brokerIds().iterator().next();
        return cluster.broker(broker).metrics().metrics().entrySet().stream()
            .filter(e -> e.getKey().name().equals(name) && e.getKey().group().equals("cluster-mirror")
                && e.getKey().tags().equals(Map.of("mirror", mirror)))
            .map(e -> ((Number) e.getValue().metricValue()).doubleValue())
            .findFirst().orElseThrow(() -> new AssertionError("no metric " + name + " of mirror " + mirror + " in "
                + cluster.broker(broker).metrics().metrics().keySet().stream().map(MetricName::name).toList()));
    }
    /** Fails if {@code text} holds one of the secrets; never prints the text (it would print the secret). */
    static void assertNoSecret(java.util.Collection<String> secrets, String text, String where) {
        if (secrets.stream().anyMatch(text::contains)) {
            org.junit.jupiter.api.Assertions.fail(where + " shows a password");
        }
    }

    static Map<String, String> mirrorConfig(TestCluster source) {
        Map<String, String> m = new HashMap<>();
        m.put("bootstrap.servers", source.bootstrapServers());
        return m;
    }
}
