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
 * {@link PartitionState#FAILED}; a FAILED partition has {@code failures >= 1} and a {@code lastError}.
 * On a follower, {@code state} is the last state this broker saw as leader (kept for display only).
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
 */
public record MirrorPartition(String mirror, TopicPartition partition, PartitionState state, boolean leader,
                              int leaderEpoch, DesiredState desired, int failures, long retryAtMs, String lastError) {
    public static final long NO_RETRY = -1L;

    public MirrorPartition {
        Objects.requireNonNull(mirror, "mirror");
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(state, "state");
        if (failures < 0) {
            throw new IllegalArgumentException("failures must not be negative: " + failures);
        }
    }

    /** A partition this broker has just learned about: UNKNOWN, not leader, no failures. */
    public static MirrorPartition unknown(String mirror, TopicPartition partition, DesiredState desired) {
        return new MirrorPartition(mirror, partition, PartitionState.UNKNOWN, false, -1, desired, 0, NO_RETRY, null);
    }

    /** True while this broker fetches for the partition: only a leader in MIRRORING does. */
    public boolean fetching() {
        return leader && state == PartitionState.MIRRORING;
    }

    MirrorPartition withDesired(DesiredState newDesired) {
        return new MirrorPartition(mirror, partition, state, leader, leaderEpoch, newDesired, failures, retryAtMs,
            lastError);
    }

    /** Leader at {@code epoch}; a new leadership starts with a clean failure record. */
    MirrorPartition asLeader(int epoch) {
        return new MirrorPartition(mirror, partition, state, true, epoch, desired, 0, NO_RETRY, null);
    }

    MirrorPartition asFollower() {
        return new MirrorPartition(mirror, partition, state, false, leaderEpoch, desired, failures, retryAtMs,
            lastError);
    }

    /** In {@code next}, a state other than FAILED, so no retry is pending. */
    MirrorPartition to(PartitionState next) {
        return new MirrorPartition(mirror, partition, next, leader, leaderEpoch, desired, failures, NO_RETRY,
            lastError);
    }

    MirrorPartition failed(String error, long retryAt) {
        return new MirrorPartition(mirror, partition, PartitionState.FAILED, leader, leaderEpoch, desired,
            failures + 1, retryAt, error);
    }

    /** Past failures forgotten: the partition made progress or completed its stop. */
    MirrorPartition healthy() {
        return new MirrorPartition(mirror, partition, state, leader, leaderEpoch, desired, 0, retryAtMs, null);
    }
}
