package io.clustermirror.common.records;

/**
 * The mirror controller's place in {@code __mirror_commands}, in {@code __mirror_metadata} under
 * {@link RecordCodec#CONTROLLER_POSITION_KEY}. The controller writes it in the same transaction as each command's
 * result and metadata records, so it moves exactly when a command's effects are committed, and reads it back when it
 * becomes active: records below {@code nextOffset} are never applied again. Unlike a consumer group's offsets it
 * neither expires nor can be reset by a client of the group coordinator.
 *
 * <p>An offset means something only in the log it was taken in: a command log deleted and re-created starts at offset 0
 * again, so the record names that log by its topic id. Records written before the id was recorded read it as null (and
 * earlier versions ignore it).
 *
 * @param nextOffset      the first offset of {@code __mirror_commands} the controller has not processed
 * @param lastCommandId   the id of the last command processed (the one whose transaction wrote this record)
 * @param updatedMs       when it was written
 * @param commandsTopicId the topic id of the {@code __mirror_commands} that {@code nextOffset} is in; null if unknown
 */
public record ControllerPositionRecord(long nextOffset, String lastCommandId, long updatedMs, String commandsTopicId) {
}
