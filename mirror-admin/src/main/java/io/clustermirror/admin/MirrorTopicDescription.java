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
 */
public record MirrorTopicDescription(String topic, DesiredState desiredState,
                                     List<MirrorPartitionDescription> partitions, Command lastCommand) {
    public MirrorTopicDescription {
        partitions = List.copyOf(partitions);
    }

    public MirrorTopicDescription(String topic, DesiredState desiredState, List<MirrorPartitionDescription> partitions) {
        this(topic, desiredState, partitions, null);
    }

    /**
     * A command as the controller applied it. The command log ({@code __mirror_commands}) keeps every command and its
     * result under the command's id: the audit trail.
     *
     * @param commandId its id
     * @param operation START, STOP, PAUSE, RESUME or ADD_PARTITIONS (the metadata sync's growth of a topic)
     * @param appliedMs when the controller applied it (epoch milliseconds)
     * @param result    the controller's answer
     */
    public record Command(String commandId, String operation, long appliedMs, String result) {
    }
}
