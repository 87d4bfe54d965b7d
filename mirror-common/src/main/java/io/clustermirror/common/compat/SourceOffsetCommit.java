package io.clustermirror.common.compat;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * A consumer group's committed offset of one partition, as a record of the source's {@value #LOG} holds it: what a
 * transaction that committed a read-process-write step's input position ({@code sendOffsetsToTransaction}) wrote, next to
 * its output records. A consistent stop needs it to put such a group's offset where the last transaction it keeps left it.
 *
 * <p>The keys and values are Kafka's offset commit records, decoded here from their documented layout; Kafka's own classes
 * for them are internal. A key is a record type (0 and 1 are offset commits, of the old and the new group coordinator
 * alike) followed by the group, the topic and the partition, none of them flexible. A value is a version (0 to 4) followed
 * by the offset in every version.
 *
 * @param group     the consumer group
 * @param topic     the topic of the committed partition
 * @param partition the committed partition
 * @param offset    the committed offset: the next record the group reads
 */
public record SourceOffsetCommit(String group, String topic, int partition, long offset) {
    /** Kafka's topic of committed offsets and group metadata. */
    public static final String LOG = "__consumer_offsets";
    private static final short LAST_KEY_TYPE = 1;
    private static final short LAST_VALUE_VERSION = 4;

    /**
     * The offset commit a record of {@value #LOG} holds; empty for any other record (group metadata, the records of
     * Kafka's newer groups, a tombstone that deletes an offset) and for a value version this does not know.
     *
     * @throws IllegalArgumentException if an offset commit's key or value does not decode (truncated or corrupt)
     */
    public static Optional<SourceOffsetCommit> of(ByteBuffer key, ByteBuffer value) {
        if (key == null || value == null || key.remaining() < Short.BYTES) {
            return Optional.empty();
        }
        ByteBuffer k = key.duplicate();
        ByteBuffer v = value.duplicate();
        try {
            short type = k.getShort();
            if (type < 0 || type > LAST_KEY_TYPE) {
                return Optional.empty();
            }
            String group = string(k);
            String topic = string(k);
            int partition = k.getInt();
            short version = v.getShort();
            if (version < 0 || version > LAST_VALUE_VERSION) {
                return Optional.empty();
            }
            return Optional.of(new SourceOffsetCommit(group, topic, partition, v.getLong()));
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("a " + LOG + " offset commit that does not decode: " + e, e);
        }
    }

    /**
     * The partition of {@value #LOG} that holds a group's records, as Kafka places them: the group id's hash, made
     * non-negative, modulo the topic's partition count.
     */
    public static int logPartitionOf(String group, int logPartitions) {
        int hash = group.hashCode();
        return (hash == Integer.MIN_VALUE ? 0 : Math.abs(hash)) % logPartitions;
    }

    private static String string(ByteBuffer in) {
        short length = in.getShort();
        if (length < 0 || length > in.remaining()) {
            throw new IllegalArgumentException("a " + LOG + " key with a string of " + length + " bytes in " + in.remaining());
        }
        byte[] bytes = new byte[length];
        in.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
