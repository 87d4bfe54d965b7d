package io.clustermirror.broker.bridge;

import org.apache.kafka.common.TopicPartition;

/**
 * A change of this broker's role for one local partition, as seen in the KRaft metadata.
 *
 * @param partition   the partition
 * @param topicId     the destination topic id
 * @param leader      true if this broker is now the partition's leader
 * @param leaderEpoch the partition's current leader epoch
 * @param deleted     true if the partition (topic) was deleted or this broker no longer hosts a replica
 */
public record LeaderChange(TopicPartition partition, org.apache.kafka.common.Uuid topicId, boolean leader,
                           int leaderEpoch, boolean deleted) {
}
