package io.clustermirror.common.barrier;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BarrierBatchTest {
    private static final String CLUSTER = "kQ8mH3rVTuG1xTz0wq8XwA";

    private static MutableRecordBatch onlyBatch(MemoryRecords records) {
        List<MutableRecordBatch> batches = new ArrayList<>();
        records.batches().forEach(batches::add);
        assertEquals(1, batches.size());
        return batches.get(0);
    }

    @Test
    void buildsAValidNonTransactionalControlBatchWithoutProducer() {
        MutableRecordBatch batch = onlyBatch(BarrierBatch.build(1234L, 17, CLUSTER, 99L));
        batch.ensureValid();
        assertEquals(RecordBatch.MAGIC_VALUE_V2, batch.magic());
        assertTrue(batch.isControlBatch());
        assertFalse(batch.isTransactional());
        assertEquals(RecordBatch.NO_PRODUCER_ID, batch.producerId());
        assertEquals(RecordBatch.NO_PRODUCER_EPOCH, batch.producerEpoch());
        assertEquals(RecordBatch.NO_SEQUENCE, batch.baseSequence());
        assertEquals(1234L, batch.baseOffset());
        assertEquals(1234L, batch.lastOffset());
        assertEquals(17, batch.partitionLeaderEpoch());
        assertEquals(99L, batch.maxTimestamp());
        assertEquals(Compression.NONE.type(), batch.compressionType());
        assertEquals(1, batch.countOrNull());
    }

    @Test
    void recordKeyIsVersion0Type7AndValueDecodes() {
        MutableRecordBatch batch = onlyBatch(BarrierBatch.build(0L, 0, CLUSTER, 1L));
        Record record = batch.iterator().next();
        ByteBuffer key = record.key();
        assertEquals(4, key.remaining());
        assertEquals(0, key.getShort(0));
        assertEquals(BarrierBatch.CONTROL_TYPE, key.getShort(2));
        assertEquals(7, ControlRecordType.parseTypeId(record.key()));
        assertEquals(ControlRecordType.UNKNOWN, ControlRecordType.parse(record.key()));
        assertEquals(MirrorPidResetRecord.of(CLUSTER), MirrorPidResetRecord.decode(record.value()));
        assertTrue(BarrierBatch.isBarrier(batch));
        assertEquals(Optional.of(CLUSTER), BarrierBatch.sourceClusterId(batch));
    }

    @Test
    void longSourceIdsMoveTheKeyAndStillPatchTheType() {
        String id = "c".repeat(300); // the record length needs a multi-byte varint
        MutableRecordBatch batch = onlyBatch(BarrierBatch.build(5L, 1, id, 1L));
        batch.ensureValid();
        assertEquals(Optional.of(id), BarrierBatch.sourceClusterId(batch));
    }

    @Test
    void leaderEpochCanBeStampedWithoutBreakingTheCrc() {
        MemoryRecords records = BarrierBatch.build(10L, 0, CLUSTER, 1L);
        MutableRecordBatch batch = onlyBatch(records);
        long crc = batch.checksum();
        batch.setPartitionLeaderEpoch(42);
        batch.ensureValid();
        assertEquals(crc, batch.checksum());
        MutableRecordBatch reread = onlyBatch(MemoryRecords.readableRecords(records.buffer()));
        assertEquals(42, reread.partitionLeaderEpoch());
        reread.ensureValid();
        assertTrue(BarrierBatch.isBarrier(reread));
    }

    @Test
    void otherBatchesAreNotBarriers() {
        MemoryRecords commit = MemoryRecords.withEndTransactionMarker(0L, 1L, 0, 7L, (short) 0,
            new EndTransactionMarker(ControlRecordType.COMMIT, 0));
        MemoryRecords data = MemoryRecords.withRecords(0L, Compression.NONE, new SimpleRecord(1L, "k".getBytes(), "v".getBytes()));
        MemoryRecords legacy = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V1, 0L, Compression.NONE,
            TimestampType.CREATE_TIME, new SimpleRecord(1L, "k".getBytes(), "v".getBytes()));
        for (MemoryRecords records : List.of(commit, data, legacy)) {
            MutableRecordBatch batch = onlyBatch(records);
            assertFalse(BarrierBatch.isBarrier(batch));
            assertEquals(Optional.empty(), BarrierBatch.sourceClusterId(batch));
        }
    }
}
