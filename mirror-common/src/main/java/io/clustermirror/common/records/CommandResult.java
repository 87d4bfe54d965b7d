package io.clustermirror.common.records;

import io.clustermirror.common.MirrorError;

import java.util.List;

/**
 * The controller's answer to one {@link MirrorCommand}, written in the same transaction as the
 * metadata records the command produced. A command either succeeds as a whole or changes nothing.
 *
 * @param commandId the request's id
 * @param error     {@link MirrorError#NONE} on success
 * @param message   one line for the operator: what happened, or why not and what to do
 * @param topics    on success of START/STOP/PAUSE/RESUME, the topics the command applied to
 */
public record CommandResult(String commandId, MirrorError error, String message, List<String> topics)
        implements CommandLogEntry {
    public CommandResult {
        topics = topics == null ? List.of() : List.copyOf(topics);
        message = message == null ? "" : message;
    }

    public static CommandResult ok(String commandId, String message, List<String> topics) {
        return new CommandResult(commandId, MirrorError.NONE, message, topics);
    }

    public static CommandResult failed(String commandId, MirrorError error, String message) {
        return new CommandResult(commandId, error, message, List.of());
    }

    public boolean succeeded() {
        return error == MirrorError.NONE;
    }
}
