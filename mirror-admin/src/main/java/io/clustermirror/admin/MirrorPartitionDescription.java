package io.clustermirror.admin;

import io.clustermirror.common.PartitionState;

import java.util.List;

/**
 * The actual state of one mirror partition. Offsets and epochs are {@value #UNKNOWN} when not known or not
 * set. Everything except {@code destinationEndOffset} is what the partition's destination leader last
 * recorded, so it may be a few seconds old.
 *
 * @param partition            partition index
 * @param state                the partition's state ({@link PartitionState#UNKNOWN} until its leader reports)
 * @param sourceEndOffset      the source partition's end offset as last seen by the mirror (its high
 *                             watermark, or its last stable offset when mirroring read_committed)
 * @param destinationEndOffset the destination partition's end offset, read live when describing
 * @param lag                  {@code sourceEndOffset - destinationEndOffset}, never negative; unknown if either is
 * @param lastMirroredOffset   the last source offset appended on the destination
 * @param lastMirroredEpoch    the source leader epoch of the last appended batch
 * @param lastError            the partition's last error, or null
 * @param barrierOffset        offset of the producer-state barrier written when mirroring stopped
 * @param truncatedFromOffset  first offset removed when stopping truncated the log to its last stable offset
 * @param truncatedToOffset    end (exclusive) of the range removed when stopping
 * @param leaderId             the destination broker leading the partition when it last reported
 * @param lagMs                the age in milliseconds of the oldest source record the destination does not have yet
 *                             (the recovery point objective), 0 when caught up; it grows while the partition is paused
 *                             or failed and the source takes records; unknown until its leader reports it
 * @param heldLogStarts        the moves of the source's log start the destination holds back, the first to apply first;
 *                             empty when none is held
 * @param failedAttempts       for a FAILED partition, its failed attempts in a row (0 in any other state, or when its
 *                             leader did not record them)
 * @param nextRetryMs          for a FAILED partition, when it tries again by itself; {@value #UNKNOWN} when it does not:
 *                             its automatic retries are used up ({@code recoverMirrorTopics} tries it again), or
 *                             {@code recoverable} is false
 * @param recoverable          false only for a FAILED partition that no retry can help (its source topic was deleted or
 *                             re-created): stop it to keep its data
 */
public record MirrorPartitionDescription(int partition, PartitionState state, long sourceEndOffset,
                                         long destinationEndOffset, long lag, long lastMirroredOffset,
                                         int lastMirroredEpoch, String lastError, long barrierOffset,
                                         long truncatedFromOffset, long truncatedToOffset, int leaderId, long lagMs,
                                         List<HeldLogStart> heldLogStarts, int failedAttempts, long nextRetryMs,
                                         boolean recoverable) {
    /** The value of offsets, epochs and ids that are not known or not set. */
    public static final int UNKNOWN = -1;

    public MirrorPartitionDescription {
        heldLogStarts = heldLogStarts == null ? List.of() : List.copyOf(heldLogStarts);
    }

    /** A description without retries, as the API described partitions before them. */
    public MirrorPartitionDescription(int partition, PartitionState state, long sourceEndOffset, long destinationEndOffset, long lag,
                                      long lastMirroredOffset, int lastMirroredEpoch, String lastError, long barrierOffset,
                                      long truncatedFromOffset, long truncatedToOffset, int leaderId, long lagMs,
                                      List<HeldLogStart> heldLogStarts) {
        this(partition, state, sourceEndOffset, destinationEndOffset, lag, lastMirroredOffset, lastMirroredEpoch, lastError,
            barrierOffset, truncatedFromOffset, truncatedToOffset, leaderId, lagMs, heldLogStarts, 0, UNKNOWN, true);
    }

    /** A description of a partition that holds nothing back, as the API described partitions before held changes. */
    public MirrorPartitionDescription(int partition, PartitionState state, long sourceEndOffset, long destinationEndOffset, long lag,
                                      long lastMirroredOffset, int lastMirroredEpoch, String lastError, long barrierOffset,
                                      long truncatedFromOffset, long truncatedToOffset, int leaderId, long lagMs) {
        this(partition, state, sourceEndOffset, destinationEndOffset, lag, lastMirroredOffset, lastMirroredEpoch, lastError,
            barrierOffset, truncatedFromOffset, truncatedToOffset, leaderId, lagMs, List.of());
    }

    /** A description without the lag in milliseconds (unknown), as the API described partitions before it. */
    public MirrorPartitionDescription(int partition, PartitionState state, long sourceEndOffset, long destinationEndOffset, long lag,
                                      long lastMirroredOffset, int lastMirroredEpoch, String lastError, long barrierOffset,
                                      long truncatedFromOffset, long truncatedToOffset, int leaderId) {
        this(partition, state, sourceEndOffset, destinationEndOffset, lag, lastMirroredOffset, lastMirroredEpoch, lastError,
            barrierOffset, truncatedFromOffset, truncatedToOffset, leaderId, UNKNOWN);
    }
}
