package io.clustermirror.common;

/**
 * The actual state of one mirror partition on the destination. Driven on the partition's
 * destination leader and recorded in {@code __mirror_state}.
 *
 * <pre>
 * UNKNOWN -> PREPARING -> MIRRORING <-> PAUSING -> PAUSED
 *                            |  ^                     |
 *                            v  | retry               v
 *                          FAILED            STOPPING -> STOPPED
 * </pre>
 */
public enum PartitionState {
    UNKNOWN, PREPARING, MIRRORING, PAUSING, PAUSED, STOPPING, STOPPED, FAILED;

    /** True while the topic must stay read-only for clients. */
    public boolean isReadOnly() {
        return this != STOPPED;
    }
}
