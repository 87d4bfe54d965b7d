package io.clustermirror.broker.partition;

import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The state writer's promise: the latest record of a partition eventually lands under its epoch's log key, an older one
 * never lands after a newer one, and the keys it supersedes are tombstoned only after it landed. The producer here is
 * Kafka's {@link MockProducer}, which fails sends the way an idempotent producer does when a {@code __mirror_state}
 * partition is unavailable long enough for its batches to expire.
 */
class StateWriterTest {
    private static final long BACKOFF_MS = 20;
    private final MockProducer<byte[], byte[]> producer =
        new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
    private final StateWriter writer = new StateWriter(producer, 1, BACKOFF_MS);

    @AfterEach
    void close() {
        writer.close();
    }

    private static PartitionStateRecord record(int partition, PartitionState state, long lastMirroredOffset) {
        return new PartitionStateRecord("m", "t", partition, state, 4, 1, "id", lastMirroredOffset, 2, List.of(), 100, 100, null,
            -1, -1, -1, 1L);
    }

    private List<PartitionStateRecord> sent() {
        return producer.history().stream().map(r -> RecordCodec.decodeState(r.value())).toList();
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        TestUtils.waitFor(condition::getAsBoolean, Duration.ofSeconds(10), () -> what);
    }

    @Test
    void aFailedRecordIsSentAgainUntilItLands() throws Exception {
        PartitionStateRecord mirroring = record(0, PartitionState.MIRRORING, 99);
        writer.write(mirroring, List.of());
        assertTrue(producer.errorNext(new OutOfOrderSequenceException("the batch ahead of it expired")));
        await(() -> producer.history().size() == 2, "the record to be sent again");
        assertTrue(producer.errorNext(new org.apache.kafka.common.errors.TimeoutException("expired")));
        await(() -> producer.history().size() == 3, "the record to be sent a third time");
        assertTrue(producer.completeNext());
        assertEquals(List.of(mirroring, mirroring, mirroring), sent());
    }

    @Test
    void aFailedRecordIsNotSentAgainOnceANewerOneOfItsKeyWasWritten() throws Exception {
        PartitionStateRecord older = record(0, PartitionState.MIRRORING, 99);
        PartitionStateRecord newer = record(0, PartitionState.MIRRORING, 150);
        PartitionStateRecord otherKey = record(1, PartitionState.PAUSED, 7);
        writer.write(older, List.of());
        writer.write(otherKey, List.of());
        writer.write(newer, List.of());
        assertTrue(producer.errorNext(new OutOfOrderSequenceException("failed")));  // older
        assertTrue(producer.errorNext(new OutOfOrderSequenceException("failed")));  // otherKey
        await(() -> producer.history().size() == 4, "the other key's record to be sent again");
        assertTrue(producer.completeNext()); // newer
        assertTrue(producer.completeNext()); // otherKey, again
        assertEquals(List.of(older, otherKey, newer, otherKey), sent(), "the older record of key 0 is never sent after the newer");
    }

    /** A stop waits on this before it truncates: the future means "durable", through the record or a later one. */
    @Test
    void aWrittenRecordsFutureCompletesOnceItOrALaterRecordOfItsPartitionLanded() throws Exception {
        CompletableFuture<Void> older = writer.write(record(0, PartitionState.MIRRORING, 99), List.of());
        CompletableFuture<Void> otherKey = writer.write(record(1, PartitionState.PAUSED, 7), List.of());
        CompletableFuture<Void> newer = writer.write(record(0, PartitionState.STOPPING, 150), List.of());
        assertTrue(producer.errorNext(new OutOfOrderSequenceException("failed"))); // older: not sent again, newer is written
        assertFalse(older.isDone(), "a failed record is not durable");
        assertTrue(producer.completeNext()); // otherKey
        assertTrue(otherKey.isDone() && !otherKey.isCompletedExceptionally());
        assertFalse(older.isDone(), "another partition's record says nothing of this one");
        assertTrue(producer.completeNext()); // newer
        assertTrue(newer.isDone() && older.isDone() && !older.isCompletedExceptionally(), "the newer record carries the older's state");
    }

    @Test
    void theFuturesOfRecordsNotLandedFailWhenTheWriterCloses() {
        CompletableFuture<Void> pending = writer.write(record(0, PartitionState.STOPPING, 99), List.of());
        writer.close();
        assertTrue(pending.isCompletedExceptionally(), "a stop waiting on it fails instead of waiting for ever");
        assertTrue(writer.write(record(0, PartitionState.STOPPING, 99), List.of()).isCompletedExceptionally());
    }

    @Test
    void recordsLandUnderTheirEpochsLogKeyAndSupersededKeysAreTombstonedOnlyAfterward() throws Exception {
        PartitionStateRecord record = record(0, PartitionState.MIRRORING, 99);
        writer.write(record, List.of("m/t/0@2", "m/t/0@3"));
        assertEquals(List.of("m/t/0@4"), producer.history().stream().map(r -> RecordCodec.decodeKey(r.key())).toList());
        assertTrue(producer.completeNext());
        await(() -> producer.history().size() == 3, "the superseded keys to be tombstoned");
        assertEquals(List.of("m/t/0@2", "m/t/0@3"), producer.history().subList(1, 3).stream()
            .map(r -> RecordCodec.decodeKey(r.key())).toList());
        assertTrue(producer.history().subList(1, 3).stream().allMatch(r -> r.value() == null));
    }

    @Test
    void nothingIsTombstonedWhileTheSupersedingRecordHasNotLanded() throws Exception {
        writer.write(record(0, PartitionState.MIRRORING, 99), List.of("m/t/0@2"));
        assertTrue(producer.errorNext(new OutOfOrderSequenceException("failed")));
        await(() -> producer.history().size() == 2, "the record to be sent again");
        assertTrue(producer.history().stream().allMatch(r -> r.value() != null), "no tombstone before the record landed");
    }
}
