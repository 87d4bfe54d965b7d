package io.clustermirror.common;

import java.util.Set;

/** Names and layout of the mirror's own internal topics on the destination cluster. */
public final class InternalTopics {
    /** Requests from the CLI/Admin API and the controller's results: an audit log. One partition. */
    public static final String COMMANDS = "__mirror_commands";
    /** Desired state: mirror configs and topic -> mirror + desired state. Compacted, one partition. */
    public static final String METADATA = "__mirror_metadata";
    /** Actual per-partition state, written by destination partition leaders. Compacted. */
    public static final String STATE = "__mirror_state";
    public static final int STATE_PARTITIONS = 10;
    /** Transactional id of the single, fenced MirrorController. */
    public static final String CONTROLLER_TRANSACTIONAL_ID = "__cluster_mirror_controller";
    /** Consumer group that holds the controller's position in {@link #COMMANDS}. */
    public static final String CONTROLLER_GROUP = "__cluster_mirror_controller";

    public static final Set<String> ALL = Set.of(COMMANDS, METADATA, STATE);

    private InternalTopics() {
    }

    public static boolean isInternal(String topic) {
        return ALL.contains(topic);
    }

    /** Replication factor for internal topics: min(3, live brokers). */
    public static short replicationFactor(int brokers) {
        return (short) Math.max(1, Math.min(3, brokers));
    }
}
