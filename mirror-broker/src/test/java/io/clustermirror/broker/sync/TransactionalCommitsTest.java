package io.clustermirror.broker.sync;

import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.records.SourceOffsetCommitRecord;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.coordinator.group.generated.GroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.GroupMetadataValue;
import org.apache.kafka.coordinator.group.generated.OffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitValue;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Batches of a source's {@code __consumer_offsets} partition as Kafka's own writers make them, read in log order. */
class TransactionalCommitsTest {
    private final TransactionalCommits commits = new TransactionalCommits("dr", 12);
    private final List<String> undecodable = new ArrayList<>();
    private long nextOffset;

    private static SimpleRecord offsetCommit(String group, String topic, int partition, long offset) {
        return new SimpleRecord(1_000L, bytes(MessageUtil.toCoordinatorTypePrefixedByteBuffer(
                new OffsetCommitKey().setGroup(group).setTopic(topic).setPartition(partition))),
            bytes(MessageUtil.toVersionPrefixedByteBuffer((short) 3, new OffsetCommitValue().setOffset(offset).setMetadata("")
                .setCommitTimestamp(1_000L))));
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    private StoredBatch transactional(long producerId, int epoch, SimpleRecord... records) {
        StoredBatch b = StoredBatch.of(MemoryRecords.withTransactionalRecords(nextOffset, Compression.NONE, producerId, (short) epoch, 0,
            RecordBatch.NO_PARTITION_LEADER_EPOCH, records).buffer());
        nextOffset = b.nextOffset();
        return b;
    }

    private StoredBatch plain(SimpleRecord... records) {
        StoredBatch b = StoredBatch.of(MemoryRecords.withRecords(nextOffset, Compression.NONE, records).buffer());
        nextOffset = b.nextOffset();
        return b;
    }

    private StoredBatch marker(long producerId, int epoch, boolean commit) {
        StoredBatch b = StoredBatch.of(MemoryRecords.withEndTransactionMarker(nextOffset, 2_000L, RecordBatch.NO_PARTITION_LEADER_EPOCH,
            producerId, (short) epoch, new EndTransactionMarker(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, 0)).buffer());
        nextOffset = b.nextOffset();
        return b;
    }

    private List<SourceOffsetCommitRecord> read(StoredBatch... batches) {
        List<SourceOffsetCommitRecord> out = new ArrayList<>();
        for (StoredBatch b : batches) {
            out.addAll(commits.read(b, c -> c.group().equals("app") && c.topic().equals("orders"),
                (reason, offset) -> undecodable.add(offset + ": " + reason)));
        }
        return out;
    }

    @Test
    void keepsTheCommitsOfTransactionsThatCommitWithTheirProducerAndMarker() {
        List<SourceOffsetCommitRecord> kept = read(
            transactional(7, 3, offsetCommit("app", "orders", 0, 40), offsetCommit("app", "orders", 1, 9)),
            transactional(8, 1, offsetCommit("app", "orders", 0, 99)),
            marker(8, 2, false),
            plain(offsetCommit("app", "orders", 0, 50)),
            marker(7, 4, true));

        assertEquals(List.of(new SourceOffsetCommitRecord("dr", "app", "orders", 0, 40, 7, (short) 3, 12, 5, 2_000L),
            new SourceOffsetCommitRecord("dr", "app", "orders", 1, 9, 7, (short) 3, 12, 5, 2_000L)), kept,
            "producer 8's aborted commit and the commit outside a transaction are not kept");
    }

    @Test
    void otherGroupsTopicsAndRecordsAreLeftOutAndAMarkerWithoutCommitsYieldsNothing() {
        SimpleRecord groupMetadata = new SimpleRecord(1_000L, bytes(MessageUtil.toCoordinatorTypePrefixedByteBuffer(new GroupMetadataKey()
            .setGroup("app"))), bytes(MessageUtil.toVersionPrefixedByteBuffer((short) 3, new GroupMetadataValue().setProtocolType("consumer")
            .setGeneration(1))));
        assertEquals(List.of(), read(marker(7, 4, true)), "its commits lay before what was read");
        assertEquals(List.of(), read(
            transactional(7, 4, offsetCommit("other", "orders", 0, 1), offsetCommit("app", "payments", 0, 2)),
            plain(groupMetadata),
            marker(7, 5, true)));
    }

    @Test
    void aCommitThatDoesNotDecodeIsSkippedAndNamedWhileTheOthersOfItsTransactionAreKept() {
        byte[] key = bytes(MessageUtil.toCoordinatorTypePrefixedByteBuffer(new OffsetCommitKey().setGroup("app").setTopic("orders")
            .setPartition(0)));
        SimpleRecord truncated = new SimpleRecord(1_000L, Arrays.copyOf(key, key.length - 3), new byte[0]);

        List<SourceOffsetCommitRecord> kept = read(
            transactional(7, 3, offsetCommit("app", "orders", 0, 40), truncated, offsetCommit("app", "orders", 1, 9)),
            marker(7, 4, true));

        assertEquals(List.of("orders-0@40", "orders-1@9"), kept.stream().map(r -> r.topic() + "-" + r.partition() + "@" + r.offset()).toList());
        assertEquals(1, undecodable.size(), undecodable.toString());
        assertTrue(undecodable.get(0).startsWith("1: a __consumer_offsets "), undecodable.toString());
    }
}
