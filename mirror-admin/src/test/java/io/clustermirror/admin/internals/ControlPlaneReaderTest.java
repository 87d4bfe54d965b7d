package io.clustermirror.admin.internals;

import io.clustermirror.common.MirrorError;
import io.clustermirror.common.records.CommandLogEntry;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.ControllerProblem;
import io.clustermirror.common.records.MirrorCommand;

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
        "result-mine", CommandResult.failed("mine", MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR, "a is in dr"),
        "problem", new ControllerProblem(2, "cannot create __mirror_metadata", 5L),
        "request-under-the-problem-key", new MirrorCommand("x", CommandOp.STOP, "dr", Map.of(), List.of("a"), List.of(), 1L));
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
    void awaitAnswerSkipsRequestsAndOtherResults() {
        assignCommands();
        consumer.addRecord(command("mine", "request-mine"));
        consumer.addRecord(command("other", "request-other"));
        consumer.addRecord(command("other", "result-other"));
        consumer.addRecord(command("mine", null));
        consumer.addRecord(command("mine", "result-mine"));
        assertEquals(Optional.of(entries.get("result-mine")),
            reader.awaitAnswer(consumer, bytes("mine"), time.milliseconds() + 1000));
    }

    @Test
    void awaitAnswerKeepsPollingUntilTheResultArrives() {
        assignCommands();
        consumer.addRecord(command("mine", "request-mine"));
        consumer.schedulePollTask(() -> { });
        consumer.schedulePollTask(() -> consumer.addRecord(command("other", "result-other")));
        consumer.schedulePollTask(() -> consumer.addRecord(command("mine", "result-mine")));
        assertEquals(Optional.of(entries.get("result-mine")),
            reader.awaitAnswer(consumer, bytes("mine"), time.milliseconds() + 1000));
    }

    @Test
    void awaitAnswerGivesUpAtTheDeadline() {
        assignCommands();
        consumer.addRecord(command("mine", "request-mine"));
        long deadline = time.milliseconds() + 500;
        assertEquals(Optional.empty(), reader.awaitAnswer(consumer, bytes("mine"), deadline));
        assertTrue(time.milliseconds() >= deadline);
        assertTrue(consumer.lastPollTimeout().toMillis() <= ControlPlaneReader.MAX_POLL_MS);
    }

    /**
     * A controller that cannot work says so after the command: its second report ends the wait at once with why, not at
     * the deadline; a single failed attempt does not (the next one may work).
     */
    @Test
    void aControllerProblemReportedTwiceAfterTheCommandEndsTheWait() {
        assignCommands();
        consumer.addRecord(command("mine", "request-mine"));
        consumer.addRecord(command("controller:problem", null));
        consumer.addRecord(command("controller:problem", "request-under-the-problem-key"));
        consumer.addRecord(command("controller:problem", "problem"));
        consumer.addRecord(command("other", "result-other"));
        consumer.schedulePollTask(() -> consumer.addRecord(command("controller:problem", "problem")));
        long start = time.milliseconds();
        assertEquals(Optional.of(entries.get("problem")), reader.awaitAnswer(consumer, bytes("mine"), start + 60_000));
        assertTrue(time.milliseconds() - start < 1000, "waited " + (time.milliseconds() - start) + " ms");
    }

    @Test
    void aResultAfterOneProblemIsTheAnswer() {
        assignCommands();
        consumer.addRecord(command("mine", "request-mine"));
        consumer.addRecord(command("controller:problem", "problem"));
        consumer.addRecord(command("mine", "result-mine"));
        consumer.addRecord(command("controller:problem", "problem"));
        assertEquals(Optional.of(entries.get("result-mine")), reader.awaitAnswer(consumer, bytes("mine"), time.milliseconds() + 1000));
    }
}
