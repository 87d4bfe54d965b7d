package io.clustermirror.common.compat;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogValue;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Values of {@code __transaction_state} as Kafka's own generated writer encodes them, read back. */
class SourceTransactionTest {
    /** A value with the tagged fields of version 1 set when {@code clientVersion} is above 0 (version 0 has none). */
    private static TransactionLogValue value(int status, int clientVersion) {
        TransactionLogValue value = new TransactionLogValue().setProducerId(4242L).setProducerEpoch((short) 7).setTransactionTimeoutMs(60_000)
            .setTransactionStatus((byte) status).setTransactionLastUpdateTimestampMs(2_000L).setTransactionStartTimestampMs(1_000L);
        if (clientVersion > 0) {
            value.setClientTransactionVersion((short) clientVersion).setPreviousProducerId(4000L).setNextProducerId(4300L);
        }
        return value.setTransactionPartitions(List.of(
                new TransactionLogValue.PartitionsSchema().setTopic("orders").setPartitionIds(List.of(0, 3)),
                new TransactionLogValue.PartitionsSchema().setTopic("payments").setPartitionIds(List.of(1))));
    }

    private static ByteBuffer bytes(int version, TransactionLogValue value) {
        return MessageUtil.toVersionPrefixedByteBuffer((short) version, value);
    }

    private static final List<TopicPartition> PARTITIONS = List.of(new TopicPartition("orders", 0), new TopicPartition("orders", 3),
        new TopicPartition("payments", 1));

    @Test
    void readsAPreparedCommitOfBothVersions() {
        assertEquals(Optional.of(new SourceTransaction(4242L, (short) 7, false, true, 1_000L, 2_000L, PARTITIONS)),
            SourceTransaction.prepared(bytes(0, value(SourceTransaction.PREPARE_COMMIT, 0))), "version 0 knows no client version");
        assertEquals(Optional.of(new SourceTransaction(4242L, (short) 7, true, true, 1_000L, 2_000L, PARTITIONS)),
            SourceTransaction.prepared(bytes(1, value(SourceTransaction.PREPARE_COMMIT, 2))), "version 1 with transactions v2");
        assertEquals(Optional.of(new SourceTransaction(4242L, (short) 7, false, false, 1_000L, 2_000L, PARTITIONS)),
            SourceTransaction.prepared(bytes(1, value(SourceTransaction.PREPARE_ABORT, 1))));
        assertEquals(6, SourceTransaction.prepared(bytes(1, value(SourceTransaction.PREPARE_COMMIT, 2))).orElseThrow().dataEpoch(),
            "the records of a version 2 transaction carry the epoch before the bump");
    }

    @Test
    void otherStatesAndUnknownVersionsAreNotPreparedTransactions() {
        for (int status : new int[] {0, 1, 4, 5, 6, 7}) {
            assertEquals(Optional.empty(), SourceTransaction.prepared(bytes(1, value(status, 2))), "status " + status);
        }
        ByteBuffer future = bytes(1, value(SourceTransaction.PREPARE_COMMIT, 2));
        future.putShort(0, (short) 9);
        assertEquals(Optional.empty(), SourceTransaction.prepared(future), "a later version: not ours to guess");
        assertEquals(Optional.empty(), SourceTransaction.prepared(null), "a tombstone");
    }

    @Test
    void aTruncatedValueIsRefusedNamingIt() {
        ByteBuffer whole = bytes(1, value(SourceTransaction.PREPARE_COMMIT, 2));
        ByteBuffer cut = whole.duplicate().limit(whole.limit() - 12);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SourceTransaction.prepared(cut));
        assertEquals(true, e.getMessage().contains("__transaction_state value that does not decode"), e.getMessage());
    }
}
