package io.clustermirror.broker.sync;

import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SourceTransactionRecord;
import io.clustermirror.common.compat.SourceOffsetCommit;
import io.clustermirror.common.compat.SourceTransaction;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Follows the source's transaction coordinator log ({@value #SOURCE_LOG}) for one mirror and keeps, in
 * {@code __mirror_transactions}, every transaction the source prepared to commit or abort over two or more of the mirror's
 * partitions, with those partitions: what a stop's analysis needs to see a transaction a lagging partition never
 * mirrored, once the source is lost. A transaction over one partition cannot be split, and is not kept, unless it also
 * committed a group's offsets (its {@code __consumer_offsets} partition is kept with it): a consistent stop must not keep
 * such a commit when the partition never mirrored the output written with it ({@link GroupCommitFollower}).
 *
 * <p>It starts {@link #LOOKBACK_MS} back in the log (after a controller moves, the new one reads that again: a record
 * kept twice says the same). Reading the log needs READ on the topic {@value #SOURCE_LOG} for the mirror's source
 * principal; without it the follower reports the problem and tries again {@link #RETRY_MS} later, and the stop's analysis
 * says what it could not see. A source without a transaction log yet is looked at again at every step. Not thread-safe: one step at a
 * time, on the sync's thread.
 */
final class TransactionLogFollower implements AutoCloseable {
    static final String SOURCE_LOG = "__transaction_state";
    /** How far back a new follower starts: the longest a transaction lasts. */
    static final long LOOKBACK_MS = SourceTransaction.LONGEST_MS;
    /**
     * How long a step waits after the log could not be read or did not exist: a consumer is made for each attempt, and
     * the lookback reads again whatever was prepared meanwhile.
     */
    static final long RETRY_MS = 10_000;
    /**
     * How long a step reads at most: it ends even while the log grows faster than it is read, or a new follower reads its
     * lookback, and goes on at the next step.
     */
    static final long MAX_STEP_MS = 800;
    private static final int MAX_POLLS_A_STEP = 50;
    private static final String PROBLEM = "read the source's transaction log " + SOURCE_LOG + " (grant the mirror's source principal "
        + "READ and DESCRIBE on that topic; without it a stop's analysis of split transactions sees the mirrored data only)";

    private final String mirror;
    private final Supplier<Consumer<byte[], byte[]>> consumers;
    private final Producer<byte[], byte[]> producer;
    private final Supplier<Set<String>> mirrorTopics;
    private final ProblemLog problems;
    private final Time time;
    private Consumer<byte[], byte[]> consumer;
    /** No attempt to read the log before this time: after a failure, {@link #RETRY_MS} later. */
    private long notBeforeMs;

    /**
     * @param consumers    makes a consumer of the source (raw bytes, no group)
     * @param mirrorTopics the mirror's topics now
     */
    TransactionLogFollower(String mirror, Supplier<Consumer<byte[], byte[]>> consumers, Producer<byte[], byte[]> producer,
                           Supplier<Set<String>> mirrorTopics, ProblemLog problems, Time time) {
        this.mirror = mirror;
        this.consumers = consumers;
        this.producer = producer;
        this.mirrorTopics = mirrorTopics;
        this.problems = problems;
        this.time = time;
    }

    /**
     * Reads what the log holds now and keeps the transactions over several of the mirror's partitions.
     *
     * @return true if it read up to the log's end offsets as of the step's start: every transaction prepared before then
     *         is kept
     */
    boolean step() {
        if (consumer == null && time.milliseconds() < notBeforeMs) {
            return false;
        }
        try {
            if (consumer == null && !assign()) {
                return true; // the source has no transaction log: it prepared no transaction before this step
            }
            Map<TopicPartition, Long> ends = consumer.endOffsets(consumer.assignment(), Duration.ofSeconds(10));
            Set<String> topics = mirrorTopics.get();
            long until = time.milliseconds() + MAX_STEP_MS;
            int polls = 0;
            do {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    keep(topics, r);
                }
            } while (!reached(ends) && ++polls < MAX_POLLS_A_STEP && time.milliseconds() < until);
            problems.resolved(PROBLEM);
            return reached(ends);
        } catch (org.apache.kafka.common.errors.InterruptException e) {
            Thread.currentThread().interrupt(); // the sync is closing: nothing to report
            close();
        } catch (RuntimeException e) {
            problems.report(PROBLEM, e);
            Utils.closeQuietly(consumer, "the consumer of the source's transaction log");
            consumer = null; // a new one at the next attempt: Kafka's consumer keeps some errors for good
            notBeforeMs = time.milliseconds() + RETRY_MS;
        }
        return false;
    }

    private boolean reached(Map<TopicPartition, Long> ends) {
        return ends.entrySet().stream().allMatch(e -> consumer.position(e.getKey(), Duration.ofSeconds(10)) >= e.getValue());
    }

    /** Assigns every partition of the source's log, {@link #LOOKBACK_MS} back; false if the source has no log yet. */
    private boolean assign() {
        Consumer<byte[], byte[]> c = consumers.get();
        try {
            List<PartitionInfo> infos = c.partitionsFor(SOURCE_LOG, Duration.ofSeconds(10));
            if (infos == null || infos.isEmpty()) {
                problems.note(PROBLEM, "Mirror '" + mirror + "': the source has no transaction log yet (" + SOURCE_LOG
                    + "); looking again every second");
                c.close();
                return false;
            }
            List<TopicPartition> partitions = infos.stream().map(i -> new TopicPartition(i.topic(), i.partition())).toList();
            c.assign(partitions);
            Map<TopicPartition, Long> since = new HashMap<>();
            partitions.forEach(tp -> since.put(tp, time.milliseconds() - LOOKBACK_MS));
            Map<TopicPartition, OffsetAndTimestamp> offsets = c.offsetsForTimes(since, Duration.ofSeconds(10));
            for (TopicPartition tp : partitions) {
                OffsetAndTimestamp at = offsets.get(tp);
                if (at == null) {
                    c.seekToEnd(List.of(tp));
                } else {
                    c.seek(tp, at.offset());
                }
            }
            consumer = c;
            return true;
        } catch (RuntimeException e) {
            Utils.closeQuietly(c, "the consumer of the source's transaction log");
            throw e;
        }
    }

    private void keep(Set<String> topics, ConsumerRecord<byte[], byte[]> r) {
        if (r.value() == null) {
            return;
        }
        SourceTransaction t;
        try {
            t = SourceTransaction.prepared(ByteBuffer.wrap(r.value())).orElse(null);
        } catch (IllegalArgumentException e) {
            problems.note("decode " + r.topic() + "-" + r.partition(), "Mirror '" + mirror + "': skipping a value of the source's "
                + SOURCE_LOG + " at " + r.topic() + "-" + r.partition() + " offset " + r.offset() + " that does not decode: " + e.getMessage());
            return;
        }
        if (t == null) {
            return;
        }
        List<TopicPartition> ours = t.partitions().stream().filter(tp -> topics.contains(tp.topic())).toList();
        List<TopicPartition> offsets = t.partitions().stream().filter(tp -> tp.topic().equals(SourceOffsetCommit.LOG)).toList();
        if (ours.size() >= 2 || !ours.isEmpty() && !offsets.isEmpty()) {
            ours = java.util.stream.Stream.concat(ours.stream(), offsets.stream()).toList();
            producer.send(new ProducerRecord<>(InternalTopics.TRANSACTIONS, mirror.getBytes(StandardCharsets.UTF_8),
                RecordCodec.encodeTransaction(SourceTransactionRecord.of(mirror, t, ours))));
        }
    }

    @Override
    public void close() {
        Utils.closeQuietly(consumer, "the consumer of the source's transaction log");
        consumer = null;
    }
}
