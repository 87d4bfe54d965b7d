package io.clustermirror.broker;

import io.clustermirror.common.batch.StoredBatch;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;

/** Hand-built v2 record batches for tests that feed the append path as the mirror would. */
public final class TestBatches {
    private TestBatches() {
    }

    /** One uncompressed batch of {@code n} records from {@code base}, values {@code v<offset>}: its bytes, positioned at 0. */
    public static ByteBuffer batch(long base, int n, long producerId, short producerEpoch, int baseSequence, int partitionLeaderEpoch) {
        return build(base, n, producerId, producerEpoch, baseSequence, false, partitionLeaderEpoch);
    }

    /** One uncompressed transactional batch of {@code n} records of {@code producerId} from {@code base}. */
    public static StoredBatch transactional(long base, int n, long producerId, int partitionLeaderEpoch) {
        return StoredBatch.of(build(base, n, producerId, (short) 0, 0, true, partitionLeaderEpoch));
    }

    private static ByteBuffer build(long base, int n, long producerId, short producerEpoch, int baseSequence, boolean transactional,
                                    int partitionLeaderEpoch) {
        ByteBuffer buf = ByteBuffer.allocate(8192);
        MemoryRecordsBuilder b = new MemoryRecordsBuilder(buf, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
            TimestampType.CREATE_TIME, base, 1000L, producerId, producerEpoch, baseSequence, transactional, false, partitionLeaderEpoch,
            buf.capacity());
        for (int i = 0; i < n; i++) {
            b.appendWithOffset(base + i, 1000L + i, ("k" + i).getBytes(), ("v" + (base + i)).getBytes());
        }
        return bytes(b.build());
    }

    /** The batch {@link #batch} builds, as a view. */
    public static StoredBatch stored(long base, int n, long producerId, short producerEpoch, int baseSequence, int partitionLeaderEpoch) {
        return StoredBatch.of(batch(base, n, producerId, producerEpoch, baseSequence, partitionLeaderEpoch));
    }

    /** The bytes of records Kafka's builders made, from position 0 (a buffer of their own, not shared). */
    public static ByteBuffer bytes(MemoryRecords records) {
        ByteBuffer copy = ByteBuffer.allocate(records.sizeInBytes());
        copy.put(records.buffer().duplicate());
        return copy.flip();
    }

    /** The batches of {@code parts} (each from its position to its limit) one after the other, as one fetch response would carry them. */
    public static ByteBuffer concat(ByteBuffer... parts) {
        int size = 0;
        for (ByteBuffer r : parts) {
            size += r.remaining();
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        for (ByteBuffer r : parts) {
            out.put(r.duplicate());
        }
        return out.flip();
    }
}
