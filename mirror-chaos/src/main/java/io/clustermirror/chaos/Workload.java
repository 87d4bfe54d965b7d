package io.clustermirror.chaos;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Writes to the source while a run lasts and records every write the source acknowledged: an idempotent producer
 * (batches of records, each acknowledged with its offset) and a transactional one (transactions over one or two
 * partitions that commit, abort, or stay open for a few seconds before they commit, so that a stop may find one open).
 *
 * <p>At the failover ({@link #failOver}) the producers of the stopped partitions move to the destination.
 *
 * <p>A write counts as {@link Outcome#ACKED} once the source acknowledged it (idempotent) or its transaction committed
 * (transactional); records of aborted transactions are {@link Outcome#ABORTED}. Every value is unique in the run, so a
 * value read twice is a duplicate. The workload never writes through the fault proxies: the clusters themselves are
 * reached directly.
 */
final class Workload implements AutoCloseable {
    /** What the source said of a write. */
    enum Outcome { ACKED, ABORTED }

    /** Which cluster a write went to. */
    enum Side { SOURCE, DESTINATION }

    /** One record written, with the offset the cluster gave it. */
    record Write(Side side, TopicPartition partition, long offset, String value, Outcome outcome) {
    }

    private static final int IDEMPOTENT_BATCH = 5;
    private static final int TRANSACTION_RECORDS_PER_PARTITION = 3;
    private static final long PACE_MS = 40;

    private final String bootstrapServers;
    // The source partitions written to: the failed-over ones leave it at the stop, as their producers move.
    private volatile List<TopicPartition> partitions;
    private final List<TopicPartition> idempotentOnly;
    // Each used by its producer's thread only; seeded, so that a replay draws the same partitions and outcomes.
    private final Random idempotentRandom;
    private final Random transactionalRandom;
    private final History history;
    private final ConcurrentLinkedQueue<Write> writes = new ConcurrentLinkedQueue<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean stopping;

    /** @param idempotentOnly partitions the transactional producer leaves out */
    Workload(String bootstrapServers, List<TopicPartition> partitions, List<TopicPartition> idempotentOnly, long seed, History history) {
        this.bootstrapServers = bootstrapServers;
        this.partitions = List.copyOf(partitions);
        this.idempotentOnly = List.copyOf(idempotentOnly);
        this.idempotentRandom = new Random(seed ^ 0x1DE7L);
        this.transactionalRandom = new Random(seed ^ 0x7A5L);
        this.history = history;
    }

    void start() {
        threads.add(new Thread(this::idempotentLoop, "workload-idempotent"));
        threads.add(new Thread(this::transactionalLoop, "workload-transactional"));
        threads.forEach(Thread::start);
    }

    /** Every write recorded so far. */
    List<Write> writes() {
        return List.copyOf(writes);
    }

    private KafkaProducer<byte[], byte[]> producer(Map<String, Object> overrides) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        props.putAll(overrides);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static ProducerRecord<byte[], byte[]> record(TopicPartition tp, String value) {
        return new ProducerRecord<>(tp.topic(), tp.partition(), null, value.getBytes(StandardCharsets.UTF_8));
    }

    private void idempotentLoop() {
        Random random = idempotentRandom;
        long batch = 0;
        while (!stopping) {
            try (KafkaProducer<byte[], byte[]> producer = producer(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
                while (!stopping) {
                    List<TopicPartition> current = partitions;
                    TopicPartition tp = current.get(random.nextInt(current.size()));
                    List<String> values = new ArrayList<>();
                    List<Future<RecordMetadata>> sent = new ArrayList<>();
                    for (int i = 0; i < IDEMPOTENT_BATCH; i++) {
                        String value = "idem-" + batch + "-" + i;
                        values.add(value);
                        sent.add(producer.send(record(tp, value)));
                    }
                    producer.flush();
                    for (int i = 0; i < sent.size(); i++) {
                        writes.add(new Write(Side.SOURCE, tp, sent.get(i).get(60, TimeUnit.SECONDS).offset(), values.get(i), Outcome.ACKED));
                    }
                    batch++;
                    pace();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                history.event("workload", "idempotent producer failed, starting a new one: " + e);
            }
        }
    }

    private void transactionalLoop() {
        Random random = transactionalRandom;
        long transaction = 0;
        int generation = 0;
        while (!stopping) {
            try (KafkaProducer<byte[], byte[]> producer = producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "chaos-tx-" + generation++,
                    ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 60_000))) {
                producer.initTransactions();
                while (!stopping) {
                    producer.beginTransaction();
                    List<TopicPartition> current = partitions.stream().filter(tp -> !idempotentOnly.contains(tp)).toList();
                    List<TopicPartition> targets = new ArrayList<>(List.of(current.get(random.nextInt(current.size()))));
                    TopicPartition second = current.get(random.nextInt(current.size()));
                    if (random.nextBoolean() && !targets.contains(second)) {
                        targets.add(second);
                    }
                    List<Write> pending = new ArrayList<>();
                    List<Future<RecordMetadata>> sent = new ArrayList<>();
                    for (TopicPartition tp : targets) {
                        for (int i = 0; i < TRANSACTION_RECORDS_PER_PARTITION; i++) {
                            String value = "tx-" + transaction + "-" + tp.partition() + "-" + i;
                            pending.add(new Write(Side.SOURCE, tp, -1, value, null));
                            sent.add(producer.send(record(tp, value)));
                        }
                    }
                    producer.flush();
                    double draw = random.nextDouble();
                    Outcome outcome = draw < 0.2 ? Outcome.ABORTED : Outcome.ACKED;
                    if (draw >= 0.7) {
                        // Left open for a few seconds: the source's last stable offset stays behind it, and a stop now
                        // must cut the destination there.
                        holdOpen(2_000 + random.nextInt(4_000));
                    }
                    if (outcome == Outcome.ABORTED) {
                        producer.abortTransaction();
                    } else {
                        producer.commitTransaction();
                    }
                    for (int i = 0; i < pending.size(); i++) {
                        Write w = pending.get(i);
                        writes.add(new Write(Side.SOURCE, w.partition(), sent.get(i).get().offset(), w.value(), outcome));
                    }
                    transaction++;
                    pace();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                // Nothing of an unfinished transaction counts as acknowledged; a new transactional id starts clean.
                history.event("workload", "transactional producer failed, starting a new one: " + e);
            }
        }
    }

    /**
     * The failover of the partitions of {@code barriers} (each with the offset of its stop's barrier): the source workload
     * stops writing to them (a transaction already open may still commit there), and their producers write {@code count}
     * records to each on the destination, acknowledged before this returns. A write the destination refuses as out of
     * sequence, or acknowledges at or below the barrier (as a duplicate of a mirrored batch), breaks
     * {@value HistoryChecker#PRODUCER_STATE}: it is recorded as such and the partition gets no more writes.
     */
    void failOver(Map<TopicPartition, Long> barriers, String destinationBootstrapServers, int count) throws Exception {
        partitions = partitions.stream().filter(tp -> !barriers.containsKey(tp)).toList();
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, destinationBootstrapServers);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (Map.Entry<TopicPartition, Long> moved : barriers.entrySet()) {
                TopicPartition tp = moved.getKey();
                String where = tp + " on the destination";
                for (int i = 0; i < count; i++) {
                    String value = "after-failover-" + tp.partition() + "-" + i;
                    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                    Optional<Long> offset;
                    try {
                        while ((offset = sendUnlessRefused(producer, record(tp, value))).isEmpty()) {
                            if (System.nanoTime() > deadline) {
                                throw new TimeoutException("the destination refused writes to " + tp + " for 60 s after the stop");
                            }
                            Thread.sleep(250);
                        }
                    } catch (ExecutionException e) {
                        if (!(e.getCause() instanceof OutOfOrderSequenceException)) {
                            throw e;
                        }
                        history.violation(HistoryChecker.PRODUCER_STATE, where, "the first writes of a new producer after the failover "
                            + "were refused: " + e.getCause() + " (the destination's producer state still holds a mirrored producer "
                            + "with this producer's id)");
                        break;
                    }
                    if (offset.get() <= moved.getValue()) {
                        history.violation(HistoryChecker.PRODUCER_STATE, where, "'" + value + "' written after the failover was "
                            + "acknowledged at offset " + offset.get() + ", at or below the barrier at offset " + moved.getValue()
                            + ": taken as a duplicate of a mirrored batch of a producer with the same id, so it was never written");
                        break;
                    }
                    writes.add(new Write(Side.DESTINATION, tp, offset.get(), value, Outcome.ACKED));
                }
            }
        }
    }

    /**
     * The offset of the acknowledged record, or empty if the leader refused it as a read-only mirror topic's (a leader
     * that has not yet seen the stop, or has not yet cleaned its producer state): such a write was not appended, so it
     * may be sent again. Any other failure is thrown, since the record may have been appended.
     */
    private static Optional<Long> sendUnlessRefused(KafkaProducer<byte[], byte[]> producer, ProducerRecord<byte[], byte[]> record)
            throws Exception {
        try {
            return Optional.of(producer.send(record).get(60, TimeUnit.SECONDS).offset());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TopicAuthorizationException) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** Keeps the open transaction open (the workload's own timing, cut short when the run stops). */
    private void holdOpen(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMillis(millis).toNanos();
        while (!stopping && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    /** Limits the write rate: the machines that run this are small. */
    private static void pace() throws InterruptedException {
        Thread.sleep(PACE_MS);
    }

    /** Stops writing; an open transaction is finished first (committed or aborted as drawn). */
    @Override
    public void close() throws InterruptedException {
        stopping = true;
        for (Thread thread : threads) {
            thread.join(TimeUnit.MINUTES.toMillis(2));
        }
    }
}
