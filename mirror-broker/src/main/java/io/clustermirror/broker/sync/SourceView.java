package io.clustermirror.broker.sync;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBinding;

import java.util.Map;
import java.util.Set;

/**
 * What one sync round read from the source cluster. A null part could not be read this round (or was not
 * needed): the planner then decides nothing about it, so a failed read never removes or resets anything.
 *
 * @param topicNames   every (non-internal) source topic name, for auto-discovery
 * @param topics       the mirror's synced topics that exist at the source
 * @param groupOffsets offsets of the groups matching the mirror's group patterns: committed offsets of consumer groups,
 *                     start offsets of share groups (no metadata)
 * @param acls         every source ACL
 */
record SourceView(Set<String> topicNames, Map<String, Topic> topics,
                  Map<SyncedGroup, Map<TopicPartition, OffsetAndMetadata>> groupOffsets, Set<AclBinding> acls) {
    /**
     * @param topicId    source topic id
     * @param partitions partition count
     * @param configs    configs set on the topic (not defaults), or null if they could not be read
     */
    record Topic(String topicId, int partitions, Map<String, String> configs) {
    }
}
