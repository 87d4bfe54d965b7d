package io.clustermirror.broker.sync;

import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.compat.SourceOffsetCommit;
import io.clustermirror.common.compat.SourceTransaction;
import io.clustermirror.common.fetch.RawLogReader;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SourceOffsetCommitRecord;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Follows, for one mirror, the partitions of the source's {@value SourceOffsetCommit#LOG} that hold its synced consumer
 * groups, and keeps in {@code __mirror_transactions} every offset of the mirror's topics that such a group committed
 * inside a transaction that committed ({@link TransactionalCommits}), with the transaction's producer id and epoch. A
 * consistent stop then gives the group the offset of the last transaction it keeps ({@code sendOffsetsToTransaction}
 * applications: Kafka Streams with exactly-once, read-process-write loops). The metadata sync copies only the group's
 * latest offset, which may come from a transaction whose output the stop cuts.
 *
 * <p>The batches are read as the source stores them (a consumer does not show which producer wrote a record), from
 * {@link SourceTransaction#LONGEST_MS} back when a group's partition is first followed. Reading needs READ and DESCRIBE on
 * the topic {@value SourceOffsetCommit#LOG} for the mirror's source principal; without it the follower reports the problem
 * and tries again {@link TransactionLogFollower#RETRY_MS} later, and a consistent stop leaves such groups' offsets as the
 * sync copied them (at most the cut). A record that does not decode is skipped with a note. A step reads for at most
 * {@link TransactionLogFollower#MAX_STEP_MS}, so that a long backlog does not hold the sync's other work. Not thread-safe:
 * one step at a time, on the sync's thread.
 */
final class GroupCommitFollower implements AutoCloseable {
    private static final long TIMEOUT_MS = 10_000;
    private static final String PROBLEM = "read the source's committed offsets " + SourceOffsetCommit.LOG + " (grant the mirror's source "
        + "principal READ and DESCRIBE on that topic; without it a consistent stop cannot give the groups that commit offsets in "
        + "transactions the offset of the last transaction it keeps)";

    private final String mirror;
    private final Supplier<Admin> admins;
    private final Properties clientProperties;
    private final String clientId;
    private final Producer<byte[], byte[]> producer;
    private final Supplier<Set<String>> mirrorTopics;
    private final Supplier<Set<String>> groups;
    private final ProblemLog problems;
    private final Time time;
    private Admin admin;
    private RawLogReader reader;
    private int logPartitions;
    /** Where each followed partition of the log is read next, and what its open transactions committed. */
    private final Map<Integer, Long> positions = new HashMap<>();
    private final Map<Integer, TransactionalCommits> commits = new HashMap<>();
    private long notBeforeMs;

    /**
     * @param admins           makes an Admin client of the source
     * @param clientProperties the source's client configs (may hold secrets: never logged)
     * @param groups           the consumer groups the sync copies now
     */
    GroupCommitFollower(String mirror, Supplier<Admin> admins, Properties clientProperties, String clientId,
                        Producer<byte[], byte[]> producer, Supplier<Set<String>> mirrorTopics, Supplier<Set<String>> groups,
                        ProblemLog problems, Time time) {
        this.mirror = mirror;
        this.admins = admins;
        this.clientProperties = clientProperties;
        this.clientId = clientId;
        this.producer = producer;
        this.mirrorTopics = mirrorTopics;
        this.groups = groups;
        this.problems = problems;
        this.time = time;
    }

    /**
     * Reads what the followed partitions hold now and keeps the transactional commits of synced groups.
     *
     * @return true if every followed partition was read to its high watermark (or there is none to follow): every
     *         commit written before the step began is kept; false if a partition is still behind or could not be read
     */
    boolean step() {
        Set<String> synced = groups.get();
        if (synced.isEmpty()) {
            return true;
        }
        if (time.milliseconds() < notBeforeMs) {
            return false;
        }
        try {
            if (admin == null) {
                admin = admins.get();
                reader = new RawLogReader(admin, clientProperties, clientId, Duration.ofMillis(TIMEOUT_MS));
            }
            if (logPartitions == 0 && !describeLog()) {
                return true; // the source has no such topic: no commit to keep
            }
            Set<String> topics = mirrorTopics.get();
            for (String group : synced) {
                int p = SourceOffsetCommit.logPartitionOf(group, logPartitions);
                if (!positions.containsKey(p)) {
                    positions.put(p, startOf(new TopicPartition(SourceOffsetCommit.LOG, p)));
                    commits.put(p, new TransactionalCommits(mirror, p));
                }
            }
            long until = time.milliseconds() + TransactionLogFollower.MAX_STEP_MS;
            boolean caughtUp = true;
            for (int p : List.copyOf(positions.keySet())) {
                caughtUp &= follow(p, synced, topics, until);
            }
            problems.resolved(PROBLEM);
            return caughtUp;
        } catch (org.apache.kafka.common.errors.InterruptException e) {
            Thread.currentThread().interrupt(); // the sync is closing: nothing to report
            close();
        } catch (RuntimeException e) {
            problems.report(PROBLEM, e);
            close(); // new clients at the next attempt; the positions stay, so nothing is read twice or skipped
            notBeforeMs = time.milliseconds() + TransactionLogFollower.RETRY_MS;
        }
        return false;
    }

    /** The log's partition count; false (and a later attempt) if the source has no such topic yet. */
    private boolean describeLog() {
        TopicDescription d;
        try {
            d = admin.describeTopics(List.of(SourceOffsetCommit.LOG)).allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .get(SourceOffsetCommit.LOG);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
                return false; // looked at again at the next step
            }
            throw new org.apache.kafka.common.KafkaException(e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new org.apache.kafka.common.errors.TimeoutException("describing " + SourceOffsetCommit.LOG + " took over " + TIMEOUT_MS
                + " ms");
        } catch (InterruptedException e) {
            throw new org.apache.kafka.common.errors.InterruptException(e);
        }
        logPartitions = d.partitions().size();
        return logPartitions > 0;
    }

    /** Where to begin a partition of the log: the first record of the last {@link SourceTransaction#LONGEST_MS}, or its end. */
    private long startOf(TopicPartition tp) {
        try {
            ListOffsetsResult.ListOffsetsResultInfo since = admin.listOffsets(Map.of(tp,
                OffsetSpec.forTimestamp(time.milliseconds() - SourceTransaction.LONGEST_MS))).partitionResult(tp).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            return since.offset() >= 0 ? since.offset() : reader.range(tp).highWatermark();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new org.apache.kafka.common.KafkaException(e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new org.apache.kafka.common.errors.TimeoutException("listing the offsets of " + tp + " took over " + TIMEOUT_MS + " ms");
        } catch (InterruptedException e) {
            throw new org.apache.kafka.common.errors.InterruptException(e);
        }
    }

    /**
     * Reads one partition of the log from its position towards its high watermark, until {@code untilMs}. The position moves
     * batch by batch, so that after a failure the next attempt neither reads a batch twice nor skips one.
     *
     * @return true if the partition was read to its high watermark; false if the time ran out first (the next step goes on)
     */
    private boolean follow(int p, Set<String> synced, Set<String> topics, long untilMs) {
        TopicPartition tp = new TopicPartition(SourceOffsetCommit.LOG, p);
        RawLogReader.BatchStream batches = reader.stream(tp, positions.get(p), Long.MAX_VALUE);
        while (batches.hasNext()) {
            StoredBatch b = batches.next();
            List<SourceOffsetCommitRecord> committed = commits.get(p).read(b, c -> synced.contains(c.group()) && topics.contains(c.topic()),
                (reason, offset) -> problems.note("decode " + tp, "Mirror '" + mirror + "': skipping a record of the source's " + tp
                    + " at offset " + offset + " that does not decode (" + reason + "); a consistent stop keeps the synced offset of its group"));
            for (SourceOffsetCommitRecord r : committed) {
                ProducerRecord<byte[], byte[]> kept = new ProducerRecord<>(InternalTopics.TRANSACTIONS, mirror.getBytes(StandardCharsets.UTF_8),
                    RecordCodec.encodeOffsetCommit(r));
                kept.headers().add(SourceOffsetCommitRecord.KIND_HEADER, SourceOffsetCommitRecord.KIND.getBytes(StandardCharsets.UTF_8));
                producer.send(kept);
            }
            positions.put(p, b.nextOffset());
            if (time.milliseconds() >= untilMs) {
                return !batches.hasNext();
            }
        }
        return true;
    }

    @Override
    public void close() {
        Utils.closeQuietly(reader, "the reader of the source's committed offsets");
        if (admin != null) {
            admin.close(Duration.ofSeconds(1));
        }
        reader = null;
        admin = null;
    }
}
