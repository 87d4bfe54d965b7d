package io.clustermirror.chaos;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Writes to both clusters while a run lasts and records every acknowledged write. Two {@link Lane}s of producers: the
 * fixed lane writes the mirrored-all-along partitions on the source; the moving lane writes the failover topic on
 * whichever cluster is writable ({@link #moveFailover}, for both directions). Each lane has an idempotent producer
 * (batches of records, each acknowledged with its offset) and a transactional one (transactions over one or two
 * partitions that commit, abort, or stay open for a few seconds before they commit, so that a stop may find one open);
 * the moving lane has a second transactional producer, whose transactions interleave with the first's on the same
 * partitions: a transaction that began before another and commits while the other is open leaves the mirroring side
 * holding the other open with a committed one below it, whose marker lies past the last stable offset, which is where a
 * stop's cut can go wrong.
 * A compacted topic gets keyed records and tombstones from a small key space; those are not recorded (their check
 * compares the two logs).
 *
 * <p>A write counts as {@link Outcome#ACKED} once the cluster acknowledged it (idempotent) or its transaction committed
 * (transactional); records of aborted transactions are {@link Outcome#ABORTED}. Every value is unique in the run, so a
 * value read twice is a duplicate. The workload never writes through the fault proxies: the clusters themselves are
 * reached directly.
 */
final class Workload implements AutoCloseable {
    /** What the cluster said of a write. */
    enum Outcome { ACKED, ABORTED }

    /** Which cluster a write went to. */
    enum Side {
        SOURCE, DESTINATION;

        Side other() {
            return this == SOURCE ? DESTINATION : SOURCE;
        }

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One record written, with the offset the cluster gave it; {@code stint} counts the moves of the partition's
     * producers (0 until the first failover; always 0 for partitions that never move).
     */
    record Write(Side side, int stint, TopicPartition partition, long offset, String value, Outcome outcome) {
    }

    private static final int IDEMPOTENT_BATCH = 5;
    private static final int TRANSACTION_RECORDS_PER_PARTITION = 3;
    private static final long PACE_MS = 40;
    private static final int COMPACTED_KEYS = 20;
    private static final Duration MOVE_BOUND = Duration.ofSeconds(120);
    /** The moving lane's producers: one idempotent, two transactional. */
    private static final int FAILOVER_PRODUCERS = 3;

    /** Where a lane writes now: the side (null while its producers move), the stint, and each partition's barrier there. */
    private record Assignment(Side side, int stint, Map<TopicPartition, Long> barriers) {
    }

    /**
     * Partitions written by one pair of producers, on one cluster at a time. A move parks both producers (each
     * finishes its batch or transaction and closes), then points them at the other cluster, where each starts a new
     * producer. Thread-safe.
     */
    private final class Lane {
        private final String name;
        private final List<TopicPartition> partitions;
        private final List<TopicPartition> idempotentOnly;
        // Guarded by this.
        private Assignment assignment;
        private final Set<String> parked = new HashSet<>();

        Lane(String name, List<TopicPartition> partitions, List<TopicPartition> idempotentOnly) {
            this.name = name;
            this.partitions = List.copyOf(partitions);
            this.idempotentOnly = List.copyOf(idempotentOnly);
            this.assignment = new Assignment(Side.SOURCE, 0, Map.of());
        }

        /** Waits for an assignment other than stint {@code done} (which the caller finished); null once the workload stops. */
        synchronized Assignment await(int done) throws InterruptedException {
            if (done >= 0 && done < assignment.stint()) {
                parked.add(Thread.currentThread().getName());
                notifyAll();
            }
            while (!stopping && (assignment.side() == null || assignment.stint() == done)) {
                wait(100);
            }
            return stopping ? null : assignment;
        }

        synchronized boolean current(Assignment a) {
            return assignment.stint() == a.stint() && !stopping;
        }

        /**
         * Parks the lane's {@code producers}: each finishes its batch or transaction and closes; the lane writes nowhere
         * until {@link #move}. Does nothing if the lane is parked already.
         */
        synchronized void park(int producers) throws InterruptedException, TimeoutException {
            if (assignment.side() == null) {
                return;
            }
            assignment = new Assignment(null, assignment.stint() + 1, Map.of());
            parked.clear();
            long deadline = System.nanoTime() + MOVE_BOUND.toNanos();
            while (parked.size() < producers) {
                if (System.nanoTime() > deadline) {
                    throw new TimeoutException("the producers of " + partitions + " did not finish their writes within "
                        + MOVE_BOUND.toSeconds() + " s (finished: " + parked + ")");
                }
                wait(100);
            }
        }

        /** Parks the lane's producers (if it is not parked already), then points them at {@code to}. */
        synchronized void move(Side to, Map<TopicPartition, Long> barriers, int producers) throws InterruptedException, TimeoutException {
            park(producers);
            assignment = new Assignment(to, assignment.stint(), Map.copyOf(barriers));
            notifyAll();
        }
    }

    private final String sourceBootstrapServers;
    private final String destinationBootstrapServers;
    private final Lane fixed;
    private final Lane moving;
    private final List<TopicPartition> compacted;
    private final long seed;
    private final History history;
    private final ConcurrentLinkedQueue<Write> writes = new ConcurrentLinkedQueue<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicInteger transactionalIds = new AtomicInteger();
    private volatile boolean stopping;

    /**
     * @param fixedPartitions  partitions written on the source for the whole run
     * @param idempotentOnly   partitions the transactional producers leave out
     * @param movingPartitions partitions whose producers move between the clusters
     * @param compacted        partitions of the compacted topic
     */
    Workload(String sourceBootstrapServers, String destinationBootstrapServers, List<TopicPartition> fixedPartitions,
             List<TopicPartition> idempotentOnly, List<TopicPartition> movingPartitions, List<TopicPartition> compacted, long seed,
             History history) {
        this.sourceBootstrapServers = sourceBootstrapServers;
        this.destinationBootstrapServers = destinationBootstrapServers;
        this.fixed = new Lane("fixed", fixedPartitions, idempotentOnly);
        this.moving = new Lane("moving", movingPartitions, List.of());
        this.compacted = List.copyOf(compacted);
        this.seed = seed;
        this.history = history;
    }

    void start() {
        for (Lane lane : List.of(fixed, moving)) {
            // Seeded per lane and producer, so that a replay draws the same partitions and outcomes.
            long laneSeed = seed ^ lane.name.hashCode();
            threads.add(new Thread(() -> idempotentLoop(lane, new Random(laneSeed ^ 0x1DE7L)), "workload-idempotent-" + lane.name));
            threads.add(new Thread(() -> transactionalLoop(lane, "", new Random(laneSeed ^ 0x7A5L)), "workload-transactional-" + lane.name));
        }
        threads.add(new Thread(() -> transactionalLoop(moving, "b-", new Random((seed ^ moving.name.hashCode()) ^ 0x7A5BL)),
            "workload-transactional-" + moving.name + "-b"));
        threads.add(new Thread(() -> compactedLoop(new Random(seed ^ 0xC0A1L)), "workload-compacted"));
        threads.forEach(Thread::start);
    }

    /**
     * Writes {@code count} records to {@code tp} on the source with an idempotent producer of its own and records them
     * (stint 0): the records of a topic created during the run. Fails if one of them is not acknowledged.
     */
    void writeRecords(TopicPartition tp, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = producer(Side.SOURCE, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
            List<String> values = new ArrayList<>();
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                values.add("new-" + tp + "-" + i);
                sent.add(producer.send(record(tp, values.get(i))));
            }
            producer.flush();
            for (int i = 0; i < count; i++) {
                writes.add(new Write(Side.SOURCE, 0, tp, sent.get(i).get(30, TimeUnit.SECONDS).offset(), values.get(i), Outcome.ACKED));
            }
        }
    }

    /** Every write recorded so far. */
    List<Write> writes() {
        return List.copyOf(writes);
    }

    /** The stint of the moving partitions' producers: how many times they moved. */
    int stint() {
        synchronized (moving) {
            return moving.assignment.stint();
        }
    }

    private KafkaProducer<byte[], byte[]> producer(Side side, Map<String, Object> overrides) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, side == Side.SOURCE ? sourceBootstrapServers : destinationBootstrapServers);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        props.putAll(overrides);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static ProducerRecord<byte[], byte[]> record(TopicPartition tp, String value) {
        return new ProducerRecord<>(tp.topic(), tp.partition(), null, value.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Runs {@code write} with a new producer for each assignment of the lane, until the workload stops. A producer that
     * fails is replaced (a cluster that still refuses writes to a topic it is making writable, a node down...).
     */
    private void runLane(Lane lane, String what, LaneWriter write) {
        int done = -1;
        try {
            while (true) {
                Assignment a = lane.await(done);
                if (a == null) {
                    return;
                }
                try {
                    write.run(a);
                    done = a.stint();
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    history.event("workload", what + " of the " + lane.name + " partitions on the " + a.side().label() + " failed, "
                        + "starting a new one: " + e);
                    if (!lane.current(a)) {
                        done = a.stint();
                    }
                    Thread.sleep(250);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One producer's writes for one assignment, until the lane moves or the workload stops. */
    @FunctionalInterface
    private interface LaneWriter {
        void run(Assignment assignment) throws Exception;
    }

    private void idempotentLoop(Lane lane, Random random) {
        long[] batch = {0};
        runLane(lane, "idempotent producer", a -> {
            try (KafkaProducer<byte[], byte[]> producer = producer(a.side(), Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
                boolean first = true;
                while (lane.current(a)) {
                    TopicPartition tp = lane.partitions.get(random.nextInt(lane.partitions.size()));
                    // Numbered before the send: a replacement producer never sends a value again that its failed
                    // predecessor may have written (a new producer id is not deduplicated, and values must be unique).
                    long number = batch[0]++;
                    List<String> values = new ArrayList<>();
                    List<Future<RecordMetadata>> sent = new ArrayList<>();
                    for (int i = 0; i < IDEMPOTENT_BATCH; i++) {
                        String value = "idem-" + lane.name + "-" + number + "-" + i;
                        values.add(value);
                        sent.add(producer.send(record(tp, value)));
                    }
                    producer.flush();
                    for (int i = 0; i < sent.size(); i++) {
                        long offset = acknowledged(sent.get(i), a, tp, values.get(i), first);
                        writes.add(new Write(a.side(), a.stint(), tp, offset, values.get(i), Outcome.ACKED));
                    }
                    first = false;
                    pace();
                }
            }
        });
    }

    /**
     * The transaction a value was written in: {@code tx-<lane>-<producer tag><number>} of a transactional write's value
     * {@code tx-<lane>-<producer tag><number>-<partition>-<index>}; empty for any other write.
     */
    static Optional<String> transactionOf(String value) {
        if (!value.startsWith("tx-")) {
            return Optional.empty();
        }
        int index = value.lastIndexOf('-');
        int partition = value.lastIndexOf('-', index - 1);
        return Optional.of(value.substring(0, partition));
    }

    /** @param producerTag tells this producer's values from those of another transactional producer of the lane */
    private void transactionalLoop(Lane lane, String producerTag, Random random) {
        long[] transaction = {0};
        List<TopicPartition> eligible = lane.partitions.stream().filter(tp -> !lane.idempotentOnly.contains(tp)).toList();
        runLane(lane, "transactional producer", a -> {
            // A new transactional id for every producer: nothing of an unfinished transaction counts as acknowledged.
            try (KafkaProducer<byte[], byte[]> producer = producer(a.side(), Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                    "chaos-tx-" + lane.name + "-" + transactionalIds.getAndIncrement(), ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 60_000))) {
                producer.initTransactions();
                boolean first = true;
                while (lane.current(a)) {
                    producer.beginTransaction();
                    List<TopicPartition> targets = new ArrayList<>(List.of(eligible.get(random.nextInt(eligible.size()))));
                    TopicPartition second = eligible.get(random.nextInt(eligible.size()));
                    if (random.nextBoolean() && !targets.contains(second)) {
                        targets.add(second);
                    }
                    long number = transaction[0]++; // before the send, as for the idempotent producer's batches
                    List<Write> pending = new ArrayList<>();
                    List<Future<RecordMetadata>> sent = new ArrayList<>();
                    for (TopicPartition tp : targets) {
                        for (int i = 0; i < TRANSACTION_RECORDS_PER_PARTITION; i++) {
                            String value = "tx-" + lane.name + "-" + producerTag + number + "-" + tp.partition() + "-" + i;
                            pending.add(new Write(a.side(), a.stint(), tp, -1, value, null));
                            sent.add(producer.send(record(tp, value)));
                        }
                    }
                    producer.flush();
                    double draw = random.nextDouble();
                    Outcome outcome = draw < 0.2 ? Outcome.ABORTED : Outcome.ACKED;
                    if (draw >= 0.7) {
                        // Left open for a few seconds: the cluster's last stable offset stays behind it, and a stop now
                        // must cut the other side there.
                        holdOpen(2_000 + random.nextInt(4_000));
                    }
                    if (outcome == Outcome.ABORTED) {
                        producer.abortTransaction();
                    } else {
                        producer.commitTransaction();
                    }
                    for (int i = 0; i < pending.size(); i++) {
                        Write w = pending.get(i);
                        long offset = acknowledged(sent.get(i), a, w.partition(), w.value(), first);
                        writes.add(new Write(a.side(), a.stint(), w.partition(), offset, w.value(), outcome));
                    }
                    first = false;
                    pace();
                }
            }
        });
    }

    /**
     * The offset of a sent record. Checks {@value HistoryChecker#PRODUCER_STATE} on a cluster the producers just moved
     * to: a first write refused as out of sequence, or any write acknowledged at or below the stop's barrier (as a
     * duplicate of a mirrored batch of a producer with the same id), means the stop left a mirrored producer's state.
     */
    private long acknowledged(Future<RecordMetadata> sent, Assignment a, TopicPartition tp, String value, boolean first) throws Exception {
        String where = tp + " on the " + a.side().label();
        long offset;
        try {
            offset = sent.get(60, TimeUnit.SECONDS).offset();
        } catch (ExecutionException e) {
            if (first && e.getCause() instanceof OutOfOrderSequenceException && a.barriers().containsKey(tp)) {
                history.violation(HistoryChecker.PRODUCER_STATE, where, "the first writes of a new producer after the stop were "
                    + "refused: " + e.getCause() + " (the producer state still holds a mirrored producer with this producer's id)");
            }
            throw e;
        }
        Long barrier = a.barriers().get(tp);
        if (barrier != null && offset <= barrier) {
            history.violation(HistoryChecker.PRODUCER_STATE, where, "'" + value + "' written after the stop was acknowledged at offset "
                + offset + ", at or below the barrier at offset " + barrier + ": taken as a duplicate of a mirrored batch of a "
                + "producer with the same id, so it was never written");
        }
        return offset;
    }

    /** Keyed records and tombstones to the compacted topic on the source, from a small key space; not recorded. */
    private void compactedLoop(Random random) {
        while (!stopping) {
            try (KafkaProducer<byte[], byte[]> producer = producer(Side.SOURCE, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
                long n = 0;
                while (!stopping) {
                    TopicPartition tp = compacted.get(random.nextInt(compacted.size()));
                    byte[] key = ("key-" + random.nextInt(COMPACTED_KEYS)).getBytes(StandardCharsets.UTF_8);
                    byte[] value = random.nextInt(10) == 0 ? null : ("compacted-" + n++).getBytes(StandardCharsets.UTF_8);
                    producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), key, value)).get(60, TimeUnit.SECONDS);
                    pace();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                history.event("workload", "compacted producer failed, starting a new one: " + e);
            }
        }
    }

    /**
     * Moves the producers of the failover topic to {@code to}, which was just made writable by a stop that wrote the
     * barriers {@code barriers}: both producers finish their batch or transaction on the other cluster (a transaction
     * already open may still commit there) and close; then new ones write on {@code to}. Returns the new stint.
     */
    int moveFailover(Side to, Map<TopicPartition, Long> barriers) throws InterruptedException, TimeoutException {
        moving.move(to, barriers, FAILOVER_PRODUCERS);
        return stint();
    }

    /**
     * Stops the writes to the failover topic before a planned stop, as an operator stops the producers first: both
     * producers finish their batch or transaction and close (so that no transaction stays open); {@link #moveFailover}
     * then starts new ones on the side made writable.
     */
    void parkFailover() throws InterruptedException, TimeoutException {
        moving.park(FAILOVER_PRODUCERS);
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
        synchronized (fixed) {
            fixed.notifyAll();
        }
        synchronized (moving) {
            moving.notifyAll();
        }
        for (Thread thread : threads) {
            thread.join(TimeUnit.MINUTES.toMillis(2));
        }
    }
}
