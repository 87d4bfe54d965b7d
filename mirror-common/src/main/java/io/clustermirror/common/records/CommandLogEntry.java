package io.clustermirror.common.records;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/**
 * A record of {@code __mirror_commands}: a request from a client or the controller's result for it.
 * Both carry the command id, which is also the record key, so a client finds its result by id.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = MirrorCommand.class, name = "request"),
    @JsonSubTypes.Type(value = CommandResult.class, name = "result")
})
public sealed interface CommandLogEntry permits MirrorCommand, CommandResult {
    String commandId();
}
