package io.clustermirror.common.records;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.List;
import java.util.Map;

/**
 * A request in {@code __mirror_commands}.
 *
 * @param commandId unique id chosen by the client; the result carries the same id
 * @param op        what to do
 * @param mirror    the mirror's name
 * @param configs   mirror configs (CREATE), or the configs to set (ALTER); empty otherwise
 * @param topics    topic names or regular expressions (START, STOP, PAUSE, RESUME)
 * @param excludes  names or regular expressions removed from what {@code topics} matched
 * @param timestampMs when the client wrote it
 * @param discardLocalWrites START only: the operator accepts that starting a stopped topic again removes the records
 *                           written to it since its stop; without it such a START is refused
 * @param deletedConfigs ALTER only: the config keys to remove from the mirror (back to their defaults)
 * @param heldChanges HOLD_CHANGES only: every change of the one named topic that the metadata sync holds back now (their
 *                    times and status are the controller's to set)
 * @param stopCuts  STOP only, a consistent stop: where to cut each partition the client analysed (a partition not named
 *                  cuts at its last stable offset); empty for a plain stop
 */
public record MirrorCommand(String commandId, CommandOp op, String mirror, Map<String, String> configs,
                            List<String> topics, List<String> excludes, long timestampMs, boolean discardLocalWrites,
                            List<String> deletedConfigs,
                            @JsonInclude(JsonInclude.Include.NON_EMPTY) List<HeldChange> heldChanges,
                            @JsonInclude(JsonInclude.Include.NON_EMPTY) List<PartitionCut> stopCuts)
        implements CommandLogEntry {
    public MirrorCommand {
        stopCuts = stopCuts == null ? List.of() : List.copyOf(stopCuts);
        heldChanges = heldChanges == null ? List.of() : List.copyOf(heldChanges);
        configs = configs == null ? Map.of() : Map.copyOf(configs);
        deletedConfigs = deletedConfigs == null ? List.of() : List.copyOf(deletedConfigs);
        topics = topics == null ? List.of() : List.copyOf(topics);
        excludes = excludes == null ? List.of() : List.copyOf(excludes);
    }

    /** A command that asks for no consistent stop's cuts. */
    public MirrorCommand(String commandId, CommandOp op, String mirror, Map<String, String> configs, List<String> topics,
                         List<String> excludes, long timestampMs, boolean discardLocalWrites, List<String> deletedConfigs,
                         List<HeldChange> heldChanges) {
        this(commandId, op, mirror, configs, topics, excludes, timestampMs, discardLocalWrites, deletedConfigs, heldChanges, List.of());
    }

    /**
     * Where a consistent stop cuts one partition.
     *
     * @param groupOffsets the offsets the stop gives there to groups that commit it inside transactions (the offset of the
     *                     last transaction the cut keeps), by group; empty for none
     */
    public record PartitionCut(String topic, int partition, long offset,
                               @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Long> groupOffsets) {
        public PartitionCut {
            groupOffsets = groupOffsets == null ? Map.of() : Map.copyOf(groupOffsets);
        }

        /** A cut that sets no group's offset. */
        public PartitionCut(String topic, int partition, long offset) {
            this(topic, partition, offset, Map.of());
        }
    }

    /** A command that holds no changes. */
    public MirrorCommand(String commandId, CommandOp op, String mirror, Map<String, String> configs, List<String> topics,
                         List<String> excludes, long timestampMs, boolean discardLocalWrites, List<String> deletedConfigs) {
        this(commandId, op, mirror, configs, topics, excludes, timestampMs, discardLocalWrites, deletedConfigs, List.of());
    }

    /** A command that deletes no configs. */
    public MirrorCommand(String commandId, CommandOp op, String mirror, Map<String, String> configs, List<String> topics,
                         List<String> excludes, long timestampMs, boolean discardLocalWrites) {
        this(commandId, op, mirror, configs, topics, excludes, timestampMs, discardLocalWrites, List.of());
    }

    /** A command that discards no local writes. */
    public MirrorCommand(String commandId, CommandOp op, String mirror, Map<String, String> configs, List<String> topics,
                         List<String> excludes, long timestampMs) {
        this(commandId, op, mirror, configs, topics, excludes, timestampMs, false);
    }
}
