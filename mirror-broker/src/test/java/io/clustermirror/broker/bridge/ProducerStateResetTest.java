package io.clustermirror.broker.bridge;

import io.clustermirror.broker.fetch.TestClusters;
import io.clustermirror.broker.TestBatches;
import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredRecord;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.clustermirror.broker.TestBatches.concat;
import static io.clustermirror.broker.fetch.TestClusters.leader;
import static io.clustermirror.testsupport.TestUtils.waitFor;
import static io.clustermirror.testsupport.TestUtils.waitForValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The three silent corruptions of producer id collisions on stock Kafka, and the MIRROR_PID_RESET
 * barrier with {@link BrokerHandle#removeProducersBefore} making each safe, on a real 3-broker cluster.
 *
 * <p>Deterministic collisions: each test starts a real client producer, learns its producer id and epoch from a
 * write to a scratch topic, then appends "mirrored" batches with that very producer id to the target partition's
 * leader as the mirror does ({@link BrokerHandle#appendAsLeader}, RAFT_LEADER), and waits until every replica has
 * them before the real producer writes.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ProducerStateResetTest {
    private static final String SOURCE_CLUSTER_ID = "source-cluster-id";
    private static final long WAIT_MS = 30_000;

    private static KafkaClusterTestKit cluster;
    private static List<BrokerHandle> brokers;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestClusters.start("pid-reset", 3, Map.of());
        brokers = TestClusters.handles(cluster);
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Scenario 1 on stock Kafka: a local batch whose epoch and sequence match a mirrored one is "a duplicate". */
    @Test
    void sameEpochAndSequenceSilentlyDropsALocalWrite() throws Exception {
        TopicPartition tp = createTopic("same-epoch");
        try (KafkaProducer<String, String> producer = producer(Optional.empty())) {
            ProducerState local = identity(producer, "same-epoch-scratch", false);
            mirror(tp, dataBatch(0, local.producerId(), (short) local.producerEpoch(), 0, false, "mirrored-0"));

            RecordMetadata sent = producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), "k", "local-0")).get();

            // The broker answers with the mirrored batch's offset and no error: the client believes its record
            // is at offset 0, the log holds the mirrored one there, and the local record is nowhere.
            assertEquals(0, sent.offset());
            assertEquals(List.of("0:mirrored-0"), logValues(tp));
        }
    }

    @Test
    void resetLetsALocalWriteWithTheMirroredEpochAndSequence() throws Exception {
        TopicPartition tp = createTopic("same-epoch-reset");
        try (KafkaProducer<String, String> producer = producer(Optional.empty())) {
            ProducerState local = identity(producer, "same-epoch-reset-scratch", false);
            mirror(tp, dataBatch(0, local.producerId(), (short) local.producerEpoch(), 0, false, "mirrored-0"));
            long barrier = barrierAndReset(tp);

            RecordMetadata sent = producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), "k", "local-0")).get();

            assertEquals(barrier + 1, sent.offset());
            assertEquals(List.of("0:mirrored-0", sent.offset() + ":local-0"), logValues(tp));
            assertEquals(List.of("0:mirrored-0", sent.offset() + ":local-0"), readCommitted(tp));
        }
    }

    /** Scenario 2 on stock Kafka: a mirrored batch with a higher epoch fences the local producer. */
    @Test
    void higherMirroredEpochFencesALocalProducer() throws Exception {
        TopicPartition tp = createTopic("higher-epoch");
        try (KafkaProducer<String, String> producer = producer(Optional.empty())) {
            ProducerState local = identity(producer, "higher-epoch-scratch", false);
            short mirroredEpoch = (short) (local.producerEpoch() + 5);
            mirror(tp, dataBatch(0, local.producerId(), mirroredEpoch, 0, false, "mirrored-0"));

            ExecutionException e = assertThrows(ExecutionException.class,
                () -> producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), "k", "local-0")).get());

            assertInstanceOf(InvalidProducerEpochException.class, e.getCause());
            assertEquals(List.of("0:mirrored-0"), logValues(tp));
        }
    }

    @Test
    void resetUnfencesALocalProducerWithALowerEpoch() throws Exception {
        TopicPartition tp = createTopic("higher-epoch-reset");
        try (KafkaProducer<String, String> producer = producer(Optional.empty())) {
            ProducerState local = identity(producer, "higher-epoch-reset-scratch", false);
            mirror(tp, dataBatch(0, local.producerId(), (short) (local.producerEpoch() + 5), 0, false, "mirrored-0"));
            long barrier = barrierAndReset(tp);

            RecordMetadata sent = producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), "k", "local-0")).get();

            assertEquals(barrier + 1, sent.offset());
            assertEquals(List.of("0:mirrored-0", sent.offset() + ":local-0"), readCommitted(tp));
            for (BrokerHandle b : brokers) {
                waitFor(() -> Short.valueOf((short) local.producerEpoch())
                    .equals(b.producerEpochs(tp).get(local.producerId())), Duration.ofMillis(WAIT_MS),
                    () -> "the local epoch on broker " + b.nodeId() + ": " + b.producerEpochs(tp));
            }
        }
    }

    /**
     * Scenario 3 on stock Kafka: the local producer's first transactional write joins a mirrored open
     * transaction with its producer id (an older epoch), and its commit commits the mirrored records too:
     * read_committed consumers see records the source never committed.
     */
    @Test
    void localCommitCommitsAMirroredOpenTransaction() throws Exception {
        TopicPartition tp = createTopic("txn");
        try (KafkaProducer<String, String> producer = producer(Optional.of("txn-local"))) {
            ProducerState local = identity(producer, "txn-scratch", true);
            mirror(tp, mirroredTransactions(local));
            assertEquals(2, leaderState(tp).lastStableOffset(), "the mirrored transaction at 2 is open");

            producer.beginTransaction();
            RecordMetadata sent = producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), "k", "local-0")).get();
            producer.commitTransaction();

            assertEquals(4, sent.offset());
            waitFor(() -> leaderState(tp).lastStableOffset() == leaderState(tp).logEndOffset(), Duration.ofMillis(WAIT_MS),
                () -> "the local commit marker");
            assertEquals(List.of("0:mirrored-committed", "2:mirrored-open-2", "3:mirrored-open-3", "4:local-0"),
                readCommitted(tp));
        }
    }

    /** Scenario 3 with the stop procedure: truncate to the LSO, barrier, reset on every replica. */
    @Test
    void stopKeepsALocalTransactionApartFromMirroredOnes() throws Exception {
        TopicPartition tp = createTopic("txn-reset");
        try (KafkaProducer<String, String> producer = producer(Optional.of("txn-reset-local"))) {
            ProducerState local = identity(producer, "txn-reset-scratch", true);
            mirror(tp, mirroredTransactions(local));
            LeaderLogState state = leaderState(tp);
            leader(brokers, tp).orElseThrow().truncateLeaderTo(tp, state.leaderEpoch(), state.lastStableOffset());
            waitForReplicasAt(tp, state.lastStableOffset());
            long barrier = barrierAndReset(tp);
            assertEquals(2, barrier);

            producer.beginTransaction();
            RecordMetadata sent = producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), "k", "local-0")).get();
            producer.commitTransaction();

            assertEquals(barrier + 1, sent.offset());
            // commitTransaction returns once the coordinator logged the commit; the marker reaches the partition after.
            waitFor(() -> leaderState(tp).lastStableOffset() == leaderState(tp).logEndOffset(), Duration.ofMillis(WAIT_MS),
                () -> "the local commit marker");
            assertEquals(List.of("0:mirrored-committed", sent.offset() + ":local-0"), readCommitted(tp));
        }
    }

    /**
     * Why the stop truncates to the LSO before the barrier: removing a producer drops its open transaction, the
     * LSO moves past it, and read_committed consumers see records that were never committed.
     */
    @Test
    void resetWithoutTruncationExposesAMirroredOpenTransaction() throws Exception {
        TopicPartition tp = createTopic("txn-no-truncation");
        try (KafkaProducer<String, String> producer = producer(Optional.of("txn-no-truncation-local"))) {
            mirror(tp, mirroredTransactions(identity(producer, "txn-no-truncation-scratch", true)));
            long barrier = barrierAndReset(tp);

            assertEquals(barrier + 1, leaderState(tp).lastStableOffset());
            assertEquals(List.of("0:mirrored-committed", "2:mirrored-open-2", "3:mirrored-open-3"), readCommitted(tp));
        }
    }

    /** Followers are reset too: a follower that becomes leader serves the local producer. */
    @Test
    void resetFollowerServesALocalProducerAfterBecomingLeader() throws Exception {
        TopicPartition tp = createTopic("failover");
        try (KafkaProducer<String, String> producer = producer(Optional.empty())) {
            ProducerState local = identity(producer, "failover-scratch", false);
            mirror(tp, dataBatch(0, local.producerId(), (short) local.producerEpoch(), 0, false, "mirrored-0"));
            long barrier = barrierAndReset(tp);

            BrokerHandle oldLeader = leader(brokers, tp).orElseThrow();
            oldLeader.shutdown();
            oldLeader.awaitShutdown();
            try {
                waitFor(() -> leader(brokers, tp).isPresent(), Duration.ofMillis(WAIT_MS), () -> "a new leader of " + tp);
                BrokerHandle newLeader = leader(brokers, tp).orElseThrow();
                assertNotEquals(oldLeader, newLeader);
                assertFalse(newLeader.producerEpochs(tp).containsKey(local.producerId()));

                RecordMetadata sent = producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), "k", "local-0"))
                    .get();

                assertEquals(barrier + 1, sent.offset());
                assertEquals(List.of("0:mirrored-0", sent.offset() + ":local-0"), logValues(tp));
                assertEquals(List.of("0:mirrored-0", sent.offset() + ":local-0"), readCommitted(tp));
            } finally {
                oldLeader.startup();
            }
            waitForReplicasAt(tp, barrier + 2);
        }
    }

    /** A clean restart loads the producer state snapshot taken at shutdown: the mirrored producer stays gone. */
    @Test
    void resetSurvivesACleanRestart() throws Exception {
        TopicPartition tp = createTopic("restart");
        long producerId = 4242L;
        mirror(tp, dataBatch(0, producerId, (short) 3, 0, false, "mirrored-0"));
        BrokerHandle replica = leader(brokers, tp).orElseThrow();
        assertEquals(Map.of(producerId, (short) 3), replica.producerEpochs(tp));
        long barrier = barrierAndReset(tp);

        replica.shutdown();
        replica.awaitShutdown();
        replica.startup();
        waitForReplicasAt(tp, barrier + 1);

        assertEquals(Map.of(), replica.producerEpochs(tp));
        assertEquals(List.of("0:mirrored-0"), readCommitted(tp));
    }

    /**
     * The local transactional producer's id at an older epoch: a committed transaction (0, marker at 1), then an
     * open one (2-3). Each commit bumps the epoch (transaction.version 2), so after its scratch commit the local
     * producer is at epoch 1 or above.
     */
    private static ByteBuffer mirroredTransactions(ProducerState local) {
        assertTrue(local.producerEpoch() >= 1, "local epoch " + local.producerEpoch());
        long pid = local.producerId();
        short epoch = (short) (local.producerEpoch() - 1);
        return concat(
            dataBatch(0, pid, epoch, 0, true, "mirrored-committed"),
            TestBatches.bytes(MemoryRecords.withEndTransactionMarker(1, System.currentTimeMillis(), RecordBatch.NO_PARTITION_LEADER_EPOCH,
                pid, epoch, new EndTransactionMarker(ControlRecordType.COMMIT, 0))),
            dataBatch(2, pid, epoch, 1, true, "mirrored-open-2", "mirrored-open-3"));
    }

    private static TopicPartition createTopic(String topic) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3))).all().get();
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        waitForReplicasAt(tp, 0);
        return tp;
    }

    /** An idempotent producer, transactional (transactions initialized) if {@code transactionalId} is given. */
    private static KafkaProducer<String, String> producer(Optional<String> transactionalId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) WAIT_MS);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) WAIT_MS / 3);
        transactionalId.ifPresent(id -> p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id));
        KafkaProducer<String, String> producer = new KafkaProducer<>(p);
        if (transactionalId.isPresent()) {
            producer.initTransactions();
        }
        return producer;
    }

    /**
     * The producer's id and current epoch, from its write (committed, if transactional) to a scratch topic,
     * as the broker's producer state has them.
     */
    private static ProducerState identity(KafkaProducer<String, String> producer, String scratchTopic,
                                          boolean transactional) throws Exception {
        TopicPartition scratch = createTopic(scratchTopic);
        if (transactional) {
            producer.beginTransaction();
        }
        producer.send(new ProducerRecord<>(scratchTopic, 0, "k", "scratch")).get();
        if (transactional) {
            producer.commitTransaction();
        }
        try (Admin admin = cluster.admin()) {
            // commitTransaction returns once the coordinator logged the commit; the marker, which carries the bumped epoch,
            // reaches the partition after. Until then the partition shows the transaction open at the old epoch.
            return waitForValue(() -> {
                List<ProducerState> states = admin.describeProducers(List.of(scratch)).partitionResult(scratch).get().activeProducers();
                assertEquals(1, states.size(), String.valueOf(states));
                return Optional.of(states.get(0)).filter(state -> state.currentTransactionStartOffset().isEmpty());
            }, Duration.ofMillis(WAIT_MS), "the scratch transaction's commit marker on " + scratch);
        }
    }

    /** Appends mirrored batches on the leader as the mirror does and waits until every replica has them. */
    private static void mirror(TopicPartition tp, ByteBuffer records) throws Exception {
        BrokerHandle l = leader(brokers, tp).orElseThrow();
        AppendResult r = l.appendAsLeader(tp, l.leaderLogState(tp).orElseThrow().leaderEpoch(), records);
        waitForReplicasAt(tp, r.logEndOffset());
    }

    /**
     * Appends a barrier at the log end, waits until every replica has it, then removes the producers before it on
     * every replica, as the extension does. Each replica held exactly one (mirrored) producer, and holds none now.
     *
     * @return the barrier's offset
     */
    private static long barrierAndReset(TopicPartition tp) throws Exception {
        LeaderLogState state = leaderState(tp);
        long barrier = state.logEndOffset();
        mirror(tp, BarrierBatch.build(barrier, state.leaderEpoch(), SOURCE_CLUSTER_ID, System.currentTimeMillis()).bytes());
        for (BrokerHandle b : brokers) {
            assertEquals(1, b.removeProducersBefore(tp, barrier), "producers removed on broker " + b.nodeId());
            assertEquals(Map.of(), b.producerEpochs(tp), "producers left on broker " + b.nodeId());
        }
        return barrier;
    }

    /** Waits until every broker's replica ends at {@code logEndOffset} and the leader's high watermark is there. */
    private static void waitForReplicasAt(TopicPartition tp, long logEndOffset) throws InterruptedException {
        waitFor(() -> leader(brokers, tp).flatMap(l -> l.leaderLogState(tp))
                .map(s -> s.highWatermark() == logEndOffset).orElse(false)
                && brokers.stream().allMatch(b -> b.localLogEndOffset(tp).orElse(-1) == logEndOffset),
            Duration.ofMillis(WAIT_MS), () -> "every replica of " + tp + " at " + logEndOffset);
    }

    private static LeaderLogState leaderState(TopicPartition tp) {
        return leader(brokers, tp).orElseThrow().leaderLogState(tp).orElseThrow();
    }

    private static ByteBuffer dataBatch(long baseOffset, long producerId, short producerEpoch, int baseSequence,
                                        boolean transactional, String... values) {
        ByteBuffer buffer = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
            TimestampType.CREATE_TIME, baseOffset, RecordBatch.NO_TIMESTAMP, producerId, producerEpoch, baseSequence,
            transactional, false, RecordBatch.NO_PARTITION_LEADER_EPOCH, buffer.capacity());
        for (int i = 0; i < values.length; i++) {
            builder.appendWithOffset(baseOffset + i, System.currentTimeMillis(), "k".getBytes(StandardCharsets.UTF_8),
                values[i].getBytes(StandardCharsets.UTF_8));
        }
        return TestBatches.bytes(builder.build());
    }

    /** The data records of the leader's log, as {@code offset:value}. */
    private static List<String> logValues(TopicPartition tp) {
        BrokerHandle l = leader(brokers, tp).orElseThrow();
        long end = l.leaderLogState(tp).orElseThrow().logEndOffset();
        List<String> values = new ArrayList<>();
        // A read stops at a segment's end, and segments roll on time (the barrier's timestamp is the wall clock).
        for (long next = 0; next < end; ) {
            for (StoredBatch batch : l.localRecords(tp, next, Integer.MAX_VALUE)) {
                if (!batch.isControlBatch()) {
                    for (StoredRecord r : batch.records()) {
                        values.add(r.offset() + ":" + Utils.utf8(r.value()));
                    }
                }
                next = batch.nextOffset();
            }
        }
        return values;
    }

    /** What a read_committed consumer reads from the start up to the last stable offset, as {@code offset:value}. */
    private static List<String> readCommitted(TopicPartition tp) throws InterruptedException {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp); // the LSO under read_committed
            List<String> values = new ArrayList<>();
            waitFor(() -> {
                consumer.poll(Duration.ofMillis(100)).forEach(r -> values.add(r.offset() + ":" + r.value()));
                return consumer.position(tp) >= end;
            }, Duration.ofMillis(WAIT_MS), () -> "read_committed consumer at " + end + " of " + tp + ", read " + values);
            return values;
        }
    }
}
