package io.clustermirror.common.batch;

import java.nio.ByteBuffer;

/**
 * Writes a v2 control batch of one control record, byte for byte as Kafka's batch builder writes one: uncompressed, create
 * time, no headers, offset and timestamp deltas 0. Kafka's builder refuses control types it does not know (the
 * {@code MIRROR_PID_RESET} barrier), which is why this writer exists; transaction markers use it too, so that both kinds
 * come from one piece of code.
 *
 * <p>The partition leader epoch and the base offset lie outside the CRC: an appender may still stamp them.
 */
public final class ControlBatch {
    /** The control bit of a batch's attributes. */
    static final short CONTROL_ATTRIBUTE = 0x20;
    /** The transactional bit of a batch's attributes. */
    static final short TRANSACTIONAL_ATTRIBUTE = 0x10;
    /** A control record key: its version and its type, two shorts. */
    static final int KEY_SIZE = 2 * Short.BYTES;
    private static final short KEY_VERSION = 0;

    private ControlBatch() {
    }

    /**
     * One control batch at {@code offset}.
     *
     * @param transactional  true for a transaction marker (the batch then carries the producer's id and epoch)
     * @param controlType    the control record key's type (0 abort, 1 commit, 7 the mirror's barrier)
     * @param value          the control record's value, read from its position to its limit
     */
    public static StoredBatch write(long offset, int partitionLeaderEpoch, boolean transactional, long producerId,
                                    short producerEpoch, long timestampMs, short controlType, ByteBuffer value) {
        ByteBuffer v = value.duplicate();
        int bodySize = 1 // attributes
            + Varints.sizeOfVarlong(0) // timestamp delta
            + Varints.sizeOfVarint(0) // offset delta
            + Varints.sizeOfVarint(KEY_SIZE) + KEY_SIZE
            + Varints.sizeOfVarint(v.remaining()) + v.remaining()
            + Varints.sizeOfVarint(0); // headers
        int size = StoredBatch.RECORDS_OFFSET + Varints.sizeOfVarint(bodySize) + bodySize;
        ByteBuffer batch = ByteBuffer.allocate(size);
        batch.putLong(offset)
            .putInt(size - StoredBatch.LOG_OVERHEAD)
            .putInt(partitionLeaderEpoch)
            .put(StoredBatch.MAGIC_V2)
            .putInt(0) // the CRC, computed below
            .putShort((short) (CONTROL_ATTRIBUTE | (transactional ? TRANSACTIONAL_ATTRIBUTE : 0)))
            .putInt(0) // last offset delta
            .putLong(timestampMs) // base timestamp
            .putLong(timestampMs) // max timestamp
            .putLong(producerId)
            .putShort(producerEpoch)
            .putInt(StoredBatch.NO_SEQUENCE)
            .putInt(1); // record count
        Varints.writeVarint(bodySize, batch);
        batch.put((byte) 0);
        Varints.writeVarlong(0, batch);
        Varints.writeVarint(0, batch);
        Varints.writeVarint(KEY_SIZE, batch);
        batch.putShort(KEY_VERSION).putShort(controlType);
        Varints.writeVarint(v.remaining(), batch);
        batch.put(v);
        Varints.writeVarint(0, batch);
        StoredBatch written = StoredBatch.of(batch.flip());
        batch.putInt(StoredBatch.CRC_OFFSET, (int) written.computeChecksum());
        return written;
    }

    /**
     * The control type of a v2 control batch's first record, or -1 for any other batch (or a control record whose key is
     * too short to hold one).
     */
    public static short controlType(StoredBatch batch) {
        if (!batch.isV2() || !batch.isControlBatch()) {
            return -1;
        }
        java.util.List<StoredRecord> records = batch.records();
        if (records.isEmpty()) {
            return -1;
        }
        ByteBuffer key = records.get(0).key();
        return key != null && key.remaining() >= KEY_SIZE ? key.getShort(key.position() + Short.BYTES) : -1;
    }
}
