package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A truncation by the mirror moves the consumer groups' committed offsets that lie past it back to it, so that a group
 * never skips the records that replace the cut (found by a chaos run: a group that had read local writes on the old
 * source resumed past the mirrored records after a failback and its stop, and was reset to offset 0).
 */
@MirrorClusterTest(source = "rewind-source", destination = "rewind-destination")
class TruncatedGroupOffsetsTest {
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;

    @Test
    void aGroupThatReadLocalWritesResumesAtTheCutAfterTheTopicIsMirroredAgain() throws Exception {
        MirrorTestCluster source = clusters.source;
        MirrorTestCluster destination = clusters.destination;
        ClusterMirrorAdmin mirrors = clusters.mirrors;
        String topic = "rewound-orders";
        TopicPartition tp = new TopicPartition(topic, 0);
        Workloads.createTopic(source, topic, 1, Map.of());
        Workloads.sendIdempotent(source.bootstrapServers(), topic, "mirrored", 6);
        Map<String, String> config = new HashMap<>(MirrorAssertions.mirrorConfig(source));
        config.put("mirror.groups.include", ""); // no group sync: only the truncation moves the group
        mirrors.createClusterMirror("rewind", config).all().get();
        mirrors.startMirrorTopics("rewind", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        mirrors.stopMirrorTopics("rewind", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitState(mirrors, "rewind", topic, 1, PartitionState.STOPPED);
        long barrier = MirrorAssertions.describe(mirrors, "rewind", topic, 0).barrierOffset();

        // The failed-over side: local writes, read and committed by a group there; the source goes on meanwhile.
        Workloads.sendIdempotent(destination.bootstrapServers(), topic, "local", 7);
        long localEnd;
        try (Admin admin = destination.admin()) {
            localEnd = MirrorAssertions.endOffset(admin, tp);
            admin.alterConsumerGroupOffsets("readers", Map.of(tp, new OffsetAndMetadata(localEnd, "read the local writes"))).all().get();
        }
        Workloads.sendIdempotent(source.bootstrapServers(), topic, "source-after", 5);

        mirrors.startMirrorTopics("rewind", List.of(topic), List.of(), new MirrorTopicsOptions().discardLocalWrites(true)).all().get();
        MirrorAssertions.awaitState(mirrors, "rewind", topic, 1, PartitionState.MIRRORING);
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        MirrorPartitionDescription restarted = MirrorAssertions.describe(mirrors, "rewind", topic, 0);
        assertEquals(List.of(barrier, localEnd), List.of(restarted.truncatedFromOffset(), restarted.truncatedToOffset()),
            "the start cut the local writes: " + restarted);

        OffsetAndMetadata committed;
        try (Admin admin = destination.admin()) {
            committed = admin.listConsumerGroupOffsets("readers").partitionsToOffsetAndMetadata().get().get(tp);
        }
        assertEquals(barrier, committed.offset(), "the group's offset past the cut is moved back to it");
        assertEquals("read the local writes", committed.metadata(), "its metadata is kept");
        assertTrue(committed.leaderEpoch().isEmpty(), "no leader epoch of the cut log: " + committed);

        // The group now reads the source's records that replaced the cut, from the first one on: nothing skipped.
        ConsumerRecord<byte[], byte[]> first = firstRecordOf(destination, "readers", tp);
        assertEquals(barrier, first.offset());
        assertEquals("v0", header(first, "h-source-after"), "the source's first record after the stop");
    }

    @Test
    void theStopsCutToTheLastStableOffsetMovesASyncedGroupBack() throws Exception {
        MirrorTestCluster source = clusters.source;
        MirrorTestCluster destination = clusters.destination;
        ClusterMirrorAdmin mirrors = clusters.mirrors;
        String topic = "rewound-payments";
        TopicPartition tp = new TopicPartition(topic, 0);
        Workloads.createTopic(source, topic, 1, Map.of());
        Workloads.sendIdempotent(source.bootstrapServers(), topic, "committed", 5);
        try (KafkaProducer<byte[], byte[]> open = Workloads.producer(source.bootstrapServers(),
                Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "rewind-open"))) {
            open.initTransactions();
            open.beginTransaction();
            Workloads.sendBatch(open, topic, 0, "open", 4);
            long sourceStable;
            long sourceEnd;
            try (Admin admin = source.admin()) {
                sourceStable = MirrorAssertions.committedEnd(admin, tp);
                sourceEnd = MirrorAssertions.endOffset(admin, tp);
                // A source group positioned at the end, as an admin may set it: the sync copies it up to the destination's end.
                admin.alterConsumerGroupOffsets("payers", Map.of(tp, new OffsetAndMetadata(sourceEnd))).all().get();
            }
            assertTrue(sourceStable < sourceEnd, "an open transaction on the source");

            Map<String, String> config = new HashMap<>(MirrorAssertions.mirrorConfig(source));
            config.put("mirror.fetch.isolation.level", "read_uncommitted"); // the destination holds the open transaction
            config.put("mirror.groups.include", "payers");
            config.put("mirror.metadata.refresh.interval.ms", "1000");
            mirrors.createClusterMirror("rewind-stop", config).all().get();
            mirrors.startMirrorTopics("rewind-stop", List.of(topic), List.of()).all().get();
            try (Admin admin = destination.admin()) {
                TestUtils.waitFor(() -> {
                    OffsetAndMetadata synced = admin.listConsumerGroupOffsets("payers").partitionsToOffsetAndMetadata().get().get(tp);
                    return synced != null && synced.offset() == sourceEnd;
                }, MirrorAssertions.TIMEOUT, "the group's offset to be synced to the source's end");
            }

            mirrors.stopMirrorTopics("rewind-stop", List.of(topic), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, "rewind-stop", topic, 1, PartitionState.STOPPED);
            MirrorPartitionDescription stopped = MirrorAssertions.describe(mirrors, "rewind-stop", topic, 0);
            assertEquals(List.of(sourceStable, sourceEnd), List.of(stopped.truncatedFromOffset(), stopped.truncatedToOffset()),
                "the stop cut the open transaction: " + stopped);
            try (Admin admin = destination.admin()) {
                assertEquals(sourceStable, admin.listConsumerGroupOffsets("payers").partitionsToOffsetAndMetadata().get().get(tp).offset(),
                    "the synced offset past the cut is moved back to it, where the barrier is");
            }
            Workloads.sendIdempotent(destination.bootstrapServers(), topic, "after-stop", 3);
            ConsumerRecord<byte[], byte[]> first = firstRecordOf(destination, "payers", tp);
            assertEquals(sourceStable + 1, first.offset(), "the first write after the barrier, none skipped");
            assertEquals("v0", header(first, "h-after-stop"), "the first record written after the stop");
            open.abortTransaction();
        }
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String key) {
        return record.headers().lastHeader(key) == null ? null : new String(record.headers().lastHeader(key).value(), StandardCharsets.UTF_8);
    }

    /** The first record a member of {@code group} reads, from the group's committed offset. */
    private static ConsumerRecord<byte[], byte[]> firstRecordOf(MirrorTestCluster cluster, String group, TopicPartition tp) throws Exception {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none"); // a committed offset out of range fails instead of hiding
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(List.of(tp));
            AtomicReference<ConsumerRecord<byte[], byte[]>> first = new AtomicReference<>();
            TestUtils.waitFor(() -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    first.set(r);
                    return true;
                }
                return false;
            }, MirrorAssertions.TIMEOUT, "a record of " + tp + " for group " + group);
            return first.get();
        }
    }
}
