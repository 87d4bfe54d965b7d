package io.clustermirror.common.barrier;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.ByteUtils;
import org.apache.kafka.common.utils.Crc32C;

import java.nio.ByteBuffer;
import java.util.Iterator;
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
 * <p>{@link MemoryRecordsBuilder} refuses unknown control types, so {@link #build} writes a COMMIT control
 * record, rewrites the type in its key and recomputes the batch CRC. The partition leader epoch is outside
 * the CRC, so the appender may still stamp it.
 */
public final class BarrierBatch {
    /** The control record type of the barrier. */
    public static final short CONTROL_TYPE = 7;

    /** The CRC covers the batch from the attributes field (right after the 4-byte CRC) to its end. */
    private static final int CRC_START = DefaultRecordBatch.CRC_OFFSET + 4;

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
    public static MemoryRecords build(long offset, int partitionLeaderEpoch, String sourceClusterId, long timestampMs) {
        ByteBuffer value = MirrorPidResetRecord.of(sourceClusterId).encode();
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(
            ByteBuffer.allocate(DefaultRecordBatch.RECORD_BATCH_OVERHEAD + 64 + value.remaining()),
            RecordBatch.MAGIC_VALUE_V2, Compression.NONE, TimestampType.CREATE_TIME, offset, RecordBatch.NO_TIMESTAMP,
            RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE,
            false, true, partitionLeaderEpoch, Integer.MAX_VALUE);
        builder.appendControlRecord(timestampMs, ControlRecordType.COMMIT, value);
        MemoryRecords records = builder.build();

        ByteBuffer batch = records.buffer(); // shares the content of records, starts at the batch
        batch.putShort(keyPosition(batch) + Short.BYTES, CONTROL_TYPE); // key: int16 version (0), int16 type
        long crc = Crc32C.compute(batch, CRC_START, batch.limit() - CRC_START);
        ByteUtils.writeUnsignedInt(batch, DefaultRecordBatch.CRC_OFFSET, crc);
        return records;
    }

    /** True if {@code batch} is a control batch whose record has control type {@link #CONTROL_TYPE}. */
    public static boolean isBarrier(RecordBatch batch) {
        return barrierRecord(batch).isPresent();
    }

    /** The source cluster id recorded in a barrier, or empty if {@code batch} is not a barrier. */
    public static Optional<String> sourceClusterId(RecordBatch batch) {
        return barrierRecord(batch).map(r -> MirrorPidResetRecord.decode(r.value()).sourceClusterId());
    }

    private static Optional<Record> barrierRecord(RecordBatch batch) {
        if (batch.magic() < RecordBatch.MAGIC_VALUE_V2 || !batch.isControlBatch()) {
            return Optional.empty();
        }
        Iterator<Record> records = batch.iterator();
        if (!records.hasNext()) {
            return Optional.empty();
        }
        Record record = records.next();
        boolean barrier = record.keySize() >= 2 * Short.BYTES
            && ControlRecordType.parseTypeId(record.key()) == CONTROL_TYPE;
        return barrier ? Optional.of(record) : Optional.empty();
    }

    /** Position of the first record's key in an uncompressed v2 batch starting at position 0. */
    private static int keyPosition(ByteBuffer batch) {
        ByteBuffer record = batch.duplicate().position(DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
        ByteUtils.readVarint(record);  // record length
        record.get();                  // attributes
        ByteUtils.readVarlong(record); // timestamp delta
        ByteUtils.readVarint(record);  // offset delta
        ByteUtils.readVarint(record);  // key length
        return record.position();
    }
}
