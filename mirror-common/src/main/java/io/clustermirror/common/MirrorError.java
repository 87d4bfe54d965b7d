package io.clustermirror.common;

/**
 * Errors a mirror command or a mirror partition can end in. The names follow Kafka's style of error names (and
 * KIP-1279's where it has one), so that the CLI prints {@code NAME: explanation} as operators expect.
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
    /**
     * The source deleted records before they were mirrored (retention or deleteRecords moved its log start past the
     * mirror's position); the skipped offset range is named.
     */
    SOURCE_RETENTION_OUTRUN,
    /** The source topic was deleted: the partition stops fetching and keeps its data until the operator acts. */
    SOURCE_TOPIC_DELETED,
    /** The source topic was deleted and re-created (a new topic id): its data is never copied over the old history. */
    SOURCE_TOPIC_ID_CHANGED,
    /** No fetch from the source succeeded for a while; clears once fetching works again. */
    SOURCE_UNAVAILABLE,
    /** A source batch failed its CRC or size checks; the partition stops before it. */
    CORRUPT_MESSAGE,
    /**
     * A source batch in message format v0 or v1 (written by clients or brokers older than Kafka 0.11): it cannot be
     * stored as it is on a destination, and re-encoding it would change its bytes and CRC.
     */
    UNSUPPORTED_MESSAGE_FORMAT,
    MIRROR_LOOP,
    MIRROR_CONTROLLER_UNAVAILABLE,
    /** The client's principal lacks the permission on the CLUSTER resource: ALTER for commands, DESCRIBE for reads. */
    CLUSTER_AUTHORIZATION_FAILED,
    /** A {@code --recover} of topics none of whose partitions is FAILED: there is nothing to try again. */
    MIRROR_TOPIC_NOT_FAILED,
    /**
     * A {@code --recover} of topics whose FAILED partitions no retry can help (their source topic was deleted or
     * re-created): stop them to keep their data as normal topics.
     */
    MIRROR_TOPIC_NOT_RECOVERABLE,
    /** A planned stop's topics did not catch up with the source within its timeout; nothing was stopped. */
    MIRROR_TOPIC_NOT_CAUGHT_UP,
    UNKNOWN_SERVER_ERROR;

    /** The one-line form printed by tools: {@code NAME: message}. */
    public String format(String message) {
        return name() + ": " + message;
    }
}
