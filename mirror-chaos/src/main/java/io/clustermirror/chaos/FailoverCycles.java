package io.clustermirror.chaos;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.SplittableRandom;

/**
 * The operator's failover/failback cycles of a run on the failover topic, and what each reported. One cycle is four
 * {@link Step}s: {@link Step#FAILOVER} ({@code --stop} in the destination's mirror; producers and group move to the
 * destination), {@link Step#FAILBACK} ({@code --start} in the source's mirror from the destination: the source is cut
 * where the two stopped matching and mirrors the destination), {@link Step#RETURN} ({@code --stop} in the source's
 * mirror; producers and group move back) and {@link Step#RESTART} ({@code --start} in the destination's mirror again).
 * Some stops are planned ({@link #nextStopPlanned()}).
 * The loop runs them back to back on a thread of its own, with short pauses drawn from its own seeded random, while
 * the {@link FaultPlan}'s faults hit them at random points.
 */
final class FailoverCycles {
    /** The first cycle starts once the mirror had time to copy and the group to commit. */
    static final Duration FIRST_CYCLE = Duration.ofSeconds(15);
    static final long MIN_PAUSE_MS = 500;
    static final long MAX_PAUSE_MS = 3_000;

    /** One step of a cycle; a stop makes {@link #writable} the writable side, a start makes it mirror the other. */
    enum Step {
        FAILOVER(true, Workload.Side.DESTINATION),
        FAILBACK(false, Workload.Side.SOURCE),
        RETURN(true, Workload.Side.SOURCE),
        RESTART(false, Workload.Side.DESTINATION);

        /** True for a stop, false for a start. */
        final boolean stop;
        /** The cluster whose mirror the step commands: the side that becomes writable at a stop, that mirrors at a start. */
        final Workload.Side side;

        Step(boolean stop, Workload.Side side) {
            this.stop = stop;
            this.side = side;
        }
    }

    /**
     * What a step reported for one partition: the barrier a stop wrote (-1 at a start) and the range the step cut
     * ([from, to), -1 if none).
     */
    record PartitionCut(int partition, long barrier, long truncatedFrom, long truncatedTo) {
        /**
         * What a step cut, from what describe reports after it: describe keeps the last cut of the partition until another
         * one replaces it, so a range is this step's only where it holds the step's barrier (a stop cuts to its last stable
         * offset, writes there again the aborts of transactions that began below the cut, then the barrier, all within the
         * range it removed) or, for a start, where it begins at the barrier it aligned to ({@code alignedTo}); else the step
         * cut nothing.
         */
        static PartitionCut reported(int partition, boolean stop, long barrier, long truncatedFrom, long truncatedTo, long alignedTo) {
            boolean ours = truncatedFrom >= 0
                && (stop ? truncatedFrom <= barrier && barrier < truncatedTo : truncatedFrom == alignedTo);
            return new PartitionCut(partition, stop ? barrier : -1, ours ? truncatedFrom : -1, ours ? truncatedTo : -1);
        }

        /**
         * Where the copy of the other side ends on the side a stop made writable: the cut, below the batches the stop wrote
         * itself (aborts written again, then the barrier), or the barrier when the stop cut nothing.
         */
        long mirroredEnd() {
            return truncatedFrom >= 0 ? truncatedFrom : barrier;
        }
    }

    /**
     * One step as it ran: when, how long its command took until every partition reached its state, what it reported,
     * and for a stop the figures of the writes acknowledged by the side that was writable.
     */
    /**
     * @param consistent        a stop with {@code --consistent}: no committed transaction may be split
     * @param splitTransactions after a stop, the committed transactions of the side left that the side made writable holds
     *                          in part (a violation after a consistent stop; what a plain stop does)
     */
    record StepFigures(Step step, boolean planned, boolean consistent, long startedAtMs, long tookMs, List<PartitionCut> partitions,
                       HistoryChecker.WriteFigures writes, long splitTransactions) {
    }

    /** One completed cycle. */
    record Cycle(int index, long startedAtMs, long endedAtMs, List<StepFigures> steps) {
    }

    private final Random random;
    /** Whether the last unplanned stop was consistent. */
    private boolean lastConsistent;

    /** The cycles' draws for a run's {@code seed}: independent of the fault plan's draws. */
    FailoverCycles(long seed) {
        this.random = new Random(new SplittableRandom(seed ^ 0xC7C1E5L).nextLong());
    }

    /**
     * Whether the next unplanned stop is consistent ({@code --stop --consistent}): it cuts where no committed transaction
     * of the workload's transactions over two partitions is split. Every other one, the first included, so that even a
     * short run has one (a planned stop is consistent anyway); no draw, so a seed's draws are those it had before.
     */
    boolean nextStopConsistent() {
        lastConsistent = !lastConsistent;
        return lastConsistent;
    }

    /**
     * Whether the next stop is a planned failover: the producers of the side left stop first, and the stop waits until
     * the other side holds everything ({@code --stop --planned}), so that it cuts nothing and loses no acknowledged write.
     * One stop in three; the others are unplanned (the producers write until the stop, which cuts what was not mirrored).
     */
    boolean nextStopPlanned() {
        return random.nextInt(3) == 0;
    }

    /**
     * How the next stop of the destination's mirror comes under fire: the leader of one failover partition killed
     * (SIGKILL) a little after the command is recorded, while the stop runs, and started again a few seconds later. The
     * first such stop of a run always does (so that a short run has one), then one in three; a stop under fire is never
     * planned.
     *
     * @param first whether no stop of the run has come under fire yet
     * @return empty for a stop left alone
     */
    Optional<UnderFire> nextStopUnderFire(boolean first) {
        boolean underFire = first || random.nextInt(3) == 0;
        int partition = random.nextInt(ChaosRun.FAILOVER_PARTITIONS);
        long afterMs = UnderFire.MIN_DELAY_MS + (long) (random.nextDouble() * (UnderFire.MAX_DELAY_MS - UnderFire.MIN_DELAY_MS));
        long downMs = UnderFire.MIN_DOWN_MS + (long) (random.nextDouble() * (UnderFire.MAX_DOWN_MS - UnderFire.MIN_DOWN_MS));
        return underFire ? Optional.of(new UnderFire(partition, afterMs, downMs)) : Optional.empty();
    }

    /**
     * A stop under fire: the destination leader of failover partition {@code partition} is killed {@code afterMs} after the
     * stop command was recorded and started again {@code downMs} later. The partition is written by a transactional producer,
     * so a cut below its last stable offset would lose committed records.
     */
    record UnderFire(int partition, long afterMs, long downMs) {
        static final long MIN_DELAY_MS = 200;
        static final long MAX_DELAY_MS = 2_000;
        static final long MIN_DOWN_MS = 1_000;
        static final long MAX_DOWN_MS = 5_000;
    }

    /** The pause before the next step. */
    long nextPauseMs() {
        return MIN_PAUSE_MS + (long) (random.nextDouble() * (MAX_PAUSE_MS - MIN_PAUSE_MS));
    }
}
