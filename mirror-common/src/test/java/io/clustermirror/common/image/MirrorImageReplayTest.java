package io.clustermirror.common.image;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SyncedTopicConfigsRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one replay of consumed internal-topic records into an image ({@link MirrorDelta#replay}, the one-shot reader). */
class MirrorImageReplayTest {
    private static final TopicPartition METADATA = new TopicPartition(InternalTopics.METADATA, 0);
    private static final TopicPartition STATE = new TopicPartition(InternalTopics.STATE, 0);
    private final MockTime time = new MockTime(10);
    private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>("earliest");

    private static MirrorTopicRecord topic(String name) {
        return new MirrorTopicRecord(name, "dr", DesiredState.MIRRORING, "id-" + name, 1, 1L);
    }

    private static PartitionStateRecord state(String topic, int leaderEpoch) {
        return new PartitionStateRecord("dr", topic, 0, PartitionState.MIRRORING, leaderEpoch, 1, "id", -1L, -1, List.of(),
            -1, -1, null, -1, -1, -1, 1L);
    }

    private static ConsumerRecord<byte[], byte[]> record(TopicPartition tp, long offset, String key, byte[] value) {
        return new ConsumerRecord<>(tp.topic(), tp.partition(), offset, RecordCodec.encodeKey(key), value);
    }

    @Test
    void replaysBothTopicsFromTheirBeginningsUpToTheirEnds() {
        PartitionStateRecord s = state("a", 3);
        consumer.assign(List.of(METADATA, STATE));
        consumer.updateBeginningOffsets(Map.of(METADATA, 0L, STATE, 0L));
        consumer.updateEndOffsets(Map.of(METADATA, 3L, STATE, 1L));
        consumer.addRecord(record(METADATA, 0, RecordCodec.topicKey("a"), RecordCodec.encodeTopic(topic("a"))));
        consumer.addRecord(record(METADATA, 1, RecordCodec.topicKey("b"), RecordCodec.encodeTopic(topic("b"))));
        consumer.addRecord(record(METADATA, 2, RecordCodec.topicKey("b"), null));
        consumer.addRecord(record(STATE, 0, s.logKey(), RecordCodec.encodeState(s)));

        MirrorImage image = MirrorImageReader.replayFromBeginning(consumer, List.of(METADATA, STATE), time, Long.MAX_VALUE,
            MirrorDelta::replay).orElseThrow();
        assertEquals(Map.of("a", topic("a")), image.topics());
        assertEquals(Map.of(s.logKey(), s), image.stateLog());
    }

    @Test
    void noPartitionIsTheEmptyImageAndADeadlineIsEmpty() {
        assertEquals(Optional.of(MirrorImage.EMPTY), MirrorImageReader.replayFromBeginning(consumer, List.of(), time, 0,
            MirrorDelta::replay));
        consumer.assign(List.of(METADATA));
        consumer.updateBeginningOffsets(Map.of(METADATA, 0L));
        consumer.updateEndOffsets(Map.of(METADATA, 1L));
        assertEquals(Optional.empty(), MirrorImageReader.replayFromBeginning(consumer, List.of(METADATA), time,
            time.milliseconds() + 100, MirrorDelta::replay));
    }

    @Test
    void anUnreadableRecordFailsAStrictReplayAndIsSkippedByALenientOne() {
        ConsumerRecord<byte[], byte[]> unreadable = record(METADATA, 0, RecordCodec.topicKey("a"),
            "not json".getBytes(StandardCharsets.UTF_8));
        ConsumerRecord<byte[], byte[]> good = record(METADATA, 1, RecordCodec.topicKey("b"), RecordCodec.encodeTopic(topic("b")));
        MirrorDelta strict = new MirrorDelta(MirrorImage.EMPTY);
        assertThrows(IllegalArgumentException.class, () -> strict.replay(unreadable));
        assertThrows(IllegalArgumentException.class, () -> strict.replay(record(new TopicPartition("other", 0), 0, "k", null)));
        assertTrue(strict.apply().topics().isEmpty());

        MirrorDelta lenient = new MirrorDelta(MirrorImage.EMPTY);
        lenient.replayOrSkip(unreadable);
        lenient.replayOrSkip(good);
        assertEquals(Map.of("b", topic("b")), lenient.apply().topics());
    }

    @Test
    void theSyncedTopicConfigsReplayByTopicAndFollowTheDesiredState() {
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        SyncedTopicConfigsRecord first = new SyncedTopicConfigsRecord("dr", "a", Map.of("retention.ms", "1000"), 1L);
        SyncedTopicConfigsRecord second = new SyncedTopicConfigsRecord("dr", "a", Map.of("retention.ms", "2000"), 2L);
        delta.replay(record(METADATA, 0, SyncedTopicConfigsRecord.key("a"), RecordCodec.encodeSyncedTopicConfigs(first)));
        delta.replay(record(METADATA, 1, SyncedTopicConfigsRecord.key("a"), RecordCodec.encodeSyncedTopicConfigs(second)));
        delta.replay(record(METADATA, 2, SyncedTopicConfigsRecord.key("b"), RecordCodec.encodeSyncedTopicConfigs(
            new SyncedTopicConfigsRecord("dr", "b", Map.of(), 3L))));
        delta.replay(record(METADATA, 3, SyncedTopicConfigsRecord.key("b"), null));
        MirrorImage image = delta.apply();
        assertEquals(Optional.of(second), image.syncedTopicConfigs("a"));
        assertEquals(Optional.empty(), image.syncedTopicConfigs("b"));
        assertEquals(Optional.of(second), MirrorImage.EMPTY.withDesiredStateOf(image).syncedTopicConfigs("a"));
    }
}
