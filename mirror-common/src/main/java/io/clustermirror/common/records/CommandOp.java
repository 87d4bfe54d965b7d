package io.clustermirror.common.records;

/**
 * The operations of the MirrorController: an operator's (CREATE to RESUME; RECOVER, which has the leaders of the FAILED
 * partitions of the selected topics try again now; ALTER, which changes a mirror's configs;
 * APPLY_HELD and REJECT_HELD, which decide on the destructive source changes a mirror topic holds back), and the metadata
 * sync's: ADD_PARTITIONS when a source topic has grown (the destination topic grows to match), HOLD_CHANGES to record
 * what it holds back ({@link HeldChange}).
 */
public enum CommandOp {
    CREATE, DELETE, START, STOP, PAUSE, RESUME, ADD_PARTITIONS, ALTER, HOLD_CHANGES, APPLY_HELD, REJECT_HELD, RECOVER
}
