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
    /** START of a stopped topic that holds records written after its stop, which starting it again would remove. */
    MIRROR_TOPIC_HAS_LOCAL_WRITES,
    INVALID_CONFIG,
    INVALID_REQUEST,
    UNKNOWN_TOPIC_OR_PARTITION,
    TOPIC_ALREADY_EXISTS,
    INVALID_PARTITIONS,
    SOURCE_CLUSTER_UNREACHABLE,
    SOURCE_TOPIC_CHANGED,
    MIRROR_LOOP,
    MIRROR_CONTROLLER_UNAVAILABLE,
    UNKNOWN_SERVER_ERROR;

    /** The one-line form printed by tools: {@code NAME: message}. */
    public String format(String message) {
        return name() + ": " + message;
    }
}
