package io.clustermirror.broker.controller;

import io.clustermirror.common.MirrorError;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.MirrorCommand;
import io.clustermirror.common.records.RecordCodec;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the controller does with each record of the command log: apply each command once, never stop at a bad record. */
class CommandLogCursorTest {
    private static MirrorCommand stop(String id) {
        return new MirrorCommand(id, CommandOp.STOP, "dr", Map.of(), List.of("orders"), List.of(), 1L);
    }

    private static byte[] key(String id) {
        return id == null ? null : RecordCodec.encodeKey(id);
    }

    private static CommandLogCursor.Step next(CommandLogCursor cursor, long offset, String key, Object entry) {
        byte[] value = entry instanceof byte[] raw ? raw : RecordCodec.encodeCommand((io.clustermirror.common.records.CommandLogEntry) entry);
        return cursor.next(offset, key(key), value);
    }

    @Test
    void recordsBeforeThePositionAreNeverAppliedAgain() {
        CommandLogCursor cursor = new CommandLogCursor(2);
        assertInstanceOf(CommandLogCursor.Skip.class, next(cursor, 0, "c1", stop("c1")));
        assertInstanceOf(CommandLogCursor.Skip.class, next(cursor, 1, "c1", CommandResult.ok("c1", "stopping 1 topic(s)", List.of("orders"))));
        assertEquals(new CommandLogCursor.Apply(stop("c2")), next(cursor, 2, "c2", stop("c2")));
    }

    @Test
    void aCommandWhoseIdHasAResultIsAnsweredWithThatResultAndNotApplied() {
        // No recorded position (a consumer group's offsets were lost, say): the results in the log still tell.
        CommandLogCursor cursor = new CommandLogCursor(0);
        next(cursor, 1, "c1", CommandResult.ok("c1", "stopping 1 topic(s)", List.of("orders")));
        CommandLogCursor.Step replayed = next(cursor, 0, "c1", stop("c1"));
        CommandLogCursor.Answer answer = assertInstanceOf(CommandLogCursor.Answer.class, replayed);
        assertEquals(MirrorError.NONE, answer.result().error());
        assertEquals(List.of("orders"), answer.result().topics());
        assertTrue(answer.result().message().contains("already processed; it is not applied again"), answer.result().message());
    }

    /**
     * A lost position (a deleted {@code __mirror_metadata}) with the log in its real order, each command before its result:
     * the first pass over the log learns every result, so the second applies only the command that has none.
     */
    @Test
    void withoutAPositionTheFirstPassKeepsCommandsBeforeTheirResultsFromBeingAppliedAgain() {
        byte[] c1 = RecordCodec.encodeCommand(stop("c1"));
        byte[] r1 = RecordCodec.encodeCommand(CommandResult.ok("c1", "stopping 1 topic(s)", List.of("orders")));
        byte[] c2 = RecordCodec.encodeCommand(stop("c2"));
        CommandLogCursor cursor = new CommandLogCursor(0);
        for (byte[] value : List.of(c1, r1, c2)) {
            cursor.learnResult(value);
        }
        assertInstanceOf(CommandLogCursor.Answer.class, cursor.next(0, RecordCodec.encodeKey("c1"), c1));
        assertInstanceOf(CommandLogCursor.Skip.class, cursor.next(1, RecordCodec.encodeKey("c1"), r1));
        assertEquals(new CommandLogCursor.Apply(stop("c2")), cursor.next(2, RecordCodec.encodeKey("c2"), c2));
    }

    @Test
    void aCommandResentWithTheIdOfOneJustAppliedIsNotAppliedAgain() {
        CommandLogCursor cursor = new CommandLogCursor(0);
        assertInstanceOf(CommandLogCursor.Apply.class, next(cursor, 0, "c1", stop("c1")));
        cursor.committed(CommandResult.failed("c1", MirrorError.MIRROR_TOPIC_NOT_MIRRORING, "already STOPPED"));
        CommandLogCursor.Answer answer = assertInstanceOf(CommandLogCursor.Answer.class, next(cursor, 3, "c1", stop("c1")));
        assertEquals(MirrorError.MIRROR_TOPIC_NOT_MIRRORING, answer.result().error());
    }

    @Test
    void unusableRecordsAreAnsweredUnderTheirKeyOrSkippedWithAReason() {
        CommandLogCursor cursor = new CommandLogCursor(0);
        byte[] garbage = "not json".getBytes(StandardCharsets.UTF_8);
        CommandLogCursor.Answer keyed = assertInstanceOf(CommandLogCursor.Answer.class, next(cursor, 0, "c9", garbage));
        assertEquals("c9", keyed.result().commandId());
        assertEquals(MirrorError.INVALID_REQUEST, keyed.result().error());
        assertTrue(keyed.result().message().contains("offset 0"), keyed.result().message());
        assertInstanceOf(CommandLogCursor.Unusable.class, next(cursor, 1, null, garbage));
        assertInstanceOf(CommandLogCursor.Unusable.class, next(cursor, 2, null, stop(null)));
        CommandLogCursor.Answer noId = assertInstanceOf(CommandLogCursor.Answer.class, next(cursor, 3, "k", stop(" ")));
        assertTrue(noId.result().message().contains("no command id"), noId.result().message());
        assertInstanceOf(CommandLogCursor.Skip.class, new CommandLogCursor(5).next(1, key("c9"), garbage),
            "an unusable record before the position was answered or logged already");
    }
}
