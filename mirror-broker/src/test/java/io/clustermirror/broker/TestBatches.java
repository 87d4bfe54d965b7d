package io.clustermirror.broker;

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

    /** One uncompressed batch of {@code n} records from {@code base}, values {@code v<offset>}. */
    public static MemoryRecords batch(long base, int n, long producerId, short producerEpoch, int baseSequence, int partitionLeaderEpoch) {
        ByteBuffer buf = ByteBuffer.allocate(8192);
        MemoryRecordsBuilder b = new MemoryRecordsBuilder(buf, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
            TimestampType.CREATE_TIME, base, 1000L, producerId, producerEpoch, baseSequence, false, false, partitionLeaderEpoch,
            buf.capacity());
        for (int i = 0; i < n; i++) {
            b.appendWithOffset(base + i, 1000L + i, ("k" + i).getBytes(), ("v" + (base + i)).getBytes());
        }
        return b.build();
    }

    /** The batches of {@code parts} one after the other, as one fetch response would carry them. */
    public static MemoryRecords concat(MemoryRecords... parts) {
        int size = 0;
        for (MemoryRecords r : parts) {
            size += r.sizeInBytes();
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        for (MemoryRecords r : parts) {
            out.put(r.buffer().duplicate());
        }
        out.flip();
        return MemoryRecords.readableRecords(out);
    }
}
