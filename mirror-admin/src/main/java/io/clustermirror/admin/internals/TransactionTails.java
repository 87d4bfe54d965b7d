package io.clustermirror.admin.internals;

import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.fetch.RawLogReader;
import io.clustermirror.common.compat.SourceOffsetCommit;
import io.clustermirror.common.compat.SourceTransaction;
import io.clustermirror.common.records.SourceOffsetCommitRecord;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the ends of the destination partitions a stop would cut and analyses them with {@link TransactionCuts}: what a
 * failover dry-run shows of split transactions, and where a consistent stop cuts.
 *
 * <p>Only what can matter is read. From the data alone, nothing is split where no partition holds an open transaction
 * (every partition is cut at its end); a transaction the source's log shows over several selected partitions can be
 * split where one never mirrored its records. Every partition is read from the earlier of: {@code windowMs} before the
 * oldest open transaction's first record (a transaction of the source lasts at most the source's
 * {@code transaction.max.timeout.ms}, 15 minutes by default), and shortly before the oldest known transaction began. A
 * partition where a transaction to cut began before that is read from further back, doubling, down to its log start.
 */
public final class TransactionTails {
    /** How far back a partition is read at least, below its last stable offset, when it has to be read from further back. */
    static final long MIN_WINDOW_OFFSETS = 1_000;
    private static final int MAX_ROUNDS = 40;
    /**
     * How much earlier than the destination's offsets were read a transactional commit shown by nothing else must have
     * committed to be kept: the source's clock and this client's may differ by that much.
     */
    static final long COMMIT_CLOCK_MARGIN_MS = 1_000;

    /** The offsets of a spec on the destination; a partition whose offset cannot be read now is left out. */
    @FunctionalInterface
    public interface Offsets {
        Map<TopicPartition, Long> read(List<TopicPartition> partitions, OffsetSpec spec, IsolationLevel isolation) throws InterruptedException;
    }

    /**
     * What was found.
     *
     * @param analysis          the split transactions and the consistent cuts of the partitions whose offsets were read
     * @param lastStableOffsets where a plain stop would cut each of them
     * @param unread            partitions whose offsets could not be read now: not analysed, cut at their last stable offset
     */
    public record Result(TransactionCuts.Analysis analysis, Map<TopicPartition, Long> lastStableOffsets, List<TopicPartition> unread,
                         KnownSourceLog known, long offsetsReadAtMs) {
    }

    /** What the mirror's sync kept of the source's coordinator logs, read once the destination's offsets were read at a time. */
    @FunctionalInterface
    public interface SourceLogs {
        KnownSourceLog read(long offsetsReadAtMs) throws InterruptedException;
    }

    /**
     * The known transactions that committed over two or more of {@code partitions}, or over one and a group's offsets (a
     * commit the cut must not keep without the output written with it).
     */
    private static List<SourceTransaction> relevant(List<SourceTransaction> known, List<TopicPartition> partitions) {
        java.util.Set<TopicPartition> chosen = new java.util.HashSet<>(partitions);
        return known.stream().filter(SourceTransaction::commit).filter(t -> {
            long ours = t.partitions().stream().filter(chosen::contains).count();
            return ours >= 2 || ours == 1 && t.partitions().stream().anyMatch(tp -> tp.topic().equals(SourceOffsetCommit.LOG));
        }).toList();
    }

    private final RawLogReader log;
    private final Offsets offsets;
    private final long windowMs;

    private final Time time;

    public TransactionTails(RawLogReader log, Offsets offsets, long windowMs, Time time) {
        this.log = log;
        this.offsets = offsets;
        this.windowMs = windowMs;
        this.time = time;
    }

    /**
     * Reads and analyses the partitions a stop would cut together, with what the mirror's sync kept of the source's
     * coordinator logs ({@code sourceLogs}: the transactions it prepared, the offsets groups committed in transactions),
     * read once the destination's offsets were: every transaction that can lie below them was prepared before.
     */
    public Result analyse(List<TopicPartition> partitions, SourceLogs sourceLogs) throws InterruptedException {
        // The last stable offsets first: every marker of a transaction that ended below them is then below the ends.
        Map<TopicPartition, Long> stable = offsets.read(partitions, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
        Map<TopicPartition, Long> ends = offsets.read(partitions, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
        long offsetsReadAtMs = time.milliseconds();
        Map<TopicPartition, Long> logStarts = offsets.read(partitions, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
        KnownSourceLog sourceLog = sourceLogs.read(offsetsReadAtMs);
        List<SourceTransaction> known = sourceLog.transactions();
        List<SourceOffsetCommitRecord> commits = sourceLog.commits();
        List<TopicPartition> read = partitions.stream()
            .filter(tp -> stable.containsKey(tp) && ends.containsKey(tp) && logStarts.containsKey(tp)).toList();
        List<TopicPartition> unread = partitions.stream().filter(tp -> !read.contains(tp)).toList();
        Map<TopicPartition, Long> lso = new LinkedHashMap<>();
        read.forEach(tp -> lso.put(tp, Math.min(stable.get(tp), ends.get(tp))));

        long oldestOpen = Long.MAX_VALUE;
        for (TopicPartition tp : read) {
            if (lso.get(tp) < ends.get(tp)) {
                oldestOpen = Math.min(oldestOpen, oldestTransactionalRecord(tp, lso.get(tp), ends.get(tp)));
            }
        }
        List<SourceTransaction> relevant = relevant(known, read);
        if (oldestOpen == Long.MAX_VALUE && relevant.isEmpty()) {
            List<PartitionTail> untouched = read.stream()
                .map(tp -> new PartitionTail(tp, lso.get(tp), -1, false, lso.get(tp), ends.get(tp), List.of())).toList();
            return new Result(TransactionCuts.analyse(untouched, List.of(), commits, offsetsReadAtMs - COMMIT_CLOCK_MARGIN_MS), lso, unread,
                sourceLog, offsetsReadAtMs);
        }
        long fromMs = Math.max(0, Math.min(oldestOpen == Long.MAX_VALUE ? Long.MAX_VALUE : oldestOpen - windowMs,
            relevant.stream().mapToLong(t -> t.startMs() - TransactionCuts.CLOCK_MARGIN_MS).min().orElse(Long.MAX_VALUE)));
        Map<TopicPartition, Long> starts = new LinkedHashMap<>();
        Map<TopicPartition, Long> byTime = offsets.read(read, OffsetSpec.forTimestamp(fromMs), IsolationLevel.READ_UNCOMMITTED);
        for (TopicPartition tp : read) {
            long at = byTime.getOrDefault(tp, -1L);
            starts.put(tp, Math.max(logStarts.get(tp), at < 0 ? lso.get(tp) : Math.min(at, lso.get(tp))));
        }
        TransactionCuts.Analysis analysis = null;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            List<PartitionTail> tails = new ArrayList<>();
            for (TopicPartition tp : read) {
                tails.add(tail(tp, starts.get(tp), fromMs, logStarts.get(tp), lso.get(tp), ends.get(tp)));
            }
            analysis = TransactionCuts.analyse(tails, relevant, commits, offsetsReadAtMs - COMMIT_CLOCK_MARGIN_MS);
            if (analysis.needEarlierWindow().isEmpty()) {
                break;
            }
            for (TopicPartition tp : analysis.needEarlierWindow()) {
                long distance = Math.max(MIN_WINDOW_OFFSETS, 2 * (lso.get(tp) - starts.get(tp)));
                starts.put(tp, Math.max(logStarts.get(tp), lso.get(tp) - distance));
            }
        }
        return new Result(analysis, lso, unread, sourceLog, offsetsReadAtMs);
    }

    /** The timestamp of the oldest transactional record in {@code [from, to)}, or Long.MAX_VALUE if none. */
    private long oldestTransactionalRecord(TopicPartition tp, long from, long to) {
        long oldest = Long.MAX_VALUE;
        RawLogReader.BatchStream stream = log.stream(tp, from, to);
        while (stream.hasNext()) {
            StoredBatch b = stream.next();
            if (b.baseOffset() >= to) {
                break;
            }
            if (b.isTransactional() && !b.isControlBatch()) {
                oldest = Math.min(oldest, b.baseTimestamp());
            }
        }
        return oldest;
    }

    private PartitionTail tail(TopicPartition tp, long from, long fromMs, long logStart, long lastStable, long end) {
        List<PartitionTail.Batch> batches = new ArrayList<>();
        long windowStart = from;
        RawLogReader.BatchStream stream = log.stream(tp, from, end);
        while (stream.hasNext()) {
            StoredBatch b = stream.next();
            if (b.baseOffset() >= end) {
                break;
            }
            if (batches.isEmpty()) {
                windowStart = Math.min(from, b.baseOffset()); // the first batch is read whole
            }
            batches.add(PartitionTail.Batch.of(b));
        }
        return new PartitionTail(tp, windowStart, fromMs, windowStart <= logStart, lastStable, end, batches);
    }
}
