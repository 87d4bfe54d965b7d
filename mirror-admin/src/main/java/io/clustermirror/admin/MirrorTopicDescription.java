package io.clustermirror.admin;

import io.clustermirror.common.DesiredState;

import java.util.List;

/**
 * One topic of a mirror.
 *
 * @param topic        the topic's name (the same on source and destination)
 * @param desiredState what the operator last asked for the topic
 * @param partitions   the actual state of each partition, sorted by partition
 * @param lastCommand  the command that last changed the topic, or null if none is recorded
 * @param heldChanges  the source's topic changes the metadata sync holds back; empty when none
 */
public record MirrorTopicDescription(String topic, DesiredState desiredState,
                                     List<MirrorPartitionDescription> partitions, Command lastCommand,
                                     List<HeldTopicChange> heldChanges) {
    public MirrorTopicDescription {
        partitions = List.copyOf(partitions);
        heldChanges = heldChanges == null ? List.of() : List.copyOf(heldChanges);
    }

    public MirrorTopicDescription(String topic, DesiredState desiredState, List<MirrorPartitionDescription> partitions) {
        this(topic, desiredState, partitions, null, List.of());
    }

    /**
     * A command as the controller applied it. The command log ({@code __mirror_commands}) keeps every command and its
     * result under the command's id: the audit trail.
     *
     * @param commandId its id
     * @param operation START, STOP, PAUSE, RESUME, APPLY_HELD, REJECT_HELD, or the metadata sync's ADD_PARTITIONS (growth
     *                  of a topic) and HOLD_CHANGES (what it holds back)
     * @param appliedMs when the controller applied it (epoch milliseconds)
     * @param result    the controller's answer
     */
    public record Command(String commandId, String operation, long appliedMs, String result) {
    }
}
