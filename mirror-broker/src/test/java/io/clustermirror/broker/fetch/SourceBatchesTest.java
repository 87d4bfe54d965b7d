package io.clustermirror.broker.fetch;

import io.clustermirror.broker.TestBatches;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.barrier.BarrierBatch;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static io.clustermirror.broker.TestBatches.concat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SourceBatchesTest {

    /** A batch of producer 7 whose base sequence is its base offset. */
    static ByteBuffer batch(long base, int n, int epoch) {
        return TestBatches.batch(base, n, 7L, (short) 0, (int) base, epoch);
    }

    @Test
    void splitsRunsBySourceEpochAndReportsNewEpochStarts() {
        ByteBuffer all = concat(batch(0, 3, 4), batch(3, 2, 4), batch(10, 5, 6), batch(15, 1, 6), batch(16, 2, 9));
        SourceBatches s = SourceBatches.split(all, 0, 4);
        assertNull(s.corruption());
        assertNull(s.corruptionError());
        assertEquals(0, s.partialBytes());
        List<SourceBatches.Run> runs = s.runs();
        assertEquals(3, runs.size());
        assertEquals(0, runs.get(0).baseOffset());
        assertEquals(4, runs.get(0).lastOffset());
        assertEquals(4, runs.get(0).sourceEpoch());
        assertEquals(-1, runs.get(0).newEpochStart(), "epoch 4 continues the last fetched epoch");
        assertEquals(2, runs.get(0).batchCount());
        assertEquals(5, runs.get(0).recordCount());
        assertEquals(10, runs.get(1).baseOffset());
        assertEquals(15, runs.get(1).lastOffset());
        assertEquals(10, runs.get(1).newEpochStart());
        assertEquals(16, runs.get(2).newEpochStart());
        assertEquals(9, runs.get(2).sourceEpoch());
        // Runs are slices of the fetched bytes, batch for batch.
        int total = runs.stream().mapToInt(r -> r.records().remaining()).sum();
        assertEquals(all.remaining(), total);
    }

    @Test
    void aBarrierEndsItsRunSoItsProducersCanBeClearedBeforeWhatFollows() {
        ByteBuffer barrier = BarrierBatch.build(5, 4, "source-cluster", 1000L).bytes();
        ByteBuffer all = concat(batch(0, 5, 4), barrier, batch(6, 3, 4));
        List<SourceBatches.Run> runs = SourceBatches.split(all, 0, 4).runs();
        assertEquals(2, runs.size());
        assertEquals(5, runs.get(0).lastOffset());
        assertEquals(5, runs.get(0).barrierOffset());
        assertEquals(6, runs.get(1).baseOffset());
        assertEquals(-1, runs.get(1).barrierOffset());
        assertEquals(-1, runs.get(1).newEpochStart(), "the same source epoch continues after the barrier");
    }

    @Test
    void unknownLastEpochMakesTheFirstRunANewEpoch() {
        SourceBatches s = SourceBatches.split(batch(5, 2, 3), 5, -1);
        assertEquals(5, s.runs().get(0).newEpochStart());
    }

    @Test
    void leavesOutATrailingPartialBatch() {
        ByteBuffer whole = concat(batch(0, 3, 1), batch(3, 3, 1));
        int cut = batch(0, 3, 1).remaining() + 20;
        ByteBuffer partial = whole.duplicate();
        partial.limit(cut);
        SourceBatches s = SourceBatches.split(partial.slice(), 0, 1);
        assertNull(s.corruption());
        assertEquals(1, s.runs().size());
        assertEquals(2, s.runs().get(0).lastOffset());
        assertEquals(20, s.partialBytes());
    }

    /** CRCs are Kafka's append's to check; once it refuses a run, the corrupt batch is found and the ones before it kept. */
    @Test
    void leavesCrcsToTheAppendAndLocatesTheCorruptBatchOfARefusedRun() {
        ByteBuffer first = batch(0, 3, 1);
        ByteBuffer all = concat(first, batch(3, 3, 1), batch(6, 1, 1));
        // Flip a byte inside the second batch's records (covered by the CRC).
        ByteBuffer buf = all.duplicate();
        int pos = first.remaining() + 70;
        buf.put(pos, (byte) (buf.get(pos) ^ 0x5a));
        SourceBatches s = SourceBatches.split(buf, 0, 0);
        assertNull(s.corruption(), "split reads headers only");
        assertEquals(1, s.runs().size());
        SourceBatches.Run run = s.runs().get(0);
        assertEquals(6, run.lastOffset());

        SourceBatches.Corruption c = SourceBatches.locateCorruption(run);
        assertEquals(3, c.corruptOffset());
        assertTrue(c.description().startsWith("corrupt batch at offsets 3..5: Record is corrupt (stored crc = "), c.description());
        SourceBatches.Run prefix = c.validPrefix().orElseThrow();
        assertEquals(List.of(0L, 2L, 1, 1, 3L, 0L), List.of(prefix.baseOffset(), prefix.lastOffset(), prefix.sourceEpoch(),
            prefix.batchCount(), prefix.recordCount(), prefix.newEpochStart()), "the first batch, as a run of the same epoch");
        assertEquals(first.remaining(), prefix.records().remaining());
        assertEquals(-1L, prefix.barrierOffset());

        assertNull(SourceBatches.locateCorruption(SourceBatches.split(concat(batch(0, 3, 1)), 0, 1).runs().get(0))
            .description(), "a valid run has no corrupt batch");
        ByteBuffer bad = batch(0, 3, 1);
        bad.put(70, (byte) (bad.get(70) ^ 0x5a));
        SourceBatches.Corruption atFirst = SourceBatches.locateCorruption(SourceBatches.split(bad, 0, 1).runs().get(0));
        assertTrue(atFirst.validPrefix().isEmpty(), "nothing before a corrupt first batch");
        assertEquals(0, atFirst.corruptOffset());
    }

    @Test
    void stopsAtAnOldFormatBatchWithItsOwnErrorAndKeepsTheV2BatchesBeforeIt() {
        MemoryRecords v1 = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V1, 3L, Compression.NONE,
            new SimpleRecord(1L, "k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8)));
        SourceBatches s = SourceBatches.split(concat(batch(0, 3, 1), v1.buffer()), 0, 1);
        assertEquals(1, s.runs().size());
        assertEquals(2, s.runs().get(0).lastOffset());
        assertEquals(3, s.corruptOffset());
        assertEquals(MirrorError.UNSUPPORTED_MESSAGE_FORMAT, s.corruptionError());
        assertTrue(s.corruption().contains("message format v1"), s.corruption());
    }

    /** The records are the bytes from the buffer's position to its limit; the caller's buffer is left as it was. */
    @Test
    void readsFromTheBuffersPositionWithoutMovingIt() {
        ByteBuffer before = batch(0, 3, 1);
        ByteBuffer all = concat(before, batch(3, 2, 1));
        all.position(before.remaining());
        SourceBatches s = SourceBatches.split(all, 0, 1);
        assertNull(s.corruption());
        assertEquals(1, s.runs().size());
        assertEquals(3, s.runs().get(0).baseOffset());
        assertEquals(4, s.runs().get(0).lastOffset());
        assertEquals(0, s.partialBytes());
        assertEquals(0, s.runs().get(0).records().position());
        assertEquals(all.remaining(), s.runs().get(0).records().remaining());
        assertEquals(before.remaining(), all.position(), "the caller's position is not moved");
    }

    @Test
    void skipsBatchesBeforeTheFetchOffset() {
        SourceBatches s = SourceBatches.split(concat(batch(0, 3, 1), batch(3, 3, 1)), 3, 1);
        assertEquals(1, s.runs().size());
        assertEquals(3, s.runs().get(0).baseOffset());
        assertEquals(batch(3, 3, 1).remaining(), s.runs().get(0).records().remaining());
    }

    @Test
    void emptyRecords() {
        SourceBatches s = SourceBatches.split(ByteBuffer.allocate(0), 0, -1);
        assertTrue(s.runs().isEmpty());
        assertNull(s.corruption());
        assertNull(s.corruptionError());
        assertEquals(0, s.partialBytes());
    }
}
