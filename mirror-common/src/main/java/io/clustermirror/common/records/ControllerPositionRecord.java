package io.clustermirror.common.records;

/**
 * The mirror controller's place in {@code __mirror_commands}, in {@code __mirror_metadata} under
 * {@link RecordCodec#CONTROLLER_POSITION_KEY}. The controller writes it in the same transaction as each command's
 * result and metadata records, so it moves exactly when a command's effects are committed, and reads it back when it
 * becomes active: records below {@code nextOffset} are never applied again. Unlike a consumer group's offsets it
 * neither expires nor can be reset by a client of the group coordinator.
 *
 * @param nextOffset    the first offset of {@code __mirror_commands} the controller has not processed
 * @param lastCommandId the id of the last command processed (the one whose transaction wrote this record)
 * @param updatedMs     when it was written
 */
public record ControllerPositionRecord(long nextOffset, String lastCommandId, long updatedMs) {
}
