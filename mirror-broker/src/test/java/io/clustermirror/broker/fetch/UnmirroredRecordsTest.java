package io.clustermirror.broker.fetch;

import io.clustermirror.broker.TestBatches;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.records.PartitionStateRecord;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class UnmirroredRecordsTest {
    /** Three records written by producers at 5000..5002, appended by the source leader at 9000. */
    private static StoredBatch logAppendTimeBatch() {
        ByteBuffer buf = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder b = new MemoryRecordsBuilder(buf, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
            TimestampType.LOG_APPEND_TIME, 0L, 9000L, -1L, (short) -1, -1, false, false, 0, buf.capacity());
        for (int i = 0; i < 3; i++) {
            b.appendWithOffset(i, 5000L + i, null, "v".getBytes());
        }
        return StoredBatch.of(TestBatches.bytes(b.build()));
    }

    @Test
    void aBatchsFirstRecordIsAsOldAsItsBaseTimestampOrItsAppendTime() {
        StoredBatch createTime = TestBatches.stored(0, 3, 7L, (short) 0, 0, 1); // records at 1000, 1001, 1002
        assertEquals(1000L, UnmirroredRecords.firstTimestamp(createTime));
        assertEquals(9000L, UnmirroredRecords.firstTimestamp(logAppendTimeBatch()), "every record has the append time");
    }

    @Test
    void afterAnAppendNothingIsMissingAtTheSourceEndElseTheRecordsAfterTheLastAppendedOne() {
        assertEquals(PartitionStateRecord.NOTHING_UNMIRRORED, UnmirroredRecords.afterAppend(10, 10, 1002L));
        assertEquals(1002L, UnmirroredRecords.afterAppend(3, 10, 1002L));
    }

    @Test
    void aProbeFindsTheFirstMissingBatchUnlessTheDestinationIsAtTheSourceEnd() {
        StoredBatch batch = TestBatches.stored(4, 2, 7L, (short) 0, 0, 1);
        assertEquals(1000L, UnmirroredRecords.atProbe(4, 6, Optional.of(batch)));
        assertEquals(PartitionStateRecord.NOTHING_UNMIRRORED, UnmirroredRecords.atProbe(6, 6, Optional.empty()));
        assertEquals(PartitionStateRecord.NOTHING_UNMIRRORED, UnmirroredRecords.atProbe(6, 6, Optional.of(batch)),
            "a source end the destination reached leaves nothing missing");
    }

    @Test
    void theLagIsTheAgeOfTheOldestMissingRecordNeverNegative() {
        assertEquals(0L, UnmirroredRecords.lagMs(PartitionStateRecord.NOTHING_UNMIRRORED, 5_000));
        assertEquals(4_000L, UnmirroredRecords.lagMs(1_000, 5_000));
        assertEquals(0L, UnmirroredRecords.lagMs(6_000, 5_000), "a source clock ahead of this one");
    }
}
