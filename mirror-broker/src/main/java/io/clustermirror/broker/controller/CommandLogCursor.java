package io.clustermirror.broker.controller;

import io.clustermirror.common.MirrorError;
import io.clustermirror.common.records.CommandLogEntry;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.MirrorCommand;
import io.clustermirror.common.records.RecordCodec;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The controller's reading of {@code __mirror_commands}: what to do with each record, fed every record in log order
 * from the log's start. Pure; one per controller activation.
 *
 * <p>Invariants: a record below the position the controller recorded in {@code __mirror_metadata} is never acted on
 * (it is only read for its results); a command whose id already has a result is never applied again, it is answered
 * with that first result. A result is committed in the same transaction as its command's effects, so a result in the
 * log means the command was applied: the two together make each command apply exactly once, whatever happened to the
 * controller's consumer group, its offsets or the brokers. Deduplication by id reaches back as far as the command log
 * holds records (its retention), up to the last {@value #REMEMBERED_RESULTS} results.
 */
final class CommandLogCursor {
    static final int REMEMBERED_RESULTS = 10_000;

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

    private final long startOffset;
    private final Map<String, CommandResult> results = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, CommandResult> eldest) {
            return size() > REMEMBERED_RESULTS;
        }
    };

    /** @param startOffset the recorded position: the first offset not yet processed (0 if none was recorded) */
    CommandLogCursor(long startOffset) {
        this.startOffset = startOffset;
    }

    /**
     * @param key   the record's key: clients key a command by its id, so it names the command even when the value
     *              cannot be read
     * @param value the record's value
     */
    Step next(long offset, byte[] key, byte[] value) {
        CommandLogEntry entry;
        try {
            entry = RecordCodec.decodeCommand(value);
        } catch (RuntimeException e) {
            return offset < startOffset ? new Skip() : refuse(offset, key, "it cannot be read (" + e.getMessage() + ")");
        }
        if (entry instanceof CommandResult result) {
            results.put(result.commandId(), result);
            return new Skip();
        }
        if (offset < startOffset || !(entry instanceof MirrorCommand command)) {
            return new Skip();
        }
        if (command.commandId() == null || command.commandId().isBlank()) {
            return refuse(offset, key, "it has no command id");
        }
        CommandResult first = results.get(command.commandId());
        if (first != null) {
            return new Answer(new CommandResult(first.commandId(), first.error(), first.message() + " (command "
                + first.commandId() + " was already processed; it is not applied again)", first.topics()));
        }
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
     * Takes in a result from the controller's first pass over the log, up to its end at activation, before any record is
     * acted on: a command comes before its result in the log, so without this pass a controller that lost its recorded
     * position (a deleted or re-created {@code __mirror_metadata}) would apply again every command it reads before
     * reaching that command's result. Records that are no result are ignored here.
     */
    void learnResult(byte[] value) {
        try {
            if (RecordCodec.decodeCommand(value) instanceof CommandResult result) {
                results.put(result.commandId(), result);
            }
        } catch (RuntimeException e) {
            // not a result: the second pass decides what to do with it
        }
    }

    /** Remembers the result of a command the controller has just committed. */
    void committed(CommandResult result) {
        results.put(result.commandId(), result);
    }
}
