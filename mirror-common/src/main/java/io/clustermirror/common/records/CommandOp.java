package io.clustermirror.common.records;

/** The operations an operator can ask of the MirrorController. */
public enum CommandOp {
    CREATE, DELETE, START, STOP, PAUSE, RESUME
}
