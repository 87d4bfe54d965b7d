package io.clustermirror.broker.fetch;

import io.clustermirror.common.records.HeldDecision;
import io.clustermirror.common.records.HeldLogStarts;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.concurrent.locks.ReentrantLock;

/**
 * One mirrored partition on this broker. A new object per {@code addPartition}, so a response or a
 * pending task for an older incarnation is recognised by identity and dropped.
 *
 * <p>Ownership: the partition is either pending on the manager's coordinator thread or assigned to
 * exactly one fetcher thread; the owner alone changes {@link #fetchOffset} and {@link #lastFetchedEpoch}.
 * Appends happen under {@link #lock} after checking {@link #removed}, so once removal has taken the lock
 * and set the flag, no append is in flight and none can start.
 */
final class PartitionFetchState {
    final TopicPartition tp;
    final Uuid sourceTopicId;
    final int destLeaderEpoch;
    final ReentrantLock lock = new ReentrantLock();

    /** Next source offset to fetch (= destination log end after the last append). */
    volatile long fetchOffset;
    /** Source epoch of the last batch appended, or -1 if unknown. */
    volatile int lastFetchedEpoch;
    /** Last source end offset seen (HW or LSO), -1 if none yet. */
    volatile long sourceEndOffset = -1;
    /** The source's high watermark as last seen in a fetch response, -1 before the first. */
    volatile long sourceHighWatermark = -1;
    /** The source log start offset as last seen in a fetch response, -1 before the first. */
    volatile long sourceLogStartOffset = -1;
    /** The destination leader's log start offset, as found when the partition was added and as moved since. */
    volatile long destLogStartOffset;
    /**
     * The destination log start may move up to here without a hold, since the move deletes nothing: the destination holds
     * no record between its log start and this offset. -1 when its log had records when the partition was added; when it
     * had none, {@link Long#MAX_VALUE} until the fetcher appends the first (then that record's offset). Changed under
     * {@link #lock}.
     */
    volatile long freeLogStartUpTo;
    /** The moves of the source's log start held back ({@link io.clustermirror.common.MirrorConfig#SOURCE_DESTRUCTIVE_POLICY}). */
    volatile HeldLogStarts heldLogStarts;
    /** The operator's last decision on the topic's held changes, or null; applied to {@link #heldLogStarts} by the fetcher. */
    volatile HeldDecision heldDecision;
    /** Set under {@link #lock}: no more appends or reports. */
    volatile boolean removed;
    /** The next fetch must not be sent before this time (fetcher-local backoff after an error). */
    volatile long notBeforeMs;
    /** Consecutive transient errors, for the backoff. */
    volatile int errorCount;
    /** Set by the coordinator's periodic metadata refresh: the owning fetcher hands the partition back. */
    volatile boolean leaderMoved;
    /** The oldest unmirrored source timestamp last reported ({@link UnmirroredRecords}); {@link Long#MIN_VALUE} before the first. */
    long reportedOldestUnmirrored = Long.MIN_VALUE;
    /** When a fetch from the source last succeeded for it (or it was added). */
    volatile long lastFetchedMs;
    /** Why the last attempt to reach the source for it failed, or null. */
    volatile String sourceProblem;
    /** Set under {@link #lock}: the listener was told the source is unavailable, and not yet that it is back. */
    volatile boolean unavailableReported;
    /** Source broker currently fetching it, -1 while pending. */
    volatile int sourceBroker = -1;

    /**
     * @param destLogEndOffset the destination leader's log end offset: {@code fetchOffset}, or below it when the partition
     *                         goes on past records the source deleted before they were mirrored; at or below the log
     *                         start when the log holds no record
     */
    PartitionFetchState(TopicPartition tp, Uuid sourceTopicId, long fetchOffset, int destLeaderEpoch,
                        int lastFetchedEpoch, long nowMs, DestinationLogStart logStart, long destLogEndOffset) {
        this.tp = tp;
        this.sourceTopicId = sourceTopicId;
        this.fetchOffset = fetchOffset;
        this.destLeaderEpoch = destLeaderEpoch;
        this.lastFetchedEpoch = lastFetchedEpoch;
        this.lastFetchedMs = nowMs;
        this.destLogStartOffset = logStart.offset();
        this.heldLogStarts = logStart.held();
        this.heldDecision = logStart.decision();
        this.freeLogStartUpTo = logStart.offset() >= destLogEndOffset ? Long.MAX_VALUE : -1;
    }

    long lag() {
        long end = sourceEndOffset;
        return end < 0 ? 0 : Math.max(0, end - fetchOffset);
    }

    @Override
    public String toString() {
        return tp + "@" + fetchOffset;
    }
}
