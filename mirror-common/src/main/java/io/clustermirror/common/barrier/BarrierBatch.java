package io.clustermirror.common.barrier;

import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredRecord;
import io.clustermirror.common.batch.Varints;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;

/**
 * The {@code MIRROR_PID_RESET} barrier (docs/DESIGN.md, "Where we differ from KIP-1279"): a v2 control batch holding one control
 * record whose key is {@code (version 0, type 7)} and whose value is a {@link MirrorPidResetRecord}.
 * Wherever it is appended or recovered, all mirrored producer state before it is stale.
 *
 * <p>The batch has producerId, producerEpoch and baseSequence -1 and is not transactional: stock Kafka's
 * producer-state code rejects an unknown control type on a batch with a producer id, while without one it
 * appends, replicates and is skipped by consumers like any control batch.
 *
 * <p>{@link #build} writes the batch itself, byte for byte what Kafka's batch builder writes for a control record
 * (which refuses unknown control types). The partition leader epoch is outside the CRC, so the appender may still
 * stamp it.
 */
public final class BarrierBatch {
    /** The control record type of the barrier. */
    public static final short CONTROL_TYPE = 7;
    /** The control record key's version. */
    private static final short KEY_VERSION = 0;
    /** The attributes of the batch: a control batch, uncompressed, create time, not transactional. */
    private static final short CONTROL_ATTRIBUTES = 0x20;
    private static final int KEY_SIZE = 2 * Short.BYTES;

    private BarrierBatch() {
    }

    /**
     * Builds a barrier batch at {@code offset}.
     *
     * @param offset               base (and last) offset of the batch
     * @param partitionLeaderEpoch the destination leader epoch to stamp
     * @param sourceClusterId      the source cluster the partition mirrored from
     * @param timestampMs          the record's create time
     */
    public static StoredBatch build(long offset, int partitionLeaderEpoch, String sourceClusterId, long timestampMs) {
        ByteBuffer value = MirrorPidResetRecord.of(sourceClusterId).encode();
        int bodySize = 1 // attributes
            + Varints.sizeOfVarlong(0) // timestamp delta
            + Varints.sizeOfVarint(0) // offset delta
            + Varints.sizeOfVarint(KEY_SIZE) + KEY_SIZE
            + Varints.sizeOfVarint(value.remaining()) + value.remaining()
            + Varints.sizeOfVarint(0); // headers
        int size = StoredBatch.RECORDS_OFFSET + Varints.sizeOfVarint(bodySize) + bodySize;
        ByteBuffer batch = ByteBuffer.allocate(size);
        batch.putLong(offset)
            .putInt(size - StoredBatch.LOG_OVERHEAD)
            .putInt(partitionLeaderEpoch)
            .put(StoredBatch.MAGIC_V2)
            .putInt(0) // the CRC, computed below
            .putShort(CONTROL_ATTRIBUTES)
            .putInt(0) // last offset delta
            .putLong(timestampMs) // base timestamp
            .putLong(timestampMs) // max timestamp
            .putLong(StoredBatch.NO_PRODUCER_ID)
            .putShort(StoredBatch.NO_PRODUCER_EPOCH)
            .putInt(StoredBatch.NO_SEQUENCE)
            .putInt(1); // record count
        Varints.writeVarint(bodySize, batch);
        batch.put((byte) 0);
        Varints.writeVarlong(0, batch);
        Varints.writeVarint(0, batch);
        Varints.writeVarint(KEY_SIZE, batch);
        batch.putShort(KEY_VERSION).putShort(CONTROL_TYPE);
        Varints.writeVarint(value.remaining(), batch);
        batch.put(value);
        Varints.writeVarint(0, batch);
        StoredBatch barrier = StoredBatch.of(batch.flip());
        batch.putInt(StoredBatch.CRC_OFFSET, (int) barrier.computeChecksum());
        return barrier;
    }

    /** True if {@code batch} is a control batch whose record has control type {@link #CONTROL_TYPE}. */
    public static boolean isBarrier(StoredBatch batch) {
        return barrierRecord(batch).isPresent();
    }

    /** The source cluster id recorded in a barrier, or empty if {@code batch} is not a barrier. */
    public static Optional<String> sourceClusterId(StoredBatch batch) {
        return barrierRecord(batch).map(r -> MirrorPidResetRecord.decode(r.value()).sourceClusterId());
    }

    private static Optional<StoredRecord> barrierRecord(StoredBatch batch) {
        if (!batch.isV2() || !batch.isControlBatch()) {
            return Optional.empty();
        }
        List<StoredRecord> records = batch.records();
        if (records.isEmpty()) {
            return Optional.empty();
        }
        StoredRecord record = records.get(0);
        boolean barrier = record.key() != null && record.key().remaining() >= KEY_SIZE && record.value() != null
            && record.key().getShort(record.key().position() + Short.BYTES) == CONTROL_TYPE;
        return barrier ? Optional.of(record) : Optional.empty();
    }
}
