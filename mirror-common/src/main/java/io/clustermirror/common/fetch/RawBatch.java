package io.clustermirror.common.fetch;

import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;

/**
 * One stored batch as a broker served it: its parsed header and its bytes (a read-only view of the fetched buffer,
 * from the base offset to the end of the batch). Nothing is validated: {@link RecordBatch#isValid()} tells whether the
 * bytes still match the CRC.
 */
public record RawBatch(RecordBatch batch, ByteBuffer bytes) {
    public long baseOffset() {
        return batch.baseOffset();
    }

    public long lastOffset() {
        return batch.lastOffset();
    }

    public int sizeInBytes() {
        return bytes.remaining();
    }

    /** "[base, last]", how reports name a batch. */
    public String range() {
        return "[" + baseOffset() + ", " + lastOffset() + "]";
    }
}
