package io.clustermirror.broker.controller;

import io.clustermirror.common.MirrorError;
import io.clustermirror.common.records.CommandLogEntry;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.ControllerPositionRecord;
import io.clustermirror.common.records.MirrorCommand;
import io.clustermirror.common.records.RecordCodec;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The controller's reading of {@code __mirror_commands}: what to do with each record, fed every record in log order
 * from the log's start. Pure; one per controller activation.
 *
 * <p>Invariants: a record below the position the controller recorded in {@code __mirror_metadata} is never acted on
 * (it is only read for its results); a command whose id already has a result is never applied again, it is answered
 * with that first result. A result is committed in the same transaction as its command's effects, so a result in the
 * log means the command was applied: the two together make each command apply exactly once, whatever happened to the
 * controller's consumer group, its offsets or the brokers.
 *
 * <p>Results the cursor no longer has (beyond the last {@value #REMEMBERED_RESULTS}, deleted from the log's start by
 * retention or DeleteRecords, or gone with a deleted command log) cannot tell a command seen again from a new one. For
 * those it keeps a horizon instead ({@link #forgottenUpToMs()}): no command it has forgotten was written after it, so a
 * command it has no result for and that was written ({@link MirrorCommand#timestampMs()}) at or before the horizon is
 * refused, never applied: it may be a copy of one that was. Clients give every command a new id and the time it was
 * sent, so this refuses only copies, and commands of clients whose clock lags the controller's.
 */
final class CommandLogCursor {
    static final int REMEMBERED_RESULTS = 10_000;
    /** No horizon: the cursor has forgotten no result. */
    static final long NOTHING_FORGOTTEN = Long.MIN_VALUE;

    /** What the controller does with one record. */
    sealed interface Step {
    }

    /** Nothing: a result, or a record the controller already processed. */
    record Skip() implements Step {
    }

    /** A record that cannot be answered (no id, no key): the controller logs {@code reason} and goes on. */
    record Unusable(String reason) implements Step {
    }

    /** Answer with {@code result} and apply nothing: a command seen again, or a record keyed like a command but unusable. */
    record Answer(CommandResult result) implements Step {
    }

    /** Apply the command. */
    record Apply(MirrorCommand command) implements Step {
    }

    /** A result, and the latest time by which its command was written (the command's own time or the result's, the later). */
    private record Remembered(CommandResult result, long writtenByMs) {
    }

    private final long startOffset;
    private final long logStartOffset;
    /** Why results were lost before this activation, for the refusals; null if none were. */
    private final String lostBefore;
    private long forgottenUpToMs;
    private boolean sawFirstRecord;
    private final Map<String, Remembered> results = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Remembered> eldest) {
            boolean full = size() > REMEMBERED_RESULTS;
            if (full) {
                forgottenUpToMs = Math.max(forgottenUpToMs, eldest.getValue().writtenByMs());
            }
            return full;
        }
    };
    /** When each command without a result yet was written, by id (a result takes its time from here). */
    private final Map<String, Long> written = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > REMEMBERED_RESULTS;
        }
    };

    /**
     * @param startOffset     the first offset not yet processed
     * @param logStartOffset  the command log's first offset now: above 0, the results below it are lost
     * @param forgottenUpToMs the horizon of results lost before this activation, or {@link #NOTHING_FORGOTTEN}
     * @param lostBefore      why they were lost (named in refusals); null if none were
     */
    CommandLogCursor(long startOffset, long logStartOffset, long forgottenUpToMs, String lostBefore) {
        this.startOffset = startOffset;
        this.logStartOffset = logStartOffset;
        this.forgottenUpToMs = forgottenUpToMs;
        this.lostBefore = lostBefore;
    }

    /** A cursor for a log from offset 0 that lost nothing (tests). */
    CommandLogCursor(long startOffset) {
        this(startOffset, 0, NOTHING_FORGOTTEN, null);
    }

    /**
     * Where the controller resumes in the command log it reads now. Its recorded position holds only in the log it was
     * taken in: when the log is another one (another topic id; or, for a position recorded without one, a log that ends
     * below it), the controller reads the log from its start and refuses every command written no later than its last
     * commit on the old log, whose results are gone ({@link #forgottenUpToMs()}).
     *
     * @param recorded       the position in {@code __mirror_metadata}, if any
     * @param topicId        the topic id of the command log now
     * @param logStartOffset its first offset now
     * @param logEndOffset   its end now
     */
    static CommandLogCursor resume(Optional<ControllerPositionRecord> recorded, String topicId, long logStartOffset, long logEndOffset) {
        if (recorded.isEmpty()) {
            return new CommandLogCursor(0, logStartOffset, NOTHING_FORGOTTEN, null);
        }
        ControllerPositionRecord position = recorded.get();
        String otherLog = null;
        if (position.commandsTopicId() != null && !position.commandsTopicId().equals(topicId)) {
            otherLog = "the command log was deleted and re-created (topic id " + topicId + "; the recorded position "
                + position.nextOffset() + " is in the log of topic id " + position.commandsTopicId() + ")";
        } else if (position.commandsTopicId() == null && logEndOffset < position.nextOffset()) {
            otherLog = "the command log ends at " + logEndOffset + ", below the recorded position " + position.nextOffset()
                + ": it was deleted and re-created";
        }
        if (otherLog == null) {
            return new CommandLogCursor(position.nextOffset(), logStartOffset, NOTHING_FORGOTTEN, null);
        }
        return new CommandLogCursor(0, logStartOffset, position.updatedMs(), otherLog + "; the controller's last command on it was "
            + "applied at " + Instant.ofEpochMilli(position.updatedMs()));
    }

    /** The first offset the controller acts on. */
    long startOffset() {
        return startOffset;
    }

    /** Commands written at or before this time, and with no result the cursor knows, are refused. */
    long forgottenUpToMs() {
        return forgottenUpToMs;
    }

    /** Why results were lost before this activation; empty if none were. */
    Optional<String> lostBefore() {
        return Optional.ofNullable(lostBefore);
    }

    /**
     * @param timestampMs the record's timestamp
     * @param key         the record's key: clients key a command by its id, so it names the command even when the value
     *                    cannot be read
     * @param value       the record's value
     */
    Step next(long offset, long timestampMs, byte[] key, byte[] value) {
        CommandLogEntry entry;
        try {
            entry = RecordCodec.decodeCommand(value);
        } catch (RuntimeException e) {
            return offset < startOffset ? new Skip() : refuse(offset, key, "it cannot be read (" + e.getMessage() + ")");
        }
        if (entry instanceof CommandResult result) {
            learnResult(result, timestampMs);
            return new Skip();
        }
        if (offset < startOffset || !(entry instanceof MirrorCommand command)) {
            return new Skip();
        }
        if (command.commandId() == null || command.commandId().isBlank()) {
            return refuse(offset, key, "it has no command id");
        }
        Remembered first = results.get(command.commandId());
        if (first != null) {
            CommandResult r = first.result();
            return new Answer(new CommandResult(r.commandId(), r.error(), r.message() + " (command " + r.commandId()
                + " was already processed; it is not applied again)", r.topics()));
        }
        if (command.timestampMs() <= forgottenUpToMs) {
            return new Answer(CommandResult.failed(command.commandId(), MirrorError.INVALID_REQUEST, "command " + command.commandId()
                + " was written at " + Instant.ofEpochMilli(command.timestampMs()) + ", no later than commands whose results the "
                + "controller no longer has (up to " + Instant.ofEpochMilli(forgottenUpToMs) + (lostBefore == null ? "" : "; " + lostBefore)
                + "): it may have been applied already, so it is not applied. Send it again: kafka-cluster-mirrors.sh and "
                + "ClusterMirrorAdmin give each command a new id (if this client's clock lags the brokers', set it right first)"));
        }
        written.put(command.commandId(), command.timestampMs());
        return new Apply(command);
    }

    /** A record that is no usable command: answered under its key (clients wait for a result with that key) if it has one. */
    private static Step refuse(long offset, byte[] key, String reason) {
        String id = key == null ? "" : RecordCodec.decodeKey(key);
        if (id.isBlank()) {
            return new Unusable(reason + ", and it has no key that a result could answer it under");
        }
        return new Answer(CommandResult.failed(id, MirrorError.INVALID_REQUEST, "the command record at offset " + offset + " is "
            + "not a usable command: " + reason + "; use kafka-cluster-mirrors.sh or ClusterMirrorAdmin, which write complete commands"));
    }

    /**
     * Takes in a record from the controller's first pass over the log, up to its end at activation, before any record is
     * acted on: its results, and when their commands were written. A command comes before its result in the log, so
     * without this pass a controller that lost its recorded position (a deleted or re-created {@code __mirror_metadata})
     * would apply again every command it reads before reaching that command's result. The first record of a log whose
     * start is above 0 moves the horizon to its time: the results deleted below it were all written before it.
     */
    void learn(long timestampMs, byte[] value) {
        if (!sawFirstRecord) {
            sawFirstRecord = true;
            if (logStartOffset > 0) {
                forgottenUpToMs = Math.max(forgottenUpToMs, timestampMs);
            }
        }
        CommandLogEntry entry;
        try {
            entry = RecordCodec.decodeCommand(value);
        } catch (RuntimeException e) {
            return; // the second pass decides what to do with it
        }
        if (entry instanceof CommandResult result) {
            learnResult(result, timestampMs);
        } else if (entry instanceof MirrorCommand command && command.commandId() != null) {
            written.put(command.commandId(), command.timestampMs());
        }
    }

    /** Remembers the result of a command the controller has just committed, at {@code nowMs}. */
    void committed(CommandResult result, long nowMs) {
        learnResult(result, nowMs);
    }

    /** The first result of a command is the one it is answered with when seen again; the second pass reads it again. */
    private void learnResult(CommandResult result, long resultMs) {
        if (result.commandId() == null || results.containsKey(result.commandId())) {
            return;
        }
        long commandMs = Objects.requireNonNullElse(written.remove(result.commandId()), resultMs);
        results.put(result.commandId(), new Remembered(result, Math.max(commandMs, resultMs)));
    }
}
