package io.clustermirror.broker.partition;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;

import org.apache.kafka.common.TopicPartition;

import java.util.Objects;

/**
 * What this broker knows about one mirror partition: the input and output of {@link PartitionStateMachine}.
 * Immutable; every transition returns a new value.
 *
 * <p>Invariants kept by the state machine: {@code retryAtMs} is {@link #NO_RETRY} unless {@code state} is
 * {@link PartitionState#FAILED}; a FAILED partition has {@code failures >= 1} and a {@code lastError}; only a FAILED one
 * may be unrecoverable, and an unrecoverable one has no retry.
 * On a follower, {@code state} is the last state this broker saw as leader (kept for display only).
 * {@code generation} never decreases; a procedure on the log (alignment, divergence repair, stop) belongs to the
 * generation it was issued in and may change the log only while that generation is current (see
 * {@link PartitionStateMachine}).
 *
 * @param mirror      the mirror the partition belongs to (or belonged to, while {@code desired} is null)
 * @param partition   the destination (and source) topic partition
 * @param state       the actual state
 * @param leader      true while this broker is the destination partition's leader
 * @param leaderEpoch the destination leader epoch of the latest leadership seen, or -1
 * @param desired     what the operator asked for; null when the topic is in no mirror
 * @param failures    consecutive failures since the last progress (drives the retry backoff)
 * @param retryAtMs   when a FAILED partition retries, or {@link #NO_RETRY}
 * @param lastError   the last failure's message, or null
 * @param generation  the generation of the work on the partition's log
 * @param recorded    the partition's state in {@code __mirror_state} as the image last showed it (UNKNOWN if none)
 * @param mirroredInto this mirror has fetched into the log (under this leadership, or an earlier one as recorded): the
 *                    log may hold mirrored data, so a stop must truncate it and write a barrier
 * @param sourceUnavailable {@code lastError} reports that no fetch from the source succeeded for a while: the next
 *                    successful fetch clears it. (A {@code lastError} with no failures and without this flag reports
 *                    source records skipped: it stays until another error replaces it.)
 * @param recoverable false only for a FAILED partition that no retry can help, not even the operator's {@code --recover}:
 *                    its source topic was deleted or re-created
 */
public record MirrorPartition(String mirror, TopicPartition partition, PartitionState state, boolean leader,
                              int leaderEpoch, DesiredState desired, int failures, long retryAtMs, String lastError,
                              long generation, PartitionState recorded, boolean mirroredInto,
                              boolean sourceUnavailable, boolean recoverable) {
    public static final long NO_RETRY = -1L;

    public MirrorPartition {
        Objects.requireNonNull(mirror, "mirror");
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(recorded, "recorded");
        if (failures < 0) {
            throw new IllegalArgumentException("failures must not be negative: " + failures);
        }
        if (!recoverable && (state != PartitionState.FAILED || retryAtMs != NO_RETRY)) {
            throw new IllegalArgumentException("only a FAILED partition without a retry is unrecoverable, not " + state);
        }
    }

    /** A partition that any retry may help (every partition but one whose source topic is gone). */
    public MirrorPartition(String mirror, TopicPartition partition, PartitionState state, boolean leader, int leaderEpoch,
                           DesiredState desired, int failures, long retryAtMs, String lastError, long generation,
                           PartitionState recorded, boolean mirroredInto, boolean sourceUnavailable) {
        this(mirror, partition, state, leader, leaderEpoch, desired, failures, retryAtMs, lastError, generation, recorded,
            mirroredInto, sourceUnavailable, true);
    }

    /**
     * A partition this broker has just learned about: UNKNOWN, not leader, no failures, nothing recorded or mirrored.
     *
     * @param generation the generation to continue from: at least that of any earlier procedure on the partition's log,
     *                   so that none of them is mistaken for a current one
     */
    public static MirrorPartition unknown(String mirror, TopicPartition partition, DesiredState desired, long generation) {
        return new MirrorPartition(mirror, partition, PartitionState.UNKNOWN, false, -1, desired, 0, NO_RETRY, null,
            generation, PartitionState.UNKNOWN, false, false);
    }

    /** True while this broker fetches for the partition: only a leader in MIRRORING does. */
    public boolean fetching() {
        return leader && state == PartitionState.MIRRORING;
    }

    MirrorPartition withDesired(DesiredState newDesired) {
        return new MirrorPartition(mirror, partition, state, leader, leaderEpoch, newDesired, failures, retryAtMs,
            lastError, generation, recorded, mirroredInto, sourceUnavailable, recoverable);
    }

    /**
     * Leader at {@code epoch}; a new leadership starts with a clean failure record and knows of mirrored data only what
     * the record it found shows.
     */
    MirrorPartition asLeader(int epoch, PartitionState found, boolean foundMirroredInto) {
        return new MirrorPartition(mirror, partition, state, true, epoch, desired, 0, NO_RETRY, null, generation, found,
            foundMirroredInto, false, true);
    }

    MirrorPartition asFollower() {
        return new MirrorPartition(mirror, partition, state, false, leaderEpoch, desired, failures, retryAtMs,
            lastError, generation, recorded, mirroredInto, sourceUnavailable, recoverable);
    }

    /** In {@code next}, a state other than FAILED, so no retry is pending. */
    MirrorPartition to(PartitionState next) {
        return new MirrorPartition(mirror, partition, next, leader, leaderEpoch, desired, failures, NO_RETRY,
            lastError, generation, recorded, mirroredInto, sourceUnavailable);
    }

    /** FAILED; it tries again by itself at {@code retryAt}, or only when asked ({@link #NO_RETRY}: its retries are used up). */
    MirrorPartition failed(String error, long retryAt) {
        return new MirrorPartition(mirror, partition, PartitionState.FAILED, leader, leaderEpoch, desired,
            failures + 1, retryAt, error, generation, recorded, mirroredInto, false);
    }

    MirrorPartition withRecorded(PartitionState newRecorded) {
        return new MirrorPartition(mirror, partition, state, leader, leaderEpoch, desired, failures, retryAtMs, lastError,
            generation, newRecorded, mirroredInto, sourceUnavailable, recoverable);
    }

    /** A fetcher has taken the partition: from now on its log may hold mirrored data. */
    MirrorPartition asMirroredInto() {
        return new MirrorPartition(mirror, partition, state, leader, leaderEpoch, desired, failures, retryAtMs, lastError,
            generation, recorded, true, sourceUnavailable);
    }

    /** The next generation: a procedure issued now, or none in flight any more. */
    MirrorPartition nextGeneration() {
        return new MirrorPartition(mirror, partition, state, leader, leaderEpoch, desired, failures, retryAtMs, lastError,
            generation + 1, recorded, mirroredInto, sourceUnavailable, recoverable);
    }

    /** Past failures forgotten: the partition made progress, completed its stop, or the operator asked to try it again. */
    MirrorPartition healthy() {
        return new MirrorPartition(mirror, partition, state, leader, leaderEpoch, desired, 0, retryAtMs, null, generation, recorded,
            mirroredInto, false);
    }

    /**
     * Reports a problem of the source that is no failure of the partition (it goes on): records skipped, or the source
     * unavailable ({@code untilFetched}: the next successful fetch clears it).
     */
    MirrorPartition reporting(String problem, boolean untilFetched) {
        return new MirrorPartition(mirror, partition, state, leader, leaderEpoch, desired, failures, retryAtMs, problem,
            generation, recorded, mirroredInto, untilFetched);
    }

    /**
     * FAILED with no automatic retry ({@link #NO_RETRY}): a retry could only fail the same way until the operator changes
     * something (source records lost under the {@code fail} policy), or could copy another topic's data ({@code recoverable}
     * false: the source topic deleted or re-created, which only a stop or a new leader gets past).
     */
    MirrorPartition failedUntilAsked(String error, boolean recoverable) {
        return new MirrorPartition(mirror, partition, PartitionState.FAILED, leader, leaderEpoch, desired, failures + 1, NO_RETRY,
            error, generation, recorded, mirroredInto, false, recoverable);
    }
}
