package io.clustermirror.broker.controller;

import io.clustermirror.common.records.CommandResult;

import java.util.List;

/**
 * What processing one command produced: its result and the records to write with it, in one transaction.
 *
 * @param result          the answer for the client
 * @param metadataWrites  records for {@code __mirror_metadata} (a null value is a tombstone)
 * @param stateTombstones keys of {@code __mirror_state} to delete
 */
record CommandOutcome(CommandResult result, List<MetadataWrite> metadataWrites, List<String> stateTombstones) {
    record MetadataWrite(String key, byte[] value) {
    }

    static CommandOutcome failed(CommandResult result) {
        return new CommandOutcome(result, List.of(), List.of());
    }
}
