package io.clustermirror.broker.sync;

import io.clustermirror.common.records.HeldChange;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBinding;

import java.util.List;
import java.util.Map;
import java.util.Set;

/** What one sync round of a mirror decided ({@link SyncPlanner}); {@link SyncExecutor} performs it. */
sealed interface SyncAction {
    /** Auto-discovery: source topics matching {@code mirror.topics.include} start mirroring (a START command each). */
    record StartTopics(List<String> topics) implements SyncAction {
        public StartTopics {
            topics = List.copyOf(topics);
        }
    }

    /** The source topic has more partitions than the destination or the image: an ADD_PARTITIONS command. */
    record AddPartitions(String topic, int sourcePartitions) implements SyncAction {
    }

    /**
     * The changes of a topic the round holds back differ from those its record holds: a HOLD_CHANGES command records
     * exactly these (the controller keeps the time and status of those it held already).
     */
    record HoldChanges(String topic, List<HeldChange> changes) implements SyncAction {
        public HoldChanges {
            changes = List.copyOf(changes);
        }
    }

    /**
     * Incremental topic config change on the destination: set these, remove these (back to the default). {@code synced}
     * is what the topic's copied configs are once it is done, declared first ({@code SyncedTopicConfigsRecord}) so that
     * the controller's policy lets exactly these values through; set and delete may be empty when only the declaration
     * is behind.
     */
    record AlterTopicConfigs(String topic, Map<String, String> set, Set<String> delete, Map<String, String> synced) implements SyncAction {
        public AlterTopicConfigs {
            set = Map.copyOf(set);
            delete = Set.copyOf(delete);
            synced = Map.copyOf(synced);
        }
    }

    /**
     * Offsets to write for a group with no active members on the destination (no leader epoch): committed offsets of a
     * consumer group, start offsets of a share group (their metadata is empty).
     */
    record CommitGroupOffsets(SyncedGroup group, Map<TopicPartition, OffsetAndMetadata> offsets) implements SyncAction {
        public CommitGroupOffsets {
            offsets = Map.copyOf(offsets);
        }
    }

    /** A group whose offsets differ but which has active members on the destination: left alone. */
    record GroupSkipped(SyncedGroup group) implements SyncAction {
    }

    /** An ACL to create or delete, and why (for the log line of each). */
    record Acl(AclBinding binding, String why) {
    }

    /** Source ACLs to create on the destination; the mirror records them as its own first. */
    record CreateAcls(List<Acl> acls) implements SyncAction {
        public CreateAcls {
            acls = List.copyOf(acls);
        }
    }

    /** ACLs the mirror created that the source no longer has: removed from the destination, then forgotten. */
    record DeleteAcls(List<Acl> acls) implements SyncAction {
        public DeleteAcls {
            acls = List.copyOf(acls);
        }
    }
}
