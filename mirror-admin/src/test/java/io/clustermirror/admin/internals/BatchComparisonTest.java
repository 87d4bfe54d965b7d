package io.clustermirror.admin.internals;

import io.clustermirror.common.batch.StoredBatch;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BatchComparisonTest {
    private static final long PRODUCER_ID = 4000;

    /** An idempotent lz4 batch at {@code baseOffset} with {@code values}, stamped with a leader epoch. */
    private static StoredBatch batch(long baseOffset, long producerId, int leaderEpoch, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(1_700_000_000_000L + i, ("k" + i).getBytes(StandardCharsets.UTF_8),
                values[i].getBytes(StandardCharsets.UTF_8));
        }
        MemoryRecords memory = MemoryRecords.withIdempotentRecords(baseOffset, Compression.lz4().build(), producerId, (short) 0,
            (int) baseOffset, leaderEpoch, records);
        return StoredBatch.of(memory.buffer());
    }

    /** The batch with one byte of its record data flipped, as a disk corruption would leave it. */
    private static StoredBatch corrupted(StoredBatch batch) {
        ByteBuffer copy = ByteBuffer.allocate(batch.sizeInBytes()).put(batch.bytes());
        copy.flip();
        int valueByte = copy.limit() - 2;
        copy.put(valueByte, (byte) (copy.get(valueByte) ^ 0x01));
        return StoredBatch.of(copy);
    }

    @Test
    void batchesThatDifferOnlyInTheirLeaderEpochAreTheSame() {
        assertNull(BatchComparison.compare(batch(10, PRODUCER_ID, 3, "a", "b"), batch(10, PRODUCER_ID, 71, "a", "b")));
    }

    @Test
    void aCorruptDestinationBatchIsNamedByItsCrc() {
        StoredBatch source = batch(10, PRODUCER_ID, 3, "a", "b");
        BatchComparison.Difference difference = BatchComparison.compare(source, corrupted(batch(10, PRODUCER_ID, 7, "a", "b")));
        assertEquals(10, difference.offset());
        assertTrue(difference.description().startsWith("destination batch [10, 11] fails its CRC check (stored 0x"),
            difference.description());
        BatchComparison.Difference sourceSide = BatchComparison.compare(corrupted(source), source);
        assertTrue(sourceSide.description().startsWith("source batch [10, 11] fails its CRC check"), sourceSide.description());
    }

    @Test
    void aDifferentRecordIsNamedByItsOffsetAndField() {
        BatchComparison.Difference difference = BatchComparison.compare(batch(10, PRODUCER_ID, 3, "a", "b", "c"),
            batch(10, PRODUCER_ID, 3, "a", "B", "c"));
        assertEquals(11, difference.offset(), difference.description());
        assertTrue(difference.description().contains("crc 0x") && difference.description().contains("record at offset 11 "
            + "differs in its value"), difference.description());
    }

    @Test
    void headerFieldsAreNamedWithBothValues() {
        BatchComparison.Difference difference = BatchComparison.compare(batch(10, PRODUCER_ID, 3, "a"), batch(10, 4001, 3, "a"));
        assertEquals(10, difference.offset());
        assertTrue(difference.description().contains("producer id 4000 (source) vs 4001 (destination)"), difference.description());
        BatchComparison.Difference offsets = BatchComparison.compare(batch(10, PRODUCER_ID, 3, "a"), batch(12, PRODUCER_ID, 3, "a"));
        assertEquals(10, offsets.offset());
        assertTrue(offsets.description().contains("base offset 10 (source) vs 12 (destination)"), offsets.description());
    }

    @Test
    void aPartitionIsComparedOverItsRangeOnly() {
        List<StoredBatch> source = List.of(batch(0, PRODUCER_ID, 1, "x"), batch(1, PRODUCER_ID, 1, "a", "b"),
            batch(3, PRODUCER_ID, 2, "c"), batch(4, PRODUCER_ID, 2, "local"));
        // The destination no longer holds offset 0 and has other data from offset 4 (after a stop).
        List<StoredBatch> destination = List.of(batch(1, PRODUCER_ID, 5, "a", "b"), batch(3, PRODUCER_ID, 5, "c"),
            batch(4, 9, 6, "other"));
        BatchComparison.Outcome outcome = BatchComparison.compare(source.iterator(), destination.iterator(), 1, 4);
        assertTrue(outcome.identical(), String.valueOf(outcome.difference()));
        assertEquals(2, outcome.batches());
        assertEquals(source.get(1).sizeInBytes() + source.get(2).sizeInBytes(), outcome.bytes());
        assertEquals(new BatchComparison.Outcome(2, 2, null, 0, 0),
            BatchComparison.compare(source.iterator(), destination.iterator(), 2, 2), "an empty range is identical");
    }

    @Test
    void aSideThatEndsEarlyIsADifferenceAtItsEnd() {
        List<StoredBatch> source = List.of(batch(0, PRODUCER_ID, 1, "a"), batch(1, PRODUCER_ID, 1, "b"));
        BatchComparison.Outcome outcome = BatchComparison.compare(source.iterator(), new ArrayList<>(source.subList(0, 1)).iterator(), 0, 2);
        assertEquals(1, outcome.difference().offset());
        assertTrue(outcome.difference().description().startsWith("the destination has no batch at offset 1"),
            outcome.difference().description());
        BatchComparison.Outcome shorterSource = BatchComparison.compare(source.subList(0, 1).iterator(), source.iterator(), 0, 2);
        assertTrue(shorterSource.difference().description().startsWith("the source has no batch at offset 1"),
            shorterSource.difference().description());
    }
}
