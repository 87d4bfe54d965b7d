package io.clustermirror.common.records;

/**
 * The command that last changed a mirror topic, kept in its {@link MirrorTopicRecord} so that describe can show it.
 * The command log ({@code __mirror_commands}) holds every command with its result, by id: the audit trail.
 *
 * @param commandId the command's id (its key in {@code __mirror_commands})
 * @param op        what it did
 * @param appliedMs when the controller applied it
 * @param result    the controller's answer to it
 */
public record LastCommand(String commandId, CommandOp op, long appliedMs, String result) {
}
