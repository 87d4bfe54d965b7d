package io.clustermirror.broker.fetch;

import io.clustermirror.common.MirrorError;
import io.clustermirror.common.records.HeldLogStarts;
import org.apache.kafka.common.TopicPartition;

/** Progress and failures of mirror partitions; called on fetcher threads, so implementations must not block. */
public interface FetchListener {
    /**
     * Batches were appended.
     *
     * @param lastMirroredOffset last offset appended
     * @param lastSourceEpoch    source partitionLeaderEpoch of the last appended batch
     * @param firstSourceEpochStart if the appended data started a new source epoch, the offset where it started, else -1
     * @param sourceEndOffset    the source's end offset for this isolation level (HW or LSO) in the response
     */
    void onProgress(TopicPartition partition, long lastMirroredOffset, int lastSourceEpoch,
                    long firstSourceEpochStart, long sourceEndOffset);

    /** The source's end offset was seen (also when no data came back): keeps lag current. */
    void onSourceEndOffset(TopicPartition partition, long sourceEndOffset);

    /**
     * The source timestamp of the oldest record the destination does not have yet changed ({@link UnmirroredRecords}): after
     * a response was appended, or when the destination reached the source's end. The default ignores it.
     *
     * @param oldestUnmirroredTimestamp the timestamp, or {@code PartitionStateRecord.NOTHING_UNMIRRORED}
     */
    default void onOldestUnmirrored(TopicPartition partition, long oldestUnmirroredTimestamp) {
    }

    /**
     * The moves of the source's log start that the destination holds back changed: one was seen, or the destination
     * followed one ({@link io.clustermirror.common.MirrorConfig#SOURCE_DESTRUCTIVE_POLICY}). The default ignores it.
     */
    default void onLogStartHeld(TopicPartition partition, HeldLogStarts held) {
    }

    /** A MIRROR_PID_RESET barrier from the source was appended at {@code barrierOffset} and its producers cleared. */
    void onBarrier(TopicPartition partition, long barrierOffset);

    /**
     * The source deleted records {@code [fromOffset, toOffset)} before they were mirrored: its log start moved to
     * {@code toOffset}, past the destination's end (retention or deleteRecords). The partition was removed from its
     * fetcher; whether it goes on past them is not the fetchers' decision.
     */
    void onSourceRecordsLost(TopicPartition partition, long fromOffset, long toOffset);

    /**
     * The source topic was deleted ({@link MirrorError#SOURCE_TOPIC_DELETED}) or re-created
     * ({@link MirrorError#SOURCE_TOPIC_ID_CHANGED}); the partition was removed from its fetcher.
     */
    void onSourceTopicGone(TopicPartition partition, MirrorError error, String message);

    /** No fetch of the partition from the source succeeded for a while; {@code report} says since when and why. */
    void onSourceUnavailable(TopicPartition partition, String report);

    /** A fetch from the source succeeded again after {@link #onSourceUnavailable}. */
    void onSourceAvailable(TopicPartition partition);

    /** The partition failed and was removed from its fetcher; the others go on. */
    void onFailure(TopicPartition partition, MirrorError error, String message);

    /**
     * The source log diverged from what was mirrored (e.g. an unclean leader election on the source):
     * the source's epoch {@code sourceEpoch} ends at {@code sourceEpochEndOffset}, before data the mirror
     * already appended. The partition was removed from its fetcher. The default reports a failure.
     */
    default void onDivergence(TopicPartition partition, int sourceEpoch, long sourceEpochEndOffset) {
        onFailure(partition, MirrorError.UNKNOWN_SERVER_ERROR, "the source log of " + partition
            + " diverged from the mirrored data: source epoch " + sourceEpoch + " ends at offset "
            + sourceEpochEndOffset + " (unclean leader election on the source?); the destination must be "
            + "truncated to that offset before mirroring can go on");
    }
}
