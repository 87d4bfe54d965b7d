package io.clustermirror.common.barrier;

import io.clustermirror.common.batch.StoredBatch;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Crc32C;
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

    /** Kafka's reading of the barrier: what a broker's log, its followers and consumers see. */
    private static MutableRecordBatch kafka(StoredBatch batch) {
        return onlyBatch(MemoryRecords.readableRecords(batch.bytes()));
    }

    private static StoredBatch ours(MemoryRecords records) {
        return StoredBatch.of(records.buffer());
    }

    private static MutableRecordBatch onlyBatch(MemoryRecords records) {
        List<MutableRecordBatch> batches = new ArrayList<>();
        records.batches().forEach(batches::add);
        assertEquals(1, batches.size());
        return batches.get(0);
    }

    @Test
    void buildsAValidNonTransactionalControlBatchWithoutProducer() {
        MutableRecordBatch batch = kafka(BarrierBatch.build(1234L, 17, CLUSTER, 99L));
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
        StoredBatch barrier = BarrierBatch.build(0L, 0, CLUSTER, 1L);
        MutableRecordBatch batch = kafka(barrier);
        Record record = batch.iterator().next();
        ByteBuffer key = record.key();
        assertEquals(4, key.remaining());
        assertEquals(0, key.getShort(0));
        assertEquals(BarrierBatch.CONTROL_TYPE, key.getShort(2));
        assertEquals(7, ControlRecordType.parseTypeId(record.key()));
        assertEquals(ControlRecordType.UNKNOWN, ControlRecordType.parse(record.key()));
        assertEquals(MirrorPidResetRecord.of(CLUSTER), MirrorPidResetRecord.decode(record.value()));
        assertTrue(BarrierBatch.isBarrier(barrier));
        assertEquals(Optional.of(CLUSTER), BarrierBatch.sourceClusterId(barrier));
    }

    @Test
    void longSourceIdsMoveTheKeyAndStillPatchTheType() {
        String id = "c".repeat(300); // the record length needs a multi-byte varint
        StoredBatch barrier = BarrierBatch.build(5L, 1, id, 1L);
        kafka(barrier).ensureValid();
        assertEquals(Optional.of(id), BarrierBatch.sourceClusterId(barrier));
    }

    @Test
    void leaderEpochCanBeStampedWithoutBreakingTheCrc() {
        StoredBatch barrier = BarrierBatch.build(10L, 0, CLUSTER, 1L);
        long crc = barrier.checksum();
        barrier.setPartitionLeaderEpoch(42);
        MutableRecordBatch reread = kafka(barrier);
        reread.ensureValid();
        assertEquals(crc, reread.checksum());
        assertEquals(42, reread.partitionLeaderEpoch());
        assertTrue(BarrierBatch.isBarrier(barrier));
    }

    @Test
    void otherBatchesAreNotBarriers() {
        MemoryRecords commit = MemoryRecords.withEndTransactionMarker(0L, 1L, 0, 7L, (short) 0,
            new EndTransactionMarker(ControlRecordType.COMMIT, 0));
        MemoryRecords data = MemoryRecords.withRecords(0L, Compression.NONE, new SimpleRecord(1L, "k".getBytes(), "v".getBytes()));
        MemoryRecords legacy = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V1, 0L, Compression.NONE,
            TimestampType.CREATE_TIME, new SimpleRecord(1L, "k".getBytes(), "v".getBytes()));
        for (MemoryRecords records : List.of(commit, data, legacy)) {
            StoredBatch batch = ours(records);
            assertFalse(BarrierBatch.isBarrier(batch));
            assertEquals(Optional.empty(), BarrierBatch.sourceClusterId(batch));
        }
    }

    /**
     * The barrier is byte for byte what Kafka's own batch builder writes for a COMMIT control record carrying the
     * barrier's value, with the control type in the key then patched to 7 and the CRC recomputed: the shape every
     * Kafka release's log, followers and consumers were verified to accept.
     */
    @Test
    void isTheBatchKafkasBuilderWritesWithTheTypePatched() {
        for (String id : List.of(CLUSTER, "c".repeat(300))) {
            ByteBuffer value = MirrorPidResetRecord.of(id).encode();
            MemoryRecordsBuilder builder = new MemoryRecordsBuilder(ByteBuffer.allocate(1024), RecordBatch.MAGIC_VALUE_V2,
                Compression.NONE, TimestampType.CREATE_TIME, 77L, RecordBatch.NO_TIMESTAMP, RecordBatch.NO_PRODUCER_ID,
                RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false, true, 3, Integer.MAX_VALUE);
            builder.appendControlRecord(123L, ControlRecordType.COMMIT, value);
            ByteBuffer expected = builder.build().buffer();
            int typePosition = StoredBatch.RECORDS_OFFSET + (id.length() > 100 ? 2 : 1) + 1 + 1 + 1 + 1 + Short.BYTES;
            expected.putShort(typePosition, BarrierBatch.CONTROL_TYPE);
            expected.putInt(StoredBatch.CRC_OFFSET, (int) Crc32C.compute(expected, StoredBatch.ATTRIBUTES_OFFSET,
                expected.remaining() - StoredBatch.ATTRIBUTES_OFFSET));

            assertEquals(expected, BarrierBatch.build(77L, 3, id, 123L).bytes(), "barrier of a " + id.length() + "-byte id");
        }
    }
}
