package io.clustermirror.it;

import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredBatches;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The batches of one replica's log as stored in its segment files: what the identity invariant (docs/DESIGN.md, "The contract")
 * compares between source and destination, field by field.
 */
final class LogBatches {
    /**
     * The identity of a stored batch: everything but the 4-byte partitionLeaderEpoch, which the
     * destination stamps with its own epoch (outside the CRC, so the CRC still covers all the rest).
     */
    record Batch(byte magic, long baseOffset, long lastOffset, long crc, long producerId, short producerEpoch, int baseSequence,
                 boolean transactional, boolean control, String compression, String timestampType, Integer recordCount,
                 int sizeInBytes, long maxTimestamp, String barrierSourceClusterId) {
        /** The batch as Kafka reads it ({@code b}) and as the mirror does ({@code stored}), the same bytes. */
        static Batch of(RecordBatch b, StoredBatch stored) {
            return new Batch(b.magic(), b.baseOffset(), b.lastOffset(), b.checksum(), b.producerId(), b.producerEpoch(), b.baseSequence(),
                b.isTransactional(), b.isControlBatch(), b.compressionType().name, b.timestampType().name, b.countOrNull(),
                b.sizeInBytes(), b.maxTimestamp(), BarrierBatch.sourceClusterId(stored).orElse(null));
        }

        boolean isBarrier() {
            return barrierSourceClusterId != null;
        }
    }

    /**
     * A stored batch with the partitionLeaderEpoch its replica stamped on it: the same source batch copied again by a
     * later leader (after a truncation) is an equal {@link Batch} with a newer epoch, so this tells the two apart.
     */
    record Stored(Batch batch, int partitionLeaderEpoch) {
    }

    private LogBatches() {
    }

    /** All batches of the replica whose partition directory is {@code dir}, in offset order, up to {@code endOffset}. */
    static List<Batch> read(Path dir, long endOffset) throws IOException {
        return read(dir, 0, endOffset);
    }

    /**
     * The batches holding offsets in [{@code startOffset}, {@code endOffset}): a segment may still hold batches
     * below the log start offset (deleteRecords does not rewrite segments).
     */
    static List<Batch> read(Path dir, long startOffset, long endOffset) throws IOException {
        return readStored(dir, startOffset, endOffset).stream().map(Stored::batch).toList();
    }

    /** As {@link #read(Path, long, long)}, with the epoch each batch was stored at. */
    static List<Stored> readStored(Path dir, long startOffset, long endOffset) throws IOException {
        List<Path> segments;
        try (Stream<Path> files = Files.list(dir)) {
            segments = files.filter(f -> f.getFileName().toString().endsWith(".log")).sorted().toList();
        }
        List<Stored> batches = new ArrayList<>();
        for (Path segment : segments) {
            // A copy of the bytes, not FileRecords: the broker may be appending to the segment, and FileRecords.close()
            // trims the file to the size it saw at open (it fails on a read-only channel, and must never cut a live log).
            // A batch still being appended at the end is incomplete and not returned.
            ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(segment));
            java.util.Iterator<StoredBatch> stored = StoredBatches.iterator(bytes);
            for (RecordBatch b : MemoryRecords.readableRecords(bytes.duplicate()).batches()) {
                StoredBatch ours = stored.next();
                if (b.lastOffset() >= startOffset && b.lastOffset() < endOffset) {
                    b.ensureValid();
                    batches.add(new Stored(Batch.of(b, ours), b.partitionLeaderEpoch()));
                }
            }
        }
        return batches;
    }
}
