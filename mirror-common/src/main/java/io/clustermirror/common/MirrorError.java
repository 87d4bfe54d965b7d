package io.clustermirror.common;

/**
 * Errors a mirror command or a mirror partition can end in. The names follow the seed design's
 * (KIP-style) error names, so that the CLI prints {@code NAME: explanation} as operators expect.
 */
public enum MirrorError {
    NONE,
    CLUSTER_MIRROR_ALREADY_EXISTS,
    UNKNOWN_CLUSTER_MIRROR,
    CLUSTER_MIRROR_NOT_EMPTY,
    TOPIC_ALREADY_IN_CLUSTER_MIRROR,
    TOPIC_NOT_IN_CLUSTER_MIRROR,
    MIRROR_TOPIC_NOT_STOPPED,
    MIRROR_TOPIC_NOT_PAUSED,
    MIRROR_TOPIC_NOT_MIRRORING,
    INVALID_CONFIG,
    INVALID_REQUEST,
    UNKNOWN_TOPIC_OR_PARTITION,
    TOPIC_ALREADY_EXISTS,
    INVALID_PARTITIONS,
    SOURCE_CLUSTER_UNREACHABLE,
    SOURCE_TOPIC_CHANGED,
    MIRROR_LOOP,
    MIRROR_CONTROLLER_UNAVAILABLE,
    /** The client's principal lacks the permission on the CLUSTER resource: ALTER for commands, DESCRIBE for reads. */
    CLUSTER_AUTHORIZATION_FAILED,
    UNKNOWN_SERVER_ERROR;

    /** The one-line form printed by tools: {@code NAME: message}. */
    public String format(String message) {
        return name() + ": " + message;
    }
}
