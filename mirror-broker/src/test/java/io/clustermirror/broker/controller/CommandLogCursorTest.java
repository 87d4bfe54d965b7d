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
        return cursor.next(offset, 0L, key(key), value);
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
            cursor.learn(0L, value);
        }
        assertInstanceOf(CommandLogCursor.Answer.class, cursor.next(0, 0L, RecordCodec.encodeKey("c1"), c1));
        assertInstanceOf(CommandLogCursor.Skip.class, cursor.next(1, 0L, RecordCodec.encodeKey("c1"), r1));
        assertEquals(new CommandLogCursor.Apply(stop("c2")), cursor.next(2, 0L, RecordCodec.encodeKey("c2"), c2));
    }

    @Test
    void aCommandResentWithTheIdOfOneJustAppliedIsNotAppliedAgain() {
        CommandLogCursor cursor = new CommandLogCursor(0);
        assertInstanceOf(CommandLogCursor.Apply.class, next(cursor, 0, "c1", stop("c1")));
        cursor.committed(CommandResult.failed("c1", MirrorError.MIRROR_TOPIC_NOT_MIRRORING, "already STOPPED"), 2L);
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
        assertInstanceOf(CommandLogCursor.Skip.class, new CommandLogCursor(5).next(1, 0L, key("c9"), garbage),
            "an unusable record before the position was answered or logged already");
    }

    private static MirrorCommand create(String id, long timestampMs) {
        return new MirrorCommand(id, CommandOp.CREATE, "dr", Map.of("bootstrap.servers", "s:9092"), List.of(), List.of(), timestampMs);
    }

    private static boolean refusedAsForgotten(CommandLogCursor.Step step) {
        return step instanceof CommandLogCursor.Answer a && a.result().error() == MirrorError.INVALID_REQUEST
            && a.result().message().contains("may have been applied already, so it is not applied");
    }

    /**
     * Issue 32, 8a: CREATE, then its DELETE, then so many commands that the window forgets both; the CREATE seen again must
     * not create the mirror again. Every command applied, with each result committed at the time its command was written
     * (the controller keeps up), and after each one the cursor is asked again about every command before it: a command
     * it still remembers is answered with its first result, one it forgot is refused, none is applied twice.
     */
    @Test
    void aCommandSeenAgainAfterTheWindowForgotItIsRefusedNeverApplied() {
        CommandLogCursor cursor = new CommandLogCursor(0);
        int commands = CommandLogCursor.REMEMBERED_RESULTS + 3;
        long offset = 0;
        for (int i = 0; i < commands; i++) {
            MirrorCommand c = create("c" + i, 1_000L + i);
            assertEquals(new CommandLogCursor.Apply(c), next(cursor, offset++, c.commandId(), c), "a new command is applied");
            cursor.committed(CommandResult.ok(c.commandId(), "created", List.of()), c.timestampMs());
        }
        int forgotten = commands - CommandLogCursor.REMEMBERED_RESULTS;
        assertEquals(1_000L + forgotten - 1, cursor.forgottenUpToMs(), "the horizon is the last forgotten command's time");
        for (int i = 0; i < commands; i++) {
            MirrorCommand again = create("c" + i, 1_000L + i);
            CommandLogCursor.Step step = next(cursor, offset++, again.commandId(), again);
            if (i < forgotten) {
                assertTrue(refusedAsForgotten(step), "c" + i + " was forgotten: refused, not applied: " + step);
            } else {
                CommandLogCursor.Answer answer = assertInstanceOf(CommandLogCursor.Answer.class, step, "c" + i + " is remembered");
                assertEquals(MirrorError.NONE, answer.result().error());
            }
        }
        MirrorCommand later = create("new", 1_000L + commands);
        assertEquals(new CommandLogCursor.Apply(later), next(cursor, offset, "new", later), "a command written after the horizon");
    }

    /**
     * What is forgotten moves the horizon to the later of the command's own time and its result's, whichever pass learnt
     * them: a client clock ahead of the controller's cannot slip a copy past the horizon.
     */
    @Test
    void theHorizonIsTheLaterOfTheCommandsTimeAndItsResults() {
        for (boolean firstPass : List.of(true, false)) {
            CommandLogCursor cursor = new CommandLogCursor(0);
            for (int i = 0; i <= CommandLogCursor.REMEMBERED_RESULTS; i++) {
                // c0's client clock runs 500 ms ahead of the controller, which commits it at 100.
                MirrorCommand c = create("c" + i, i == 0 ? 600L : 100L + i);
                byte[] result = RecordCodec.encodeCommand(CommandResult.ok(c.commandId(), "created", List.of()));
                if (firstPass) {
                    cursor.learn(c.timestampMs(), RecordCodec.encodeCommand(c));
                    cursor.learn(i == 0 ? 100L : c.timestampMs(), result);
                } else {
                    next(cursor, 2L * i, c.commandId(), c);
                    cursor.committed(CommandResult.ok(c.commandId(), "created", List.of()), i == 0 ? 100L : c.timestampMs());
                }
            }
            assertEquals(600L, cursor.forgottenUpToMs(), firstPass ? "first pass" : "second pass");
            assertTrue(refusedAsForgotten(next(cursor, 1_000_000, "c0", create("c0", 600L))));
        }
    }

    /** Results below the start of a log that lost records (retention, DeleteRecords) are gone: the first record left is the horizon. */
    @Test
    void aLogWhoseStartMovedRefusesCommandsWrittenBeforeItsFirstRecord() {
        CommandLogCursor cursor = new CommandLogCursor(7, 5, CommandLogCursor.NOTHING_FORGOTTEN, null);
        cursor.learn(2_000L, RecordCodec.encodeCommand(CommandResult.ok("c4", "created", List.of())));
        assertEquals(2_000L, cursor.forgottenUpToMs());
        assertTrue(refusedAsForgotten(next(cursor, 7, "c1", create("c1", 1_500L))), "a copy of a command whose result was deleted");
        assertEquals(new CommandLogCursor.Apply(create("c8", 2_001L)), next(cursor, 8, "c8", create("c8", 2_001L)));

        CommandLogCursor whole = new CommandLogCursor(0);
        whole.learn(2_000L, RecordCodec.encodeCommand(create("c0", 1_500L)));
        assertEquals(CommandLogCursor.NOTHING_FORGOTTEN, whole.forgottenUpToMs(), "a log from offset 0 lost nothing");
    }

    /**
     * The recorded position holds only in its own log: every combination of recorded topic id (same, other, none) and of
     * the new log's end (below, at, above the position).
     */
    @Test
    void thePositionIsResumedOnlyInTheLogItWasTakenIn() {
        long position = 4;
        long lastCommitMs = 9_000;
        for (String recordedId : java.util.Arrays.asList("log-1", "log-0", null)) {
            for (long end : List.of(1L, 4L, 6L)) {
                CommandLogCursor cursor = CommandLogCursor.resume(java.util.Optional.of(
                    new io.clustermirror.common.records.ControllerPositionRecord(position, "c3", lastCommitMs, recordedId)), "log-1", 0, end);
                boolean sameLog = "log-1".equals(recordedId) || recordedId == null && end >= position;
                String where = "recorded in " + recordedId + ", new log ends at " + end;
                assertEquals(sameLog ? position : 0, cursor.startOffset(), where);
                assertEquals(sameLog ? CommandLogCursor.NOTHING_FORGOTTEN : lastCommitMs, cursor.forgottenUpToMs(), where);
                assertEquals(!sameLog, cursor.lostBefore().isPresent(), where);
            }
        }
        CommandLogCursor none = CommandLogCursor.resume(java.util.Optional.empty(), "log-1", 0, 3);
        assertEquals(0, none.startOffset());
        assertEquals(CommandLogCursor.NOTHING_FORGOTTEN, none.forgottenUpToMs(), "no position: the results in the log tell");
        CommandLogCursor other = CommandLogCursor.resume(java.util.Optional.of(
            new io.clustermirror.common.records.ControllerPositionRecord(position, "c3", lastCommitMs, "log-0")), "log-1", 0, 1);
        assertTrue(refusedAsForgotten(next(other, 0, "c2", create("c2", lastCommitMs))), "a copy of an old-log command");
        assertEquals(new CommandLogCursor.Apply(create("c5", lastCommitMs + 1)), next(other, 0, "c5", create("c5", lastCommitMs + 1)));
    }
}
