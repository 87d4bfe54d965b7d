package io.clustermirror.broker.partition;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;

/**
 * Inputs of {@link PartitionStateMachine}: leadership changes, desired-state changes from
 * {@code __mirror_metadata}, and the outcomes of the {@link PartitionAction}s the executor ran.
 */
public sealed interface PartitionEvent {
    /**
     * The outcome of a procedure on the log ({@link PartitionAction.Prepare}, {@link PartitionAction.RepairDivergence},
     * {@link PartitionAction.RunStop}, {@link PartitionAction.StopUnmirrored}), tagged with the {@link MirrorPartition#generation()} it was issued in. An
     * outcome of an earlier generation arrives late: the machine ignores it.
     */
    sealed interface ProcedureOutcome extends PartitionEvent {
        long generation();
    }

    /**
     * This broker leads the destination partition at {@code leaderEpoch}.
     *
     * @param persisted       the state last recorded in {@code __mirror_state} for the partition; UNKNOWN if none
     *                        (null is read as UNKNOWN)
     * @param mirroredOffsets the record names a last mirrored offset: an earlier leader fetched into the log
     */
    record BecameLeader(int leaderEpoch, PartitionState persisted, boolean mirroredOffsets) implements PartitionEvent {
        public BecameLeader {
            persisted = persisted == null ? PartitionState.UNKNOWN : persisted;
        }
    }

    /** Another broker leads the destination partition now. */
    record BecameFollower() implements PartitionEvent {
    }

    /**
     * The image shows another state recorded for the partition in {@code __mirror_state} ({@code recorded}; UNKNOWN if
     * none), this leader's own or an earlier one's.
     */
    record RecordedStateChanged(PartitionState recorded) implements PartitionEvent {
        public RecordedStateChanged {
            recorded = recorded == null ? PartitionState.UNKNOWN : recorded;
        }
    }

    /** The operator's desired state changed; null when the topic left its mirror. */
    record DesiredChanged(DesiredState desired) implements PartitionEvent {
    }

    /** {@link PartitionAction.Prepare} aligned the log: mirroring may start. */
    record PrepareSucceeded(long generation) implements ProcedureOutcome {
    }

    /**
     * {@link PartitionAction.Prepare} failed.
     *
     * @param sourceUnreachable the source did not answer in time or the connection failed (Kafka's retriable errors): the
     *                          failure ends by itself once the source is back, so it never uses up the partition's retries
     */
    record PrepareFailed(long generation, String error, boolean sourceUnreachable) implements ProcedureOutcome {
        /** A failure that an answer of the source caused. */
        public PrepareFailed(long generation, String error) {
            this(generation, error, false);
        }
    }

    /**
     * The source's log no longer matches what was mirrored (an unclean leader election on the source): its leader
     * epoch {@code sourceEpoch}, the last one mirrored, ends at {@code sourceEpochEndOffset}. The fetcher has already
     * dropped the partition.
     */
    record SourceDiverged(int sourceEpoch, long sourceEpochEndOffset) implements PartitionEvent {
    }

    /** {@link PartitionAction.RepairDivergence} cut the log where it stops matching the source: mirroring goes on. */
    record RepairSucceeded(long generation) implements ProcedureOutcome {
    }

    record RepairFailed(long generation, String error) implements ProcedureOutcome {
    }

    /** The fetcher could not go on (source unreachable for long, source topic recreated, bad batch, ...). */
    record FetchFailed(String error) implements PartitionEvent {
    }

    /**
     * The source deleted records {@code [fromOffset, toOffset)} before they were mirrored (retention or deleteRecords moved
     * its log start to {@code toOffset}, past the destination's end). The fetcher has already dropped the partition.
     *
     * @param failOnLoss the mirror's {@code mirror.source.data.loss.policy} is {@code fail}
     */
    record SourceRecordsLost(long fromOffset, long toOffset, boolean failOnLoss) implements PartitionEvent {
    }

    /**
     * The source topic was deleted, or deleted and re-created with a new topic id ({@code error} names which). The fetcher
     * has already dropped the partition.
     */
    record SourceTopicGone(String error) implements PartitionEvent {
    }

    /** No fetch of the partition from the source succeeded for a while; {@code report} says since when and why. */
    record SourceUnavailable(String report) implements PartitionEvent {
    }

    /** A fetch from the source succeeded again after {@link SourceUnavailable}. */
    record SourceAvailable() implements PartitionEvent {
    }

    /** {@link PartitionAction.StartFetching} handed the partition to a fetcher: its log may hold mirrored data from now on. */
    record FetchingStarted() implements PartitionEvent {
    }

    /** The fetcher appended data or caught up: the partition is healthy. */
    record MadeProgress() implements PartitionEvent {
    }

    /**
     * The partition's progress (lag, lineage, the age of its unmirrored records; from the fetcher, or a probe of the source
     * while paused) changed since it was last recorded, or records are missing, and the periodic snapshot is due.
     */
    record ProgressSnapshotDue() implements PartitionEvent {
    }

    /**
     * What the record must show changed under the partition: a procedure truncated the log (describe shows the range, a
     * later failure must not lose it) or the fetcher mirrored a barrier (the followers' producer-state hygiene learns it
     * from the record).
     */
    record LineageChanged() implements PartitionEvent {
    }

    /**
     * The partition's record is gone with {@code __mirror_state} (deleted, re-created, or its records deleted) while the
     * desired state is intact: the leader records what it knows again.
     */
    record StateRecordLost() implements PartitionEvent {
    }

    /**
     * The operator asked to try the partition again now ({@code --recover}): a FAILED leader that a retry may help forgets
     * its failures and moves toward its desired state.
     */
    record RecoverRequested() implements PartitionEvent {
    }

    /** The retry scheduled by {@link PartitionAction.ScheduleRetry} is due. */
    record RetryDue() implements PartitionEvent {
    }

    /** The fetcher asked to stop by {@link PartitionAction.StopFetching} has stopped: no append is in flight. */
    record FetcherStopped() implements PartitionEvent {
    }

    /**
     * {@link PartitionAction.RunStop} finished (truncated to the LSO, barrier written, producer state reset), or
     * {@link PartitionAction.StopUnmirrored} did.
     */
    record StopSucceeded(long generation) implements ProcedureOutcome {
    }

    record StopFailed(long generation, String error) implements ProcedureOutcome {
    }
}
