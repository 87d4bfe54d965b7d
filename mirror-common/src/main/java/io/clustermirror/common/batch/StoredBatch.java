package io.clustermirror.common.batch;

import org.apache.kafka.common.errors.CorruptRecordException;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * One record batch as a broker stores and serves it, read straight from its bytes in Kafka's wire format (the
 * {@code DefaultRecordBatch} layout of message format v2, and just enough of the legacy v0/v1 entries to name and refuse
 * them). Kafka's own record classes are internal and moved package between Kafka releases; the format they read is
 * Kafka's stable on-disk and wire format, so the mirror reads it itself and runs on every release.
 *
 * <p>A v2 batch is a 61-byte header, then its records (compressed as one block when the batch is compressed):
 * <pre>
 * baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 | crc uint32 | attributes int16 |
 * lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 | producerId int64 | producerEpoch int16 |
 * baseSequence int32 | recordCount int32 | records
 * </pre>
 * The CRC-32C covers the bytes from the attributes to the end: the offset, length, partition leader epoch and magic are
 * outside it, which is why a destination leader may stamp its own epoch on a mirrored batch.
 *
 * <p>Invariant: {@link #bytes()} holds exactly one whole entry, its log overhead ({@code baseOffset} and
 * {@code batchLength}) included, at positions {@code [0, sizeInBytes())}. The header is not otherwise validated: a
 * batch whose bytes were corrupted after it was written reads as what its bytes say, and {@link #isValid()} tells.
 */
public final class StoredBatch {
    /** The message format of every batch Kafka 0.11 and later writes. */
    public static final byte MAGIC_V2 = 2;
    /** The producer id, epoch and sequence of a batch written without one. */
    public static final long NO_PRODUCER_ID = -1L;
    public static final short NO_PRODUCER_EPOCH = -1;
    public static final int NO_SEQUENCE = -1;
    /** The timestamp of a record that has none (message format v0). */
    public static final long NO_TIMESTAMP = -1L;
    /** The partition leader epoch of a batch that has none (legacy formats). */
    public static final int NO_PARTITION_LEADER_EPOCH = -1;

    static final int BASE_OFFSET_OFFSET = 0;
    static final int LENGTH_OFFSET = 8;
    /** The log overhead of every entry of every format: the offset and the length field. */
    public static final int LOG_OVERHEAD = 12;
    public static final int PARTITION_LEADER_EPOCH_OFFSET = 12;
    public static final int MAGIC_OFFSET = 16;
    public static final int CRC_OFFSET = 17;
    public static final int ATTRIBUTES_OFFSET = 21;
    static final int LAST_OFFSET_DELTA_OFFSET = 23;
    public static final int BASE_TIMESTAMP_OFFSET = 27;
    public static final int MAX_TIMESTAMP_OFFSET = 35;
    static final int PRODUCER_ID_OFFSET = 43;
    static final int PRODUCER_EPOCH_OFFSET = 51;
    static final int BASE_SEQUENCE_OFFSET = 53;
    static final int RECORD_COUNT_OFFSET = 57;
    /** The size of a v2 header, where the records begin. */
    public static final int RECORDS_OFFSET = 61;
    /** The smallest length field of any entry (a legacy v0 message with no key and no value), as Kafka checks it. */
    static final int MIN_LENGTH = 14;

    /** The codec bits of the attributes, the same three in every format. */
    private static final int COMPRESSION_MASK = 0x07;
    private static final int LOG_APPEND_TIME_FLAG = 0x08;
    private static final int TRANSACTIONAL_FLAG = 0x10;
    private static final int CONTROL_FLAG = 0x20;
    private static final int DELETE_HORIZON_FLAG = 0x40;
    /** Where a v1 message keeps its timestamp: after its CRC, magic and attributes. */
    private static final int LEGACY_V1_TIMESTAMP_OFFSET = 18;

    private final ByteBuffer bytes;

    private StoredBatch(ByteBuffer bytes) {
        this.bytes = bytes;
    }

    /**
     * The batch at the start of {@code entry}, which must hold it whole.
     *
     * @throws CorruptRecordException if the entry's length field is below the smallest entry, or runs past the buffer
     */
    public static StoredBatch of(ByteBuffer entry) {
        int size = wholeEntrySize(entry);
        if (size < 0 || size > entry.remaining()) {
            throw new CorruptRecordException("A batch of " + (size - LOG_OVERHEAD) + " bytes does not fit the "
                + entry.remaining() + " bytes given");
        }
        return new StoredBatch(entry.slice(entry.position(), size));
    }

    /**
     * The size of the entry at the buffer's position, log overhead included, or -1 when fewer than
     * {@link #LOG_OVERHEAD} bytes remain to tell it.
     *
     * @throws CorruptRecordException if its length field is below the smallest entry any format has
     */
    static int wholeEntrySize(ByteBuffer buffer) {
        if (buffer.remaining() < LOG_OVERHEAD) {
            return -1;
        }
        int length = buffer.getInt(buffer.position() + LENGTH_OFFSET);
        if (length < MIN_LENGTH) {
            throw new CorruptRecordException("Record size " + length + " is less than the minimum record overhead ("
                + MIN_LENGTH + ")");
        }
        return LOG_OVERHEAD + length;
    }

    /** The batch's bytes, positioned at 0, sharing their content with this view (and the buffer it was read from). */
    public ByteBuffer bytes() {
        return bytes.duplicate();
    }

    public int sizeInBytes() {
        return bytes.limit();
    }

    public byte magic() {
        return bytes.get(MAGIC_OFFSET);
    }

    public boolean isV2() {
        return magic() >= MAGIC_V2 && sizeInBytes() >= RECORDS_OFFSET;
    }

    /**
     * The first offset of a v2 batch. A legacy entry's offset field is the offset of its last message (of the last
     * inner message, when compressed): that is what this returns for one, as legacy entries are read only to be named.
     */
    public long baseOffset() {
        return bytes.getLong(BASE_OFFSET_OFFSET);
    }

    public long lastOffset() {
        return isV2() ? baseOffset() + bytes.getInt(LAST_OFFSET_DELTA_OFFSET) : baseOffset();
    }

    public long nextOffset() {
        return lastOffset() + 1;
    }

    /** "[base, last]", how reports name a batch. */
    public String range() {
        return "[" + baseOffset() + ", " + lastOffset() + "]";
    }

    public int partitionLeaderEpoch() {
        return isV2() ? bytes.getInt(PARTITION_LEADER_EPOCH_OFFSET) : NO_PARTITION_LEADER_EPOCH;
    }

    /**
     * Stamps the partition leader epoch: the one header field a leader writes into a batch it appends. It is outside
     * the CRC, so the batch stays valid.
     *
     * @throws java.nio.ReadOnlyBufferException if the batch was read from a read-only buffer
     */
    public void setPartitionLeaderEpoch(int epoch) {
        requireV2("set the partition leader epoch of");
        bytes.putInt(PARTITION_LEADER_EPOCH_OFFSET, epoch);
    }

    /** The CRC the batch carries (CRC-32C for v2, CRC-32 for legacy entries), as an unsigned 32-bit value. */
    public long checksum() {
        return Integer.toUnsignedLong(bytes.getInt(isV2() ? CRC_OFFSET : LOG_OVERHEAD));
    }

    /** The CRC of the bytes the batch's CRC covers, as {@link #checksum()} should be. */
    public long computeChecksum() {
        ByteBuffer covered = bytes();
        if (isV2()) {
            CRC32C crc = new CRC32C();
            crc.update(covered.position(ATTRIBUTES_OFFSET));
            return crc.getValue();
        }
        CRC32 crc = new CRC32();
        crc.update(covered.position(MAGIC_OFFSET));
        return crc.getValue();
    }

    /** True if the batch's bytes still match its CRC. */
    public boolean isValid() {
        try {
            ensureValid();
            return true;
        } catch (CorruptRecordException e) {
            return false;
        }
    }

    /**
     * Checks the batch against its CRC, as a broker does before it appends.
     *
     * @throws CorruptRecordException naming both CRCs, or the size, when the batch is not valid
     */
    public void ensureValid() {
        int minimum = magic() >= MAGIC_V2 ? RECORDS_OFFSET : MIN_LENGTH + LOG_OVERHEAD;
        if (sizeInBytes() < minimum) {
            throw new CorruptRecordException("Record batch is corrupt (the size " + sizeInBytes()
                + " is smaller than the minimum allowed overhead " + minimum + ")");
        }
        long computed = computeChecksum();
        if (checksum() != computed) {
            throw new CorruptRecordException("Record is corrupt (stored crc = " + checksum() + ", computed crc = " + computed + ")");
        }
    }

    public short attributes() {
        return isV2() ? bytes.getShort(ATTRIBUTES_OFFSET) : bytes.get(MAGIC_OFFSET + 1);
    }

    /** The batch's codec. */
    public BatchCompression compression() {
        return BatchCompression.forId(attributes() & COMPRESSION_MASK);
    }

    /** True if the broker set the records' timestamps (a topic with {@code message.timestamp.type=LogAppendTime}). */
    public boolean isLogAppendTime() {
        return isV2() && (attributes() & LOG_APPEND_TIME_FLAG) != 0;
    }

    public boolean isTransactional() {
        return isV2() && (attributes() & TRANSACTIONAL_FLAG) != 0;
    }

    /** True for a batch of control records: transaction markers, and the mirror's barrier. */
    public boolean isControlBatch() {
        return isV2() && (attributes() & CONTROL_FLAG) != 0;
    }

    /** True if the log cleaner set a delete horizon in the base timestamp (Kafka 3.1 and later). */
    public boolean hasDeleteHorizon() {
        return isV2() && (attributes() & DELETE_HORIZON_FLAG) != 0;
    }

    public long baseTimestamp() {
        requireV2("read the base timestamp of");
        return bytes.getLong(BASE_TIMESTAMP_OFFSET);
    }

    /**
     * The newest timestamp of the batch's records; for a legacy entry its message's timestamp (v1), or
     * {@link #NO_TIMESTAMP} (v0, which has none).
     */
    public long maxTimestamp() {
        if (isV2()) {
            return bytes.getLong(MAX_TIMESTAMP_OFFSET);
        }
        return magic() == 1 && sizeInBytes() >= LEGACY_V1_TIMESTAMP_OFFSET + Long.BYTES
            ? bytes.getLong(LEGACY_V1_TIMESTAMP_OFFSET) : NO_TIMESTAMP;
    }

    public long producerId() {
        return isV2() ? bytes.getLong(PRODUCER_ID_OFFSET) : NO_PRODUCER_ID;
    }

    public short producerEpoch() {
        return isV2() ? bytes.getShort(PRODUCER_EPOCH_OFFSET) : NO_PRODUCER_EPOCH;
    }

    public int baseSequence() {
        return isV2() ? bytes.getInt(BASE_SEQUENCE_OFFSET) : NO_SEQUENCE;
    }

    /** True if the batch was written by an idempotent or transactional producer. */
    public boolean hasProducerId() {
        return producerId() >= 0;
    }

    public int recordCount() {
        requireV2("count the records of");
        return bytes.getInt(RECORD_COUNT_OFFSET);
    }

    /**
     * The batch's records, decompressed when it is compressed.
     *
     * @throws CorruptRecordException if the records do not decode (truncated, or their count is not the header's)
     */
    public List<StoredRecord> records() {
        requireV2("read the records of");
        return StoredRecord.readAll(this);
    }

    private void requireV2(String what) {
        if (!isV2()) {
            throw new IllegalStateException("Cannot " + what + " a message format v" + magic() + " batch " + range()
                + ": only v2 batches have it");
        }
    }

    @Override
    public String toString() {
        return "StoredBatch(" + range() + ", magic " + magic() + ", " + sizeInBytes() + " bytes)";
    }
}
