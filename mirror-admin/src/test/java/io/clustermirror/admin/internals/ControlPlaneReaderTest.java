package io.clustermirror.admin.internals;

import io.clustermirror.common.MirrorError;
import io.clustermirror.common.records.CommandLogEntry;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.MirrorCommand;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.MockTime;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The poll loops against Kafka's {@link MockConsumer}. Command values are decoded by a lookup table rather than
 * the real codec, so these tests only check which records are read and when the loops stop.
 */
class ControlPlaneReaderTest {
    private static final TopicPartition COMMANDS = new TopicPartition("__mirror_commands", 0);
    private static final long TICK_MS = 10;

    private final MockTime time = new MockTime(TICK_MS);
    private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>("earliest");
    private final Map<String, CommandLogEntry> entries = Map.of(
        "request-mine", new MirrorCommand("mine", CommandOp.START, "dr", Map.of(), List.of("a"), List.of(), 1L),
        "request-other", new MirrorCommand("other", CommandOp.STOP, "dr", Map.of(), List.of("a"), List.of(), 1L),
        "result-other", CommandResult.ok("other", "stopped", List.of("a")),
        "result-mine", CommandResult.failed("mine", MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR, "a is in dr"));
    private final ControlPlaneReader reader = new ControlPlaneReader(time,
        value -> entries.get(new String(value, StandardCharsets.UTF_8)));
    private long nextOffset;

    private ConsumerRecord<byte[], byte[]> command(String key, String value) {
        return new ConsumerRecord<>(COMMANDS.topic(), COMMANDS.partition(), nextOffset++, bytes(key),
            value == null ? null : bytes(value));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private void assignCommands() {
        consumer.assign(List.of(COMMANDS));
        consumer.updateBeginningOffsets(Map.of(COMMANDS, 0L));
        consumer.seek(COMMANDS, 0);
    }

    @Test
    void awaitResultSkipsRequestsAndOtherResults() {
        assignCommands();
        consumer.addRecord(command("mine", "request-mine"));
        consumer.addRecord(command("other", "request-other"));
        consumer.addRecord(command("other", "result-other"));
        consumer.addRecord(command("mine", null));
        consumer.addRecord(command("mine", "result-mine"));
        assertEquals(Optional.of(entries.get("result-mine")),
            reader.awaitResult(consumer, bytes("mine"), time.milliseconds() + 1000));
    }

    @Test
    void awaitResultKeepsPollingUntilTheResultArrives() {
        assignCommands();
        consumer.addRecord(command("mine", "request-mine"));
        consumer.schedulePollTask(() -> { });
        consumer.schedulePollTask(() -> consumer.addRecord(command("other", "result-other")));
        consumer.schedulePollTask(() -> consumer.addRecord(command("mine", "result-mine")));
        assertEquals(Optional.of(entries.get("result-mine")),
            reader.awaitResult(consumer, bytes("mine"), time.milliseconds() + 1000));
    }

    @Test
    void awaitResultGivesUpAtTheDeadline() {
        assignCommands();
        consumer.addRecord(command("mine", "request-mine"));
        long deadline = time.milliseconds() + 500;
        assertEquals(Optional.empty(), reader.awaitResult(consumer, bytes("mine"), deadline));
        assertTrue(time.milliseconds() >= deadline);
        assertTrue(consumer.lastPollTimeout().toMillis() <= ControlPlaneReader.MAX_POLL_MS);
    }

    @Test
    void readAllReadsEveryPartitionToItsEnd() {
        TopicPartition metadata = new TopicPartition("__mirror_metadata", 0);
        TopicPartition state0 = new TopicPartition("__mirror_state", 0);
        TopicPartition state1 = new TopicPartition("__mirror_state", 1);
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
        assertTrue(reader.readAll(consumer, partitions, r -> read.add(new String(r.key(), StandardCharsets.UTF_8)),
            time.milliseconds() + 1000));
        assertEquals(List.of("m0", "m1", "s5", "s6"), read.stream().sorted().toList());
        assertTrue(read.indexOf("m0") < read.indexOf("m1"));
        assertTrue(read.indexOf("s5") < read.indexOf("s6"));
    }

    @Test
    void readAllReportsADeadlineReachedBeforeTheEnd() {
        TopicPartition metadata = new TopicPartition("__mirror_metadata", 0);
        consumer.assign(List.of(metadata));
        consumer.updateBeginningOffsets(Map.of(metadata, 0L));
        consumer.updateEndOffsets(Map.of(metadata, 3L));
        consumer.addRecord(new ConsumerRecord<>(metadata.topic(), 0, 0, bytes("m0"), bytes("v")));
        List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
        assertFalse(reader.readAll(consumer, List.of(metadata), read::add, time.milliseconds() + 500));
        assertEquals(1, read.size());
    }
}
