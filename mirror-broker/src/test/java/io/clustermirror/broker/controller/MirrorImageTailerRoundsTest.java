package io.clustermirror.broker.controller;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tailer's rounds driven by the test ({@link MirrorImageTailer#runOnce()}) on Kafka's {@link MockConsumer} and
 * {@link MockTime}: the read barrier, the retry after a failure and its health metric, re-created internal topics.
 */
class MirrorImageTailerRoundsTest {
    private static final TopicPartition METADATA = new TopicPartition(InternalTopics.METADATA, 0);
    private static final TopicPartition STATE = new TopicPartition(InternalTopics.STATE, 0);

    private final MockTime time = new MockTime();
    private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>("earliest");
    private final Metrics metrics = new Metrics();
    private final FakeTopics topics = new FakeTopics();
    private final List<MirrorImage> handedOut = new ArrayList<>();
    private final MirrorImageTailer tailer = new MirrorImageTailer(consumer, topics, time, 7, null, metrics, handedOut::add);

    /** The internal topics' ids as a test sets them; empty: the topics do not exist. */
    private static final class FakeTopics implements InternalTopicsView {
        Map<String, String> ids = Map.of();

        @Override
        public Map<String, String> topicIds() {
            return ids;
        }

        @Override
        public void createState() {
        }

        @Override
        public List<InternalTopics.Misconfiguration> misconfigurations() {
            return List.of();
        }

        @Override
        public void close() {
        }
    }

    @AfterEach
    void close() {
        tailer.close();
        metrics.close();
    }

    private void createTopics(String incarnation) {
        Node node = new Node(0, "localhost", 9092);
        for (TopicPartition tp : List.of(METADATA, STATE)) {
            consumer.updatePartitions(tp.topic(), List.of(new PartitionInfo(tp.topic(), 0, node, new Node[]{node}, new Node[]{node})));
        }
        consumer.updateBeginningOffsets(Map.of(METADATA, 0L, STATE, 0L));
        consumer.updateEndOffsets(Map.of(METADATA, 0L, STATE, 0L));
        topics.ids = Map.of(METADATA.topic(), "m-" + incarnation, STATE.topic(), "s-" + incarnation);
    }

    private static MirrorTopicRecord topic(String name) {
        return new MirrorTopicRecord(name, "dr", DesiredState.MIRRORING, "id-" + name, 1, 1L);
    }

    private static PartitionStateRecord state(long lastMirroredOffset) {
        return new PartitionStateRecord("dr", "a", 0, PartitionState.MIRRORING, 3, 0, "id-a", lastMirroredOffset, 5, List.of(),
            lastMirroredOffset + 1, lastMirroredOffset + 1, null, -1, -1, -1, 1L);
    }

    /** Commits a record: appended to the log and the end offset (the last stable offset) moved past it. */
    private void commit(TopicPartition tp, long offset, String key, byte[] value) {
        consumer.addRecord(new ConsumerRecord<>(tp.topic(), tp.partition(), offset, RecordCodec.encodeKey(key), value));
        consumer.updateEndOffsets(Map.of(tp, offset + 1));
    }

    private double metric(String name) {
        return HealthMetrics.value(metrics, "image-tailer-7", name);
    }

    @Test
    void withoutInternalTopicsTheImageIsReadyAtOnceAndBarriersComplete() {
        CompletableFuture<Void> barrier = tailer.catchUp();
        assertEquals(MirrorImageTailer.TOPICS_LOOK_BACKOFF_MS, tailer.runOnce(), "looks again after a backoff");
        assertTrue(tailer.isReady());
        assertTrue(barrier.isDone() && !barrier.isCompletedExceptionally(), "nothing was committed when it was asked");
        assertSame(MirrorImage.EMPTY, tailer.image());
    }

    @Test
    void topicsWhosePartitionsTheConsumerDoesNotListYetAreNotAssignedWithoutThem() {
        // The moment after a first --create: both topics exist for the admin client, but this broker's consumer metadata
        // lists the partitions of __mirror_metadata only.
        Node node = new Node(0, "localhost", 9092);
        consumer.updatePartitions(METADATA.topic(), List.of(new PartitionInfo(METADATA.topic(), 0, node, new Node[]{node},
            new Node[]{node})));
        consumer.updateBeginningOffsets(Map.of(METADATA, 0L, STATE, 0L));
        consumer.updateEndOffsets(Map.of(METADATA, 0L, STATE, 0L));
        topics.ids = Map.of(METADATA.topic(), "m-1", STATE.topic(), "s-1");
        assertEquals(MirrorImageTailer.TOPICS_LOOK_BACKOFF_MS, tailer.runOnce(), "looks again after a backoff");
        assertTrue(consumer.assignment().isEmpty(), "nothing assigned: " + consumer.assignment());

        createTopics("1");
        assertEquals(0, tailer.runOnce());
        assertEquals(java.util.Set.of(METADATA, STATE), consumer.assignment());
        commit(METADATA, 0, RecordCodec.topicKey("a"), RecordCodec.encodeTopic(topic("a")));
        PartitionStateRecord stopped = state(10);
        commit(STATE, 0, stopped.logKey(), RecordCodec.encodeState(stopped));
        CompletableFuture<Void> barrier = tailer.catchUp();
        for (int round = 0; round < 5 && !barrier.isDone(); round++) {
            tailer.runOnce();
        }
        assertTrue(barrier.isDone());
        assertEquals(Optional.of(stopped), tailer.image().partitionState("dr", "a", 0), "the partition state was read");
    }

    @Test
    void aReadBarrierCompletesOnlyOnceTheImageHoldsWhatWasCommittedAtTheCall() {
        createTopics("1");
        assertEquals(0, tailer.runOnce()); // assigned
        assertEquals(0, tailer.runOnce()); // read to the (empty) initial ends
        assertTrue(tailer.isReady());
        consumer.setMaxPollRecords(1);
        commit(METADATA, 0, RecordCodec.topicKey("a"), RecordCodec.encodeTopic(topic("a")));
        PartitionStateRecord first = state(10);
        PartitionStateRecord second = state(20);
        commit(STATE, 0, first.logKey(), RecordCodec.encodeState(first));
        commit(STATE, 1, second.logKey(), RecordCodec.encodeState(second));

        List<MirrorImage> atCompletion = new ArrayList<>();
        CompletableFuture<Void> barrier = tailer.catchUp().thenRun(() -> atCompletion.add(tailer.image()));
        tailer.runOnce(); // one record, and the barrier's target: the ends now
        // Committed after the call: the barrier does not wait for them.
        commit(METADATA, 1, RecordCodec.topicKey("b"), RecordCodec.encodeTopic(topic("b")));
        commit(STATE, 2, "dr/b/0@3", RecordCodec.encodeState(new PartitionStateRecord("dr", "b", 0, PartitionState.MIRRORING,
            3, 0, "id-b", 1, 5, List.of(), 2, 2, null, -1, -1, -1, 1L)));
        for (int round = 0; round < 5 && !barrier.isDone(); round++) {
            assertFalse(consumer.position(METADATA) >= 1 && consumer.position(STATE) >= 2, "the ends at the call were reached");
            tailer.runOnce();
        }
        assertTrue(barrier.isDone());
        assertFalse(consumer.position(METADATA) >= 2 && consumer.position(STATE) >= 3, "it waited for a record committed later");
        MirrorImage image = atCompletion.get(0);
        assertEquals(topic("a"), image.topics().get("a"));
        assertEquals(second, image.partitionState("dr", "a", 0).orElseThrow(), "the latest record committed before the call");
        assertSame(image, handedOut.get(handedOut.size() - 1), "the listener had the image before the barrier completed");
    }

    @Test
    void aFailedRoundIsRetriedFromWhereItStoppedAndShowsInTheHealthMetric() {
        createTopics("1");
        tailer.runOnce();
        tailer.runOnce();
        assertEquals(1.0, metric("thread-healthy"));
        commit(METADATA, 0, RecordCodec.topicKey("a"), RecordCodec.encodeTopic(topic("a")));
        CompletableFuture<Void> barrier = tailer.catchUp();

        consumer.setPollException(new KafkaException("broker unreachable"));
        assertEquals(1_000, tailer.runOnce(), "the first retry after the minimum backoff");
        assertEquals(0.0, metric("thread-healthy"));
        assertEquals(1.0, metric("thread-failures-total"));
        consumer.setPollException(new KafkaException("still unreachable"));
        assertEquals(2_000, tailer.runOnce(), "the backoff doubles while it fails");
        assertFalse(barrier.isDone(), "a barrier waits while the topics cannot be read (fail closed)");
        assertTrue(tailer.image().topics().isEmpty());

        assertEquals(0, tailer.runOnce());
        assertEquals(1.0, metric("thread-healthy"));
        assertEquals(2.0, metric("thread-failures-total"));
        assertEquals(Map.of("a", topic("a")), tailer.image().topics());
        assertTrue(barrier.isDone());
    }

    @Test
    void reCreatedInternalTopicsAreReadAgainFromTheirBeginning() {
        createTopics("1");
        tailer.runOnce();
        commit(METADATA, 0, RecordCodec.topicKey("a"), RecordCodec.encodeTopic(topic("a")));
        tailer.runOnce();
        assertEquals(Map.of("a", topic("a")), tailer.image().topics());

        topics.ids = Map.of(METADATA.topic(), "m-2", STATE.topic(), "s-2"); // deleted and created again
        consumer.updateEndOffsets(Map.of(METADATA, 0L, STATE, 0L));
        tailer.runOnce();
        assertEquals(Map.of("a", topic("a")), tailer.image().topics(), "checked only every "
            + MirrorImageTailer.INCARNATION_CHECK_MS + " ms");
        time.sleep(MirrorImageTailer.INCARNATION_CHECK_MS);
        tailer.runOnce(); // the check sees the new ids
        commit(METADATA, 0, RecordCodec.topicKey("b"), RecordCodec.encodeTopic(topic("b")));
        tailer.runOnce(); // assigned again: the image starts over
        assertTrue(tailer.image().topics().isEmpty(), "what the lost topics said no longer holds");
        tailer.runOnce();
        assertEquals(Map.of("b", topic("b")), tailer.image().topics(), "the new topics are read from their beginning");
    }

    @Test
    void closingFailsTheBarriersStillWaiting() {
        createTopics("1");
        tailer.runOnce();
        commit(METADATA, 0, RecordCodec.topicKey("a"), RecordCodec.encodeTopic(topic("a")));
        CompletableFuture<Void> barrier = tailer.catchUp();
        tailer.close();
        ExecutionException e = assertThrows(ExecutionException.class, barrier::get);
        assertEquals("the mirror image tailer is closed", e.getCause().getMessage());
        assertTrue(tailer.catchUp().isCompletedExceptionally());
    }
}
