package io.clustermirror.common.records;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/**
 * A record of {@code __mirror_commands}: a request from a client or the controller's result for it, both carrying the
 * command id, which is also the record key, so a client finds its result by id; or a {@link ControllerProblem}, which
 * carries none.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = MirrorCommand.class, name = "request"),
    @JsonSubTypes.Type(value = CommandResult.class, name = "result"),
    @JsonSubTypes.Type(value = ControllerProblem.class, name = "controller-problem")
})
public sealed interface CommandLogEntry permits MirrorCommand, CommandResult, ControllerProblem {
    /** The command the record is or answers; null for a {@link ControllerProblem}. */
    String commandId();
}
