package io.clustermirror.admin;

import io.clustermirror.common.DesiredState;

import java.util.List;

/**
 * One topic of a mirror.
 *
 * @param topic        the topic's name (the same on source and destination)
 * @param desiredState what the operator last asked for the topic
 * @param partitions   the actual state of each partition, sorted by partition
 */
public record MirrorTopicDescription(String topic, DesiredState desiredState,
                                     List<MirrorPartitionDescription> partitions) {
    public MirrorTopicDescription {
        partitions = List.copyOf(partitions);
    }
}
