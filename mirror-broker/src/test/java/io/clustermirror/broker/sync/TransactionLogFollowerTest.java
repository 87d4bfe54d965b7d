package io.clustermirror.broker.sync;

import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SourceTransactionRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogValue;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TransactionLogFollowerTest {
    private static final TopicPartition LOG = new TopicPartition(TransactionLogFollower.SOURCE_LOG, 0);
    private final MockTime time = new MockTime(0, 10_000_000L, 0);
    private final MockProducer<byte[], byte[]> producer = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
    private final ProblemLog problems = new ProblemLog("dr");
    private final List<MockConsumer<byte[], byte[]>> made = new ArrayList<>();
    /** Whether the source has a transaction log: the consumers made from now on see it. */
    private boolean logExists;
    private final TransactionLogFollower follower = new TransactionLogFollower("dr", () -> {
        MockConsumer<byte[], byte[]> c = new MockConsumer<>("earliest") {
            /** The log holds nothing older than the lookback: every partition from its first offset. */
            @Override
            public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(Map<TopicPartition, Long> times, java.time.Duration timeout) {
                Map<TopicPartition, OffsetAndTimestamp> offsets = new java.util.HashMap<>();
                times.forEach((tp, ms) -> offsets.put(tp, new OffsetAndTimestamp(0L, ms)));
                return offsets;
            }
        };
        if (logExists) {
            sourceLog(c);
        }
        made.add(c);
        return c;
    }, producer, () -> Set.of("orders", "payments"), problems, time);

    private static byte[] prepared(int status, String... partitions) {
        List<TransactionLogValue.PartitionsSchema> schemas = new ArrayList<>();
        for (String p : partitions) {
            String[] parts = p.split(":");
            schemas.add(new TransactionLogValue.PartitionsSchema().setTopic(parts[0]).setPartitionIds(List.of(Integer.parseInt(parts[1]))));
        }
        TransactionLogValue value = new TransactionLogValue().setProducerId(42L).setProducerEpoch((short) 5).setTransactionTimeoutMs(60_000)
            .setTransactionStatus((byte) status).setTransactionLastUpdateTimestampMs(2_000L).setTransactionStartTimestampMs(1_000L)
            .setClientTransactionVersion((short) 2).setTransactionPartitions(schemas);
        var buffer = MessageUtil.toVersionPrefixedByteBuffer((short) 1, value);
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }

    /** The source's log as a consumer sees it: one partition, from offset 0. */
    private static void sourceLog(MockConsumer<byte[], byte[]> c) {
        c.updatePartitions(LOG.topic(), List.of(new PartitionInfo(LOG.topic(), 0, Node.noNode(), new Node[0], new Node[0])));
        c.updateBeginningOffsets(Map.of(LOG, 0L));
        c.updateEndOffsets(Map.of(LOG, 0L));
    }

    @Test
    void keepsThePreparedTransactionsOverSeveralOfTheMirrorsPartitionsOnly() {
        assertEquals(true, follower.step(), "no log yet: nothing assigned, and nothing prepared that is not known");
        assertTrue(made.get(0).closed());
        logExists = true;
        follower.step();
        assertEquals(2, made.size(), "a log that did not exist is looked for again at the next step");
        MockConsumer<byte[], byte[]> consumer = made.get(1);
        consumer.addRecord(new ConsumerRecord<>(LOG.topic(), 0, 0, null, prepared(2, "orders:0", "payments:1", "audit:0")));
        consumer.addRecord(new ConsumerRecord<>(LOG.topic(), 0, 1, null, prepared(2, "orders:0", "audit:0")));
        consumer.addRecord(new ConsumerRecord<>(LOG.topic(), 0, 2, null, prepared(1, "orders:0", "orders:1")));
        consumer.addRecord(new ConsumerRecord<>(LOG.topic(), 0, 3, null, new byte[] {0, 1, 2}));
        consumer.addRecord(new ConsumerRecord<>(LOG.topic(), 0, 4, null, prepared(3, "orders:0", "orders:1")));
        consumer.addRecord(new ConsumerRecord<>(LOG.topic(), 0, 5, null, prepared(2, "orders:2", "__consumer_offsets:7", "audit:0")));
        consumer.addRecord(new ConsumerRecord<>(LOG.topic(), 0, 6, null, prepared(2, "audit:0", "__consumer_offsets:7")));
        consumer.updateEndOffsets(Map.of(LOG, 7L));
        assertEquals(true, follower.step(), "read up to the end offsets read at the step's start");

        List<ProducerRecord<byte[], byte[]>> kept = producer.history();
        assertEquals(3, kept.size(), "the commit over orders-0 and payments-1, the abort over two of orders, and the commit over one "
            + "of orders that also committed a group's offsets");
        assertEquals(InternalTopics.TRANSACTIONS, kept.get(0).topic());
        assertEquals("dr", new String(kept.get(0).key(), StandardCharsets.UTF_8));
        SourceTransactionRecord first = RecordCodec.decodeTransaction(kept.get(0).value());
        assertEquals(List.of(new TopicPartition("orders", 0), new TopicPartition("payments", 1)), first.transaction().partitions(),
            "only the mirror's partitions");
        assertEquals(4, first.transaction().dataEpoch());
        assertEquals(false, RecordCodec.decodeTransaction(kept.get(1).value()).commit());
        assertEquals(List.of(new TopicPartition("orders", 2), new TopicPartition("__consumer_offsets", 7)),
            RecordCodec.decodeTransaction(kept.get(2).value()).transaction().partitions(), "the offsets partition is kept with it");
        assertEquals(Map.of(), problems.current(), "a value that does not decode is skipped, with a note");
        consumer.updateEndOffsets(Map.of(LOG, 9L));
        assertEquals(false, follower.step(), "records up to offset 9 exist that the step could not read");
    }

    @Test
    void aRefusedReadIsReportedAndTriedAgainWithANewConsumer() {
        logExists = true;
        follower.step();
        MockConsumer<byte[], byte[]> consumer = made.get(0);
        consumer.setPollException(new TopicAuthorizationException(Set.of(LOG.topic())));
        follower.step();
        assertEquals(1, problems.current().size());
        assertTrue(problems.current().values().iterator().next().contains("grant the mirror's source principal READ and DESCRIBE"),
            problems.current().toString());
        assertTrue(consumer.closed(), "Kafka's consumer can keep such an error: a new one next time");
        follower.step();
        assertEquals(1, made.size(), "not before the retry delay");
        time.sleep(TransactionLogFollower.RETRY_MS);
        follower.step();
        assertEquals(2, made.size());
        assertEquals(Map.of(), problems.current(), "reading again resolves it");
    }
}
