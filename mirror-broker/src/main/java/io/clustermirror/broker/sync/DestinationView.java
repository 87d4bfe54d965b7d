package io.clustermirror.broker.sync;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBinding;

import java.util.Map;
import java.util.Set;

/**
 * What one sync round read from the destination cluster. A null part could not be read this round (or was not
 * needed): the planner then decides nothing about it.
 *
 * @param topics   the mirror's synced topics that exist on the destination
 * @param logStart log start offset of their partitions
 * @param logEnd   end offset (high watermark) of their partitions
 * @param groups   the destination side of the groups whose source offsets were read; a group missing from it could
 *                 not be read
 * @param acls     every destination ACL
 */
record DestinationView(Map<String, Topic> topics, Map<TopicPartition, Long> logStart, Map<TopicPartition, Long> logEnd,
                       Map<SyncedGroup, Group> groups, Set<AclBinding> acls) {
    /**
     * @param partitions partition count
     * @param configs    configs set on the topic (not defaults), or null if they could not be read
     */
    record Topic(int partitions, Map<String, String> configs) {
    }

    /**
     * @param active    true if the group has members (or a state other than EMPTY/DEAD) on the destination
     * @param committed its offsets on the destination (committed offsets, or share-partition start offsets)
     */
    record Group(boolean active, Map<TopicPartition, Long> committed) {
    }
}
