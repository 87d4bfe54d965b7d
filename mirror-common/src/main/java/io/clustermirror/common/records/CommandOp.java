package io.clustermirror.common.records;

/**
 * The operations of the MirrorController: an operator's (CREATE to RESUME, and ALTER, which changes a mirror's configs),
 * and ADD_PARTITIONS, which the metadata sync sends when a source topic has grown (the destination topic grows to match).
 */
public enum CommandOp {
    CREATE, DELETE, START, STOP, PAUSE, RESUME, ADD_PARTITIONS, ALTER
}
