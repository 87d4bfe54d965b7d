package io.clustermirror.broker.partition;

/**
 * Side effects requested by {@link PartitionStateMachine}, run in order by the single executor that owns all
 * I/O for mirror partitions. Each runs with the partition's leader epoch of the {@link Transition} that
 * issued it, so that an action of an old leadership is fenced by Kafka itself. The procedures on the log
 * ({@link Prepare}, {@link RepairDivergence}, {@link RunStop}, {@link StopUnmirrored}) also run with the transition's
 * {@link MirrorPartition#generation()}: they change the log only while it is current, and report their outcome
 * with it ({@link PartitionEvent.ProcedureOutcome}).
 *
 * <p>Actions may be issued again for the same partition (a retry, a new leader epoch, a broker restart
 * half-way through), so each must be idempotent.
 */
public sealed interface PartitionAction {
    /**
     * Align the destination log with the source before mirroring (truncate to the last mirrored epoch/offset
     * as recorded, check the source topic id); the executor then posts {@link PartitionEvent.PrepareSucceeded}
     * or {@link PartitionEvent.PrepareFailed}.
     */
    record Prepare() implements PartitionAction {
    }

    /**
     * Cut the log where the source's epoch {@code sourceEpoch} ends at {@code sourceEpochEndOffset}, once the batches
     * confirm it, on the leader and every in-sync follower; the executor then posts
     * {@link PartitionEvent.RepairSucceeded} (mirroring goes on from the new log end) or {@link PartitionEvent.RepairFailed}.
     */
    record RepairDivergence(int sourceEpoch, long sourceEpochEndOffset) implements PartitionAction {
    }

    /**
     * Add the partition to the mirror's fetchers, fetching from the destination log end; the executor posts
     * {@link PartitionEvent.FetchingStarted} once a fetcher has it, or {@link PartitionEvent.FetchFailed}.
     */
    record StartFetching() implements PartitionAction {
    }

    /**
     * Hand the partition back to a fetcher past source records {@code [fromOffset, toOffset)} that the source deleted
     * before they were mirrored: fetching goes on at {@code toOffset}, and the destination's log start follows the
     * source's once it has that far, as for any source log start. The skipped range is counted in the fetchers' metrics.
     */
    record SkipLostRecords(long fromOffset, long toOffset) implements PartitionAction {
    }

    /** Remove the partition from the fetchers; the executor posts {@link PartitionEvent.FetcherStopped} after it. */
    record StopFetching() implements PartitionAction {
    }

    /**
     * Make the partition a normal topic partition: truncate to the LSO, append the MIRROR_PID_RESET barrier,
     * reset producer state; the executor then posts {@link PartitionEvent.StopSucceeded} or
     * {@link PartitionEvent.StopFailed}. Idempotent: a stop that finds its barrier already written after
     * the last mirrored data does not write another.
     */
    record RunStop() implements PartitionAction {
    }

    /**
     * Make a partition this mirror never fetched into a normal topic partition: its log holds only its own data, so
     * nothing is truncated and no barrier is written. The executor waits until no change of a superseded procedure runs
     * (a preparation's truncation), then posts {@link PartitionEvent.StopSucceeded}.
     */
    record StopUnmirrored() implements PartitionAction {
    }

    /** Write the partition's current state to {@code __mirror_state}, with its leader epoch. */
    record PersistState() implements PartitionAction {
    }

    /** Post {@link PartitionEvent.RetryDue} at {@code atMs}. */
    record ScheduleRetry(long atMs) implements PartitionAction {
    }
}
