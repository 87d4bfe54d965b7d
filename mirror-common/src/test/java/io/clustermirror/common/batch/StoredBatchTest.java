package io.clustermirror.common.batch;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Our reading of the batch format against Kafka's own classes (the build's Kafka, test scope only): every header field
 * and every record of batches Kafka wrote, in every codec, idempotent, transactional and control.
 */
class StoredBatchTest {
    private static final Random RANDOM = new Random(42);

    private static SimpleRecord[] someRecords(int count) {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            byte[] value = new byte[RANDOM.nextInt(300)];
            RANDOM.nextBytes(value);
            byte[] key = i % 3 == 0 ? null : ("key-" + i).getBytes(StandardCharsets.UTF_8);
            Header[] headers = i % 2 == 0 ? new Header[0]
                : new Header[] {new RecordHeader("h" + i, ("v" + i).getBytes(StandardCharsets.UTF_8)), new RecordHeader("n", null)};
            records[i] = new SimpleRecord(1_700_000_000_000L + i * 7L, key, i % 5 == 4 ? null : value, headers);
        }
        return records;
    }

    private static Compression codec(BatchCompression compression) {
        return switch (compression) {
            case NONE -> Compression.NONE;
            case GZIP -> Compression.gzip().build();
            case SNAPPY -> Compression.snappy().build();
            case LZ4 -> Compression.lz4().build();
            case ZSTD -> Compression.zstd().build();
        };
    }

    private static List<MutableRecordBatch> kafkaBatches(MemoryRecords records) {
        List<MutableRecordBatch> batches = new ArrayList<>();
        records.batches().forEach(batches::add);
        return batches;
    }

    @ParameterizedTest
    @EnumSource(BatchCompression.class)
    void readsEveryHeaderFieldAndRecordKafkaWrote(BatchCompression compression) {
        MemoryRecords records = MemoryRecords.withIdempotentRecords(RecordBatch.MAGIC_VALUE_V2, 1000L, codec(compression),
            4242L, (short) 3, 17, 9, someRecords(50));
        MutableRecordBatch kafka = kafkaBatches(records).get(0);
        StoredBatch ours = StoredBatch.of(records.buffer());

        assertEquals(kafka.sizeInBytes(), ours.sizeInBytes());
        assertEquals(kafka.baseOffset(), ours.baseOffset());
        assertEquals(kafka.lastOffset(), ours.lastOffset());
        assertEquals(kafka.nextOffset(), ours.nextOffset());
        assertEquals(kafka.partitionLeaderEpoch(), ours.partitionLeaderEpoch());
        assertEquals(kafka.magic(), ours.magic());
        assertEquals(kafka.checksum(), ours.checksum());
        assertTrue(ours.isValid());
        assertEquals(kafka.compressionType().id, ours.compression().id());
        assertEquals(compression, ours.compression());
        assertEquals(kafka.timestampType() == TimestampType.LOG_APPEND_TIME, ours.isLogAppendTime());
        assertEquals(kafka.isTransactional(), ours.isTransactional());
        assertEquals(kafka.isControlBatch(), ours.isControlBatch());
        assertEquals(((DefaultRecordBatch) kafka).baseTimestamp(), ours.baseTimestamp());
        assertEquals(kafka.maxTimestamp(), ours.maxTimestamp());
        assertEquals(kafka.producerId(), ours.producerId());
        assertEquals(kafka.producerEpoch(), ours.producerEpoch());
        assertEquals(kafka.baseSequence(), ours.baseSequence());
        assertEquals(kafka.countOrNull(), ours.recordCount());
        assertSameRecords(kafka, ours.records());
    }

    @Test
    void readsTransactionalBatchesAndTheirMarkers() {
        MemoryRecords data = MemoryRecords.withTransactionalRecords(0L, Compression.lz4().build(), 77L, (short) 2, 0, 5,
            someRecords(3));
        StoredBatch batch = StoredBatch.of(data.buffer());
        assertTrue(batch.isTransactional());
        assertFalse(batch.isControlBatch());
        assertEquals(77L, batch.producerId());

        MemoryRecords marker = MemoryRecords.withEndTransactionMarker(3L, 1L, 5, 77L, (short) 2,
            new EndTransactionMarker(ControlRecordType.COMMIT, 11));
        StoredBatch control = StoredBatch.of(marker.buffer());
        assertTrue(control.isControlBatch());
        assertTrue(control.isTransactional());
        StoredRecord record = control.records().get(0);
        assertEquals(3L, record.offset());
        assertEquals(ControlRecordType.COMMIT.type(), record.key().getShort(2));
        assertSameRecords(kafkaBatches(marker).get(0), control.records());
    }

    @Test
    void givesEveryRecordOfALogAppendTimeBatchTheBatchTimestamp() {
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        var builder = MemoryRecords.builder(buffer, Compression.gzip().build(), TimestampType.LOG_APPEND_TIME, 10L);
        for (SimpleRecord r : someRecords(4)) {
            builder.append(r);
        }
        MemoryRecords records = builder.build();
        StoredBatch batch = StoredBatch.of(records.buffer());
        assertTrue(batch.isLogAppendTime());
        assertSameRecords(kafkaBatches(records).get(0), batch.records());
        assertTrue(batch.records().stream().allMatch(r -> r.timestamp() == batch.maxTimestamp()));
    }

    @Test
    void namesACorruptedBatchInvalidAndKeepsReadingItsHeader() {
        MemoryRecords records = MemoryRecords.withRecords(5L, Compression.NONE, someRecords(2));
        ByteBuffer bytes = records.buffer();
        bytes.put(bytes.limit() - 1, (byte) (bytes.get(bytes.limit() - 1) ^ 1));
        StoredBatch batch = StoredBatch.of(bytes);
        assertFalse(batch.isValid());
        assertFalse(kafkaBatches(records).get(0).isValid());
        assertEquals(5L, batch.baseOffset());
        assertEquals(kafkaChecksumOf(bytes), batch.computeChecksum());
    }

    @Test
    void stampsTheLeaderEpochOutsideTheCrc() {
        MemoryRecords records = MemoryRecords.withRecords(0L, Compression.zstd().build(), someRecords(3));
        StoredBatch batch = StoredBatch.of(records.buffer());
        batch.setPartitionLeaderEpoch(31);
        assertEquals(31, batch.partitionLeaderEpoch());
        assertEquals(31, kafkaBatches(records).get(0).partitionLeaderEpoch());
        assertTrue(batch.isValid());
    }

    @Test
    void splitsABufferIntoItsWholeBatchesAndLeavesOutAPartialOne() {
        MemoryRecords first = MemoryRecords.withRecords(0L, Compression.NONE, someRecords(2));
        MemoryRecords second = MemoryRecords.withRecords(2L, Compression.snappy().build(), someRecords(3));
        ByteBuffer both = ByteBuffer.allocate(first.sizeInBytes() + second.sizeInBytes() - 5);
        both.put(first.buffer()).put(second.buffer().limit(second.sizeInBytes() - 5)).flip();

        List<StoredBatch> batches = StoredBatches.of(both);
        assertEquals(1, batches.size());
        assertEquals(0, both.position());
        assertEquals(List.of(), StoredBatches.of(ByteBuffer.allocate(11)));
    }

    @Test
    void refusesBytesThatAreNoBatch() {
        ByteBuffer garbage = ByteBuffer.allocate(64);
        garbage.putInt(8, 3); // a length below any entry's
        CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> StoredBatches.of(garbage));
        assertTrue(e.getMessage().contains("less than the minimum record overhead"), e.getMessage());
    }

    @Test
    void readsALegacyEntryOnlyToNameIt() {
        MemoryRecords legacy = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V1, 40L, Compression.NONE,
            TimestampType.CREATE_TIME, someRecords(1));
        StoredBatch batch = StoredBatch.of(legacy.buffer());
        assertEquals(1, batch.magic());
        assertFalse(batch.isV2());
        assertEquals(40L, batch.lastOffset());
        assertTrue(batch.isValid());
        assertEquals(StoredBatch.NO_PRODUCER_ID, batch.producerId());
        IllegalStateException e = assertThrows(IllegalStateException.class, batch::records);
        assertTrue(e.getMessage().contains("message format v1"), e.getMessage());
    }

    @Test
    void everyCodecIdKafkaKnowsMapsToOurs() {
        for (CompressionType type : CompressionType.values()) {
            assertEquals(type.name(), BatchCompression.forId(type.id).name());
        }
        assertThrows(IllegalArgumentException.class, () -> BatchCompression.forId(5));
    }

    /** What Kafka's CRC-32C gives for the bytes a v2 batch's CRC covers. */
    private static long kafkaChecksumOf(ByteBuffer batch) {
        return org.apache.kafka.common.utils.Crc32C.compute(batch, StoredBatch.ATTRIBUTES_OFFSET,
            batch.remaining() - StoredBatch.ATTRIBUTES_OFFSET);
    }

    private static void assertSameRecords(RecordBatch kafka, List<StoredRecord> ours) {
        List<Record> theirs = new ArrayList<>();
        kafka.forEach(theirs::add);
        assertEquals(theirs.size(), ours.size());
        for (int i = 0; i < theirs.size(); i++) {
            Record k = theirs.get(i);
            StoredRecord o = ours.get(i);
            assertEquals(k.offset(), o.offset());
            assertEquals(k.timestamp(), o.timestamp());
            assertEquals(k.key(), o.key());
            if (k.key() == null) {
                assertNull(o.key());
            }
            assertEquals(k.value(), o.value());
            assertEquals(k.headers().length, o.headers().size());
            for (int h = 0; h < k.headers().length; h++) {
                assertEquals(k.headers()[h].key(), o.headers().get(h).key());
                assertArrayEquals(k.headers()[h].value(), o.headers().get(h).value());
            }
        }
    }
}
