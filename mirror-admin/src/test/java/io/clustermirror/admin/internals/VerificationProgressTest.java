package io.clustermirror.admin.internals;

import io.clustermirror.admin.OperationProgress;
import io.clustermirror.common.batch.StoredBatch;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class VerificationProgressTest {
    private final List<OperationProgress> reports = new ArrayList<>();

    /** A batch of {@code records} records from {@code baseOffset}. */
    private static StoredBatch batch(long baseOffset, int records) {
        SimpleRecord[] values = new SimpleRecord[records];
        for (int i = 0; i < records; i++) {
            values[i] = new SimpleRecord(new byte[] {(byte) i});
        }
        return StoredBatch.of(MemoryRecords.withRecords(baseOffset, Compression.NONE, values).buffer());
    }

    @Test
    void eachBatchAndEachPartitionDoneBringsTheOffsetsToCompareDown() {
        VerificationProgress progress = new VerificationProgress(List.of(30L, 50L), reports::add);
        Iterator<StoredBatch> batches = progress.counting(List.of(batch(100, 10), batch(110, 10)).iterator(), 100);
        batches.next();
        batches.next();
        progress.partitionDone();
        progress.counting(List.of(batch(0, 20)).iterator(), 0).next();
        progress.partitionDone();
        assertEquals(List.of(new OperationProgress(0, 2, 80), new OperationProgress(0, 2, 70), new OperationProgress(0, 2, 60),
            new OperationProgress(1, 2, 50), new OperationProgress(1, 2, 30), new OperationProgress(2, 2, 0)), reports,
            "a partition done counts for nothing more, even short of its estimate");
    }

    @Test
    void aPartitionLongerThanItsEstimateCountsForNothingLeft() {
        VerificationProgress progress = new VerificationProgress(List.of(10L), reports::add);
        Iterator<StoredBatch> batches = progress.counting(List.of(batch(95, 10), batch(105, 20)).iterator(), 100);
        batches.next();
        batches.next();
        assertEquals(List.of(new OperationProgress(0, 1, 10), new OperationProgress(0, 1, 5), new OperationProgress(0, 1, 0)),
            reports);
    }

    @Test
    void nothingToCheckIsDoneAtOnce() {
        new VerificationProgress(List.of(), reports::add);
        assertEquals(List.of(new OperationProgress(0, 0, 0)), reports);
    }
}
