package io.clustermirror.broker.partition;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;

/**
 * Inputs of {@link PartitionStateMachine}: leadership changes, desired-state changes from
 * {@code __mirror_metadata}, and the outcomes of the {@link PartitionAction}s the executor ran.
 */
public sealed interface PartitionEvent {
    /**
     * This broker leads the destination partition at {@code leaderEpoch}.
     *
     * @param persisted the state last recorded in {@code __mirror_state} for the partition; UNKNOWN if none
     *                  (null is read as UNKNOWN)
     */
    record BecameLeader(int leaderEpoch, PartitionState persisted) implements PartitionEvent {
        public BecameLeader {
            persisted = persisted == null ? PartitionState.UNKNOWN : persisted;
        }
    }

    /** Another broker leads the destination partition now. */
    record BecameFollower() implements PartitionEvent {
    }

    /** The operator's desired state changed; null when the topic left its mirror. */
    record DesiredChanged(DesiredState desired) implements PartitionEvent {
    }

    /** {@link PartitionAction.Prepare} aligned the log: mirroring may start. */
    record PrepareSucceeded() implements PartitionEvent {
    }

    record PrepareFailed(String error) implements PartitionEvent {
    }

    /** The fetcher could not go on (source unreachable for long, source topic recreated, bad batch, ...). */
    record FetchFailed(String error) implements PartitionEvent {
    }

    /** The fetcher appended data or caught up: the partition is healthy. */
    record MadeProgress() implements PartitionEvent {
    }

    /** The retry scheduled by {@link PartitionAction.ScheduleRetry} is due. */
    record RetryDue() implements PartitionEvent {
    }

    /** The fetcher asked to stop by {@link PartitionAction.StopFetching} has stopped: no append is in flight. */
    record FetcherStopped() implements PartitionEvent {
    }

    /** {@link PartitionAction.RunStop} finished: truncated to the LSO, barrier written, producer state reset. */
    record StopSucceeded() implements PartitionEvent {
    }

    record StopFailed(String error) implements PartitionEvent {
    }
}
