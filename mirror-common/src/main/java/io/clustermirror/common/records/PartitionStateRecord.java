package io.clustermirror.common.records;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;

import java.util.List;

/**
 * The actual state of one mirror partition in {@code __mirror_state}, written by the partition's destination leader
 * under the log key {@link #logKey()} ({@code <mirror>/<topic>/<partition>@<leaderEpoch>}): one compaction key per
 * leader epoch, so compaction never lets a stale leader's late record replace a newer leader's. Readers keep the last
 * record of each log key and, per partition ({@link #key()}), the one with the highest {@code leaderEpoch} (see
 * {@link io.clustermirror.common.image.MirrorDelta}).
 *
 * @param mirror              mirror name
 * @param topic               topic name
 * @param partition           partition index
 * @param state               current state
 * @param leaderEpoch         destination leader epoch of the writer (fencing)
 * @param leaderId            destination broker id of the writer
 * @param sourceTopicId       source topic id the data came from
 * @param lastMirroredOffset  last source offset appended on the destination (-1 if none)
 * @param lastMirroredEpoch   source leader epoch of the last appended batch (LME; -1 if none)
 * @param sourceEpochs        source epoch lineage of the mirrored data
 * @param sourceLogEndOffset  source end offset as last seen (high watermark or LSO per isolation)
 * @param destLogEndOffset    destination log end offset as last seen
 * @param lastError           last error, or null
 * @param barrierOffset       offset of the MIRROR_PID_RESET barrier written at stop, or -1
 * @param truncatedFromOffset first offset removed by the stop's truncation to the LSO, or -1
 * @param truncatedToOffset   end (exclusive) of the range removed at stop, or -1
 * @param updatedMs           time of the write
 * @param oldestUnmirroredTimestamp the source timestamp of the oldest record the destination did not have at
 *                            {@code updatedMs} ({@link #NOTHING_UNMIRRORED} when it had everything the source had), or
 *                            null in a record of a writer that did not track it
 * @param stopCut             where the partition's current stop cuts the log, decided before its first truncation and kept
 *                            by every later attempt and leader of that stop; null when no stop is under way or the writer
 *                            did not record it
 * @param heldLogStarts       the source's log start moves this leader holds back ({@link HeldLogStarts}); empty when none
 *                            is held or the writer did not hold them
 * @param failureRetries      how a FAILED partition tries again; null in any other state, and in records of writers that did
 *                            not record it
 */
public record PartitionStateRecord(String mirror, String topic, int partition, PartitionState state,
                                   int leaderEpoch, int leaderId, String sourceTopicId,
                                   long lastMirroredOffset, int lastMirroredEpoch, List<EpochStart> sourceEpochs,
                                   long sourceLogEndOffset, long destLogEndOffset, String lastError,
                                   long barrierOffset, long truncatedFromOffset, long truncatedToOffset,
                                   long updatedMs, Long oldestUnmirroredTimestamp, StopCut stopCut,
                                   @JsonInclude(JsonInclude.Include.NON_EMPTY) HeldLogStarts heldLogStarts,
                                   @JsonInclude(JsonInclude.Include.NON_NULL) FailureRetries failureRetries) {
    /** {@link #oldestUnmirroredTimestamp()} of a destination that held everything the source had. */
    public static final long NOTHING_UNMIRRORED = -1L;

    public PartitionStateRecord {
        sourceEpochs = sourceEpochs == null ? List.of() : List.copyOf(sourceEpochs);
        heldLogStarts = heldLogStarts == null ? HeldLogStarts.NONE : heldLogStarts;
        if (failureRetries != null && state != PartitionState.FAILED) {
            throw new IllegalArgumentException("only a FAILED partition records its retries, not a " + state + " one");
        }
    }

    /** A record with no retries to show, as the writers before {@code failureRetries} wrote. */
    public PartitionStateRecord(String mirror, String topic, int partition, PartitionState state, int leaderEpoch, int leaderId,
                                String sourceTopicId, long lastMirroredOffset, int lastMirroredEpoch, List<EpochStart> sourceEpochs,
                                long sourceLogEndOffset, long destLogEndOffset, String lastError, long barrierOffset,
                                long truncatedFromOffset, long truncatedToOffset, long updatedMs, Long oldestUnmirroredTimestamp,
                                StopCut stopCut, HeldLogStarts heldLogStarts) {
        this(mirror, topic, partition, state, leaderEpoch, leaderId, sourceTopicId, lastMirroredOffset, lastMirroredEpoch, sourceEpochs,
            sourceLogEndOffset, destLogEndOffset, lastError, barrierOffset, truncatedFromOffset, truncatedToOffset, updatedMs,
            oldestUnmirroredTimestamp, stopCut, heldLogStarts, null);
    }

    /** A record that holds no log start move back, as the writers before {@code heldLogStarts} wrote. */
    public PartitionStateRecord(String mirror, String topic, int partition, PartitionState state, int leaderEpoch, int leaderId,
                                String sourceTopicId, long lastMirroredOffset, int lastMirroredEpoch, List<EpochStart> sourceEpochs,
                                long sourceLogEndOffset, long destLogEndOffset, String lastError, long barrierOffset,
                                long truncatedFromOffset, long truncatedToOffset, long updatedMs, Long oldestUnmirroredTimestamp,
                                StopCut stopCut) {
        this(mirror, topic, partition, state, leaderEpoch, leaderId, sourceTopicId, lastMirroredOffset, lastMirroredEpoch, sourceEpochs,
            sourceLogEndOffset, destLogEndOffset, lastError, barrierOffset, truncatedFromOffset, truncatedToOffset, updatedMs,
            oldestUnmirroredTimestamp, stopCut, HeldLogStarts.NONE);
    }

    /** A record of no stop under way ({@code stopCut} null). */
    public PartitionStateRecord(String mirror, String topic, int partition, PartitionState state, int leaderEpoch, int leaderId,
                                String sourceTopicId, long lastMirroredOffset, int lastMirroredEpoch, List<EpochStart> sourceEpochs,
                                long sourceLogEndOffset, long destLogEndOffset, String lastError, long barrierOffset,
                                long truncatedFromOffset, long truncatedToOffset, long updatedMs, Long oldestUnmirroredTimestamp) {
        this(mirror, topic, partition, state, leaderEpoch, leaderId, sourceTopicId, lastMirroredOffset, lastMirroredEpoch, sourceEpochs,
            sourceLogEndOffset, destLogEndOffset, lastError, barrierOffset, truncatedFromOffset, truncatedToOffset, updatedMs,
            oldestUnmirroredTimestamp, null);
    }

    /** A record that does not know the source's timestamps, as the writers before {@code oldestUnmirroredTimestamp} wrote. */
    public PartitionStateRecord(String mirror, String topic, int partition, PartitionState state, int leaderEpoch, int leaderId,
                                String sourceTopicId, long lastMirroredOffset, int lastMirroredEpoch, List<EpochStart> sourceEpochs,
                                long sourceLogEndOffset, long destLogEndOffset, String lastError, long barrierOffset,
                                long truncatedFromOffset, long truncatedToOffset, long updatedMs) {
        this(mirror, topic, partition, state, leaderEpoch, leaderId, sourceTopicId, lastMirroredOffset, lastMirroredEpoch, sourceEpochs,
            sourceLogEndOffset, destLogEndOffset, lastError, barrierOffset, truncatedFromOffset, truncatedToOffset, updatedMs, null, null);
    }

    /**
     * The age in milliseconds of the oldest source record the destination does not have (the mirror's recovery point
     * objective), 0 when it has everything, -1 when the record does not say. While the partition mirrors, the age as of
     * the record's write ({@code updatedMs}: its leader writes a new record every few seconds while records are missing);
     * while it does not fetch (paused, failed, preparing) the missing records only grow older, so the age at {@code nowMs}.
     * A stopped partition keeps the age it had when mirroring ended. Unknown while the leader cannot reach the source
     * ({@link #sourceUnavailable()}): the source may have taken records since, so no age the record holds is a bound.
     */
    public long lagMs(long nowMs) {
        if (oldestUnmirroredTimestamp == null || sourceUnavailable()) {
            return -1;
        }
        if (oldestUnmirroredTimestamp < 0) {
            return 0;
        }
        boolean frozen = state == PartitionState.MIRRORING || state == PartitionState.STOPPED;
        return Math.max(0, (frozen ? updatedMs : Math.max(nowMs, updatedMs)) - oldestUnmirroredTimestamp);
    }

    /**
     * The leader reports that no fetch from the source has succeeded for a while ({@code SOURCE_UNAVAILABLE}): what the
     * record says of the source (its end, the lag) is as of the last fetch, not now.
     */
    public boolean sourceUnavailable() {
        return lastError != null && lastError.startsWith(MirrorError.SOURCE_UNAVAILABLE.name() + ": ");
    }

    /** Replication lag in offsets as last seen, never negative. */
    public long lag() {
        return Math.max(0, sourceLogEndOffset - destLogEndOffset);
    }

    /** The partition this record is about: {@code <mirror>/<topic>/<partition>}, the key of the image's partition states. */
    public String key() {
        return stateKey(mirror, topic, partition);
    }

    /**
     * The record's key in {@code __mirror_state}: the partition and the writer's leader epoch. A leader epoch belongs to
     * one leader, which writes its records in order, so the last record of a log key is that leader's latest.
     */
    public String logKey() {
        return stateLogKey(mirror, topic, partition, leaderEpoch);
    }

    public static String stateKey(String mirror, String topic, int partition) {
        return mirror + "/" + topic + "/" + partition;
    }

    public static String stateLogKey(String mirror, String topic, int partition, int leaderEpoch) {
        return stateKey(mirror, topic, partition) + "@" + leaderEpoch;
    }
}
