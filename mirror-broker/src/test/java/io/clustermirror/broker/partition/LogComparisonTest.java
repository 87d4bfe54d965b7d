package io.clustermirror.broker.partition;

import io.clustermirror.broker.TestBatches;
import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredBatches;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogComparisonTest {
    private static final int SOURCE_EPOCH = 7;
    private static final int DESTINATION_EPOCH = 3;

    /** A log of hand-made batches, counting how many batches were read (the search must read little when logs match). */
    private static final class Log implements LogComparison.BatchReader {
        final List<StoredBatch> batches = new ArrayList<>();
        int read;

        Log add(ByteBuffer records) {
            batches.addAll(StoredBatches.of(records));
            return this;
        }

        Log add(StoredBatch batch) {
            batches.add(batch);
            return this;
        }

        long end() {
            return batches.isEmpty() ? 0 : batches.get(batches.size() - 1).nextOffset();
        }

        @Override
        public List<StoredBatch> batches(long from, long to) {
            List<StoredBatch> out = batches.stream().filter(b -> b.lastOffset() >= from && b.baseOffset() < to).toList();
            read += out.size();
            return out;
        }
    }

    /** {@code count} batches of 10 records from {@code base}, producer {@code producerId}, as the source wrote them. */
    private static Log batches(Log log, long base, int count, long producerId, int epoch) {
        for (int i = 0; i < count; i++) {
            log.add(TestBatches.batch(base + 10L * i, 10, producerId, (short) 0, 10 * i, epoch));
        }
        return log;
    }

    private static Log sourceLog(int batches) {
        return batches(new Log(), 0, batches, 1, SOURCE_EPOCH);
    }

    /** The same batches as the source's, stamped with the destination's epoch as the mirror appends them. */
    private static Log mirrored(Log source, int batches) {
        Log log = new Log();
        for (StoredBatch b : source.batches.subList(0, batches)) {
            StoredBatch copy = StoredBatch.of(TestBatches.concat(b.bytes()));
            copy.setPartitionLeaderEpoch(DESTINATION_EPOCH);
            log.add(copy);
        }
        return log;
    }

    private static LogComparison.Result search(Log destination, Log source) throws Exception {
        return LogComparison.search(0, destination.end(), destination, source);
    }

    @Test
    void identicalLogsMatchToTheEndAfterReadingOnlyTheirEnds() throws Exception {
        Log source = sourceLog(1000);
        Log destination = mirrored(source, 1000);
        LogComparison.Result r = search(destination, source);
        assertEquals(new LogComparison.Result(10_000, SOURCE_EPOCH, -1, null), r);
        assertFalse(r.diverged());
        assertTrue(destination.read < 20 && source.read < 20, "read " + destination.read + " and " + source.read + " batches");
    }

    @Test
    void aDestinationBehindTheSourceMatchesToItsEnd() throws Exception {
        Log source = sourceLog(50);
        assertEquals(300, search(mirrored(source, 30), source).lastIdenticalEnd());
    }

    @Test
    void aDestinationAheadOfTheSourceIsNotProvenDifferent() throws Exception {
        // The source's end may only lag (a new source leader's high watermark): what it does not hold proves nothing.
        Log longer = sourceLog(40);
        Log source = new Log();
        longer.batches.subList(0, 30).forEach(b -> source.batches.add(b));
        LogComparison.Result r = search(mirrored(longer, 40), source);
        assertEquals(300, r.lastIdenticalEnd());
        assertFalse(r.diverged());
    }

    @Test
    void divergenceInTheMiddleIsFoundAtTheFirstDifferentBatch() throws Exception {
        Log source = batches(sourceLog(500), 5000, 100, 2, SOURCE_EPOCH + 1);
        // The destination holds the first 500 batches, then 300 of another producer (e.g. its own writes after a failover).
        Log destination = batches(mirrored(source, 500), 5000, 300, 9, DESTINATION_EPOCH);
        LogComparison.Result r = search(destination, source);
        assertEquals(5000, r.lastIdenticalEnd());
        assertEquals(SOURCE_EPOCH, r.sourceEpoch());
        assertEquals(5000, r.firstDifferent());
        assertTrue(r.difference().contains("[5000, 5009]"), r.difference());
    }

    @Test
    void divergenceAtTheFirstBatchLeavesNothingInCommon() throws Exception {
        Log source = sourceLog(20);
        Log destination = batches(new Log(), 0, 20, 9, DESTINATION_EPOCH);
        LogComparison.Result r = search(destination, source);
        assertEquals(-1, r.lastIdenticalEnd());
        assertEquals(0, r.firstDifferent());
    }

    @Test
    void divergenceWithOtherBatchBoundariesIsFound() throws Exception {
        Log source = sourceLog(10);
        Log destination = mirrored(source, 5);
        destination.add(TestBatches.batch(50, 3, 9, (short) 0, 0, DESTINATION_EPOCH)); // [50, 52] inside the source's [50, 59]
        LogComparison.Result r = search(destination, source);
        assertEquals(50, r.lastIdenticalEnd());
        assertEquals(50, r.firstDifferent());
    }

    @Test
    void gapsTheCleanerLeftOnEitherSideAreNotDifferences() throws Exception {
        Log source = sourceLog(30);
        Log compactedSource = new Log();
        for (StoredBatch b : source.batches) {
            if (b.baseOffset() < 100 || b.baseOffset() >= 200) {
                compactedSource.batches.add(b); // batches [100, 199] removed entirely on the source
            }
        }
        Log destination = mirrored(source, 30);
        destination.batches.removeIf(b -> b.baseOffset() >= 250 && b.baseOffset() < 280); // and others on the destination
        LogComparison.Result r = LogComparison.search(0, destination.end(), destination, compactedSource);
        assertEquals(300, r.lastIdenticalEnd());
        assertFalse(r.diverged());

        // Searching from a floor above the last identical batch: the gap alone proves nothing.
        r = LogComparison.search(100, 200, destination, compactedSource);
        assertEquals(-1, r.lastIdenticalEnd());
        assertFalse(r.diverged());
    }

    @Test
    void aBatchTheCleanerRewroteIsTheSameBatch() throws Exception {
        Log source = new Log().add(TestBatches.batch(0, 10, 1, (short) 0, 0, SOURCE_EPOCH));
        StoredBatch original = TestBatches.stored(10, 10, 1, (short) 0, 10, SOURCE_EPOCH);
        source.add(original);
        Log destination = mirrored(source, 1);
        destination.add(retaining(original, 3, 7));
        LogComparison.Result r = search(destination, source);
        assertEquals(20, r.lastIdenticalEnd());
        assertFalse(r.diverged());

        Log tampered = mirrored(source, 1);
        tampered.add(TestBatches.batch(10, 10, 2, (short) 0, 10, DESTINATION_EPOCH)); // same offsets, another producer
        assertEquals(10, search(tampered, source).firstDifferent());
    }

    @Test
    void aBarrierTheSourceDoesNotHoldIsADifference() throws Exception {
        Log source = sourceLog(10);
        Log destination = mirrored(source, 10);
        destination.add(BarrierBatch.build(100, DESTINATION_EPOCH, "source-cluster", 5L));
        batches(destination, 101, 3, 9, DESTINATION_EPOCH); // the destination's own writes after its stop
        LogComparison.Result r = search(destination, source);
        assertEquals(100, r.lastIdenticalEnd());
        assertEquals(100, r.firstDifferent());
        assertTrue(r.difference().contains("barrier"), r.difference());
    }

    @Test
    void emptyLogsHaveNothingToCompare() throws Exception {
        assertEquals(new LogComparison.Result(-1, -1, -1, null), search(new Log(), sourceLog(3)));
        Log source = sourceLog(3);
        assertFalse(search(mirrored(source, 3), new Log()).diverged(), "an empty source proves nothing");
    }

    @Test
    void aProposedCutHoldsOnlyWhereTheBatchesDiffer() throws Exception {
        Log source = batches(sourceLog(10), 100, 10, 2, SOURCE_EPOCH + 1);
        Log destination = batches(mirrored(source, 10), 100, 10, 9, DESTINATION_EPOCH);
        assertTrue(LogComparison.contradicts(100, destination.end(), destination, source).isEmpty());
        assertTrue(LogComparison.contradicts(200, destination.end(), destination, source).isEmpty(), "nothing at or after it");
        String why = LogComparison.contradicts(50, destination.end(), destination, source).orElseThrow();
        assertTrue(why.contains("[50, 59]"), why);
    }

    /** The batch as Kafka's log cleaner leaves it when it keeps only the records at the given offset deltas. */
    private static ByteBuffer retaining(StoredBatch original, int... deltas) {
        ByteBuffer buf = ByteBuffer.allocate(4096);
        MemoryRecordsBuilder b = new MemoryRecordsBuilder(buf, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
            TimestampType.CREATE_TIME, original.baseOffset(), RecordBatch.NO_TIMESTAMP, original.producerId(),
            original.producerEpoch(), original.baseSequence(), false, false, DESTINATION_EPOCH, buf.capacity());
        List<org.apache.kafka.common.record.internal.Record> records = new ArrayList<>();
        MemoryRecords.readableRecords(original.bytes()).batches().forEach(batch -> batch.forEach(records::add));
        for (int d : deltas) {
            b.append(records.get(d));
        }
        b.overrideLastOffset(original.lastOffset());
        return TestBatches.bytes(b.build());
    }
}
