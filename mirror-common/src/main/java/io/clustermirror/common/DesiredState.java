package io.clustermirror.common;

/** What the operator asked for a mirror topic (recorded in {@code __mirror_metadata}). */
public enum DesiredState {
    /** Copy data from the source (set by start and resume). */
    MIRRORING,
    /** Keep the topic read-only but fetch nothing (set by pause). */
    PAUSED,
    /** Fail over: end mirroring and make the topic a normal writable topic (set by stop). */
    STOPPED
}
