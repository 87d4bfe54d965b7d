package io.clustermirror.common;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reading up to the ends captured at the call, against Kafka's {@link MockConsumer} and {@link MockTime}. */
class LogEndsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    private final MockTime time = new MockTime(10);
    private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>("earliest");
    private final TopicPartition metadata = new TopicPartition(InternalTopics.METADATA, 0);

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void readFromBeginningReadsEveryPartitionToItsEnd() {
        TopicPartition state0 = new TopicPartition(InternalTopics.STATE, 0);
        TopicPartition state1 = new TopicPartition(InternalTopics.STATE, 1);
        List<TopicPartition> partitions = List.of(metadata, state0, state1);
        consumer.assign(partitions);
        // A compacted partition can start past offset 0; an empty one ends where it starts.
        consumer.updateBeginningOffsets(Map.of(metadata, 0L, state0, 5L, state1, 0L));
        consumer.updateEndOffsets(Map.of(metadata, 2L, state0, 7L, state1, 0L));
        consumer.addRecord(new ConsumerRecord<>(metadata.topic(), 0, 0, bytes("m0"), bytes("v")));
        consumer.addRecord(new ConsumerRecord<>(metadata.topic(), 0, 1, bytes("m1"), null));
        consumer.addRecord(new ConsumerRecord<>(state0.topic(), 0, 5, bytes("s5"), bytes("v")));
        consumer.addRecord(new ConsumerRecord<>(state0.topic(), 0, 6, bytes("s6"), bytes("v")));
        consumer.setMaxPollRecords(1);

        List<String> read = new ArrayList<>();
        assertTrue(LogEnds.readFromBeginning(consumer, partitions, time, time.milliseconds() + 1000,
            r -> read.add(new String(r.key(), StandardCharsets.UTF_8))));
        assertEquals(List.of("m0", "m1", "s5", "s6"), read.stream().sorted().toList());
        assertTrue(read.indexOf("m0") < read.indexOf("m1"));
        assertTrue(read.indexOf("s5") < read.indexOf("s6"));
        assertTrue(consumer.lastPollTimeout().toMillis() <= LogEnds.MAX_POLL_MS);
    }

    @Test
    void readFromBeginningReportsADeadlineReachedBeforeTheEnd() {
        consumer.assign(List.of(metadata));
        consumer.updateBeginningOffsets(Map.of(metadata, 0L));
        consumer.updateEndOffsets(Map.of(metadata, 3L));
        consumer.addRecord(new ConsumerRecord<>(metadata.topic(), 0, 0, bytes("m0"), bytes("v")));
        List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
        assertFalse(LogEnds.readFromBeginning(consumer, List.of(metadata), time, time.milliseconds() + 500, read::add));
        assertEquals(1, read.size());
    }

    @Test
    void recordsCommittedAfterTheCallAreNotWaitedFor() {
        consumer.assign(List.of(metadata));
        consumer.updateBeginningOffsets(Map.of(metadata, 0L));
        consumer.updateEndOffsets(Map.of(metadata, 1L));
        consumer.addRecord(new ConsumerRecord<>(metadata.topic(), 0, 0, bytes("m0"), bytes("v")));
        List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
        assertTrue(LogEnds.readFromBeginning(consumer, List.of(metadata), time, Long.MAX_VALUE, r -> {
            read.add(r);
            consumer.updateEndOffsets(Map.of(metadata, 5L)); // committed while reading: not part of "up to now"
        }));
        assertEquals(1, read.size());
    }

    @Test
    void endsAreReachedOnlyOnceEveryPositionIsAtOrPastThem() {
        TopicPartition state0 = new TopicPartition(InternalTopics.STATE, 0);
        consumer.assign(List.of(metadata, state0));
        consumer.updateEndOffsets(Map.of(metadata, 2L, state0, 1L));
        LogEnds ends = LogEnds.capture(consumer, List.of(metadata, state0), TIMEOUT);
        consumer.seek(metadata, 2);
        consumer.seek(state0, 0);
        assertFalse(ends.reachedBy(consumer, TIMEOUT));
        consumer.seek(state0, 1); // e.g. moved over a transaction marker, returning no record
        assertTrue(ends.reachedBy(consumer, TIMEOUT));
        assertTrue(LogEnds.NONE.reachedBy(consumer, TIMEOUT));
    }
}
