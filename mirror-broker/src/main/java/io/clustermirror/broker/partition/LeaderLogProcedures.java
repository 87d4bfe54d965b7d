package io.clustermirror.broker.partition;

import io.clustermirror.broker.bridge.LeaderLogState;
import io.clustermirror.broker.bridge.LeaderLogs;
import io.clustermirror.broker.bridge.NotLeaderException;
import io.clustermirror.broker.bridge.ReplicaAssignment;
import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.TransactionMarker;
import io.clustermirror.common.records.StopCut;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.Map;

/**
 * The work on a destination leader's log that takes more than one step and waits for its followers: the
 * alignment with the source before mirroring into a log that holds data ({@link #alignWithSource}) and the stop.
 * Each runs under a {@link LogFence.Permit}: every change of the log goes through it, and every wait checks it, so a
 * superseded procedure stops before its next step with {@link LogFence.SupersededException}.
 *
 * <p>The STOPPING work, after the fetcher was removed ({@link #beginStop}, then {@link #completeStop}):
 * <ol>
 *   <li>wait until the in-sync followers hold the whole log (HW = LEO), so the last stable offset is final;</li>
 *   <li>decide the cut: the last stable offset, recorded in {@code __mirror_state} ({@link StopCut}) before anything is
 *       truncated, or the cut an earlier attempt of the same stop recorded (a retry, or a new leader after a crash, a
 *       shutdown, an election or a handover), never a lower one;</li>
 *   <li>truncate to the cut: no mirrored transaction is left open;</li>
 *   <li>wait until every in-sync follower has truncated too (their log ends at or below the leader's);</li>
 *   <li>if a replica out of the ISR may hold records of the current leader epoch past the cut, hand the leadership to
 *       an in-sync replica ({@link LeadershipHandover}), which runs the stop again in a new epoch;</li>
 *   <li>append the MIRROR_PID_RESET barrier right after the last mirrored record;</li>
 *   <li>remove the mirrored producers (last write before the barrier) from the leader's producer state;</li>
 *   <li>wait until the in-sync followers hold the barrier (they clean their own producer state).</li>
 * </ol>
 * Invariant: every attempt of one stop cuts at the same offset, the last stable offset its first attempt found, so the
 * barrier never lands below it. The last stable offset cannot serve again after a cut: a committed transaction that began
 * below the cut and whose commit marker lay above it is open again in the producer state rebuilt by the truncation.
 * Idempotent: a barrier already at the log end (a stop interrupted by a leader change) is not written again,
 * and nothing is truncated then. Runs on its own thread: the waits take up to {@link #WAIT_MS} each.
 *
 * <p>Invariant: whenever a replica outside the ISR may hold mirrored records of the current leader epoch, the barrier is
 * the first batch of a newer epoch than theirs. Kafka's follower divergence check (the fetch's last fetched epoch against
 * the leader's epoch history) then truncates such a replica to the barrier's offset when it returns, before it can join
 * the ISR: no restart, race with the extension or lost local write can bring the truncated records back. Only when no
 * other in-sync replica can take the leadership does the barrier go at the current epoch, and the returning replica is
 * left to {@link ProducerStateHygiene}'s repair. The same holds for a cut of the alignment: the first batch after it
 * starts a newer epoch than any a replica outside the ISR may hold past it (else a returning replica whose epoch the
 * leader never left would keep the truncated records, since its fetch position looks like a prefix of the leader's log).
 */
final class LeaderLogProcedures {
    private static final Logger log = LoggerFactory.getLogger(LeaderLogProcedures.class);
    static final long WAIT_MS = 30_000;
    private static final long POLL_MS = 20;

    /** What a completed stop did: where the barrier is and which range (possibly empty) was truncated. */
    record Outcome(long barrierOffset, long truncatedFromOffset, long truncatedToOffset) {
    }

    /** Reports a truncation as soon as it happened, so that a later failure does not lose its range. */
    interface TruncationListener {
        void truncated(long fromOffset, long toOffset);
    }

    /** Moves a partition's leadership to another in-sync replica ({@link LeadershipHandover#moveTo}). */
    interface LeadershipMover extends AutoCloseable {
        void moveTo(TopicPartition tp, java.util.List<Integer> replicas, int target) throws StepTimeoutException, InterruptedException;

        /** Releases the clients the moves use, if any. */
        @Override
        default void close() {
        }
    }

    private final LeaderLogs broker;
    private final LeadershipMover handover;
    private final Time time;
    private volatile boolean closing;

    /** @param time the clock of the waits' deadlines and polls, and of the barrier's timestamp */
    LeaderLogProcedures(LeaderLogs broker, LeadershipMover handover, Time time) {
        this.broker = broker;
        this.handover = handover;
        this.time = time;
    }

    /** Where a stop stands after its first step ({@link #beginStop}). */
    sealed interface StopStart {
    }

    /** The barrier already ends the log (an earlier attempt wrote it): the stop is complete. */
    record AlreadyStopped(Outcome outcome) implements StopStart {
    }

    /**
     * The stop cuts at {@code cut}: an earlier attempt's cut, or the last stable offset this attempt found. A cut decided now
     * that removes records must be recorded before anything is truncated ({@code mustRecord}); one that removes nothing
     * need not be (no truncation can lower the last stable offset that a later attempt reads).
     */
    record CutAt(StopCut cut, boolean mustRecord) implements StopStart {
    }

    /**
     * The stop's first step: waits until the in-sync followers hold the whole log (so that the last stable offset is final)
     * and decides the cut. An earlier attempt's cut ({@code decided}, as {@code __mirror_state} recorded it) is taken as it
     * is, never a lower one: the last stable offset read after that cut may be lower, because the cut removed the commit
     * marker of a transaction that began below it, and those records are committed. Changes nothing.
     *
     * <p>A consistent stop chose the cut of each partition ({@code chosenCut}, -1 for none): taken if it lies at or below
     * the last stable offset, which it does unless this leader lost records (then the last stable offset, as for any
     * stop). Below the last stable offset the cut keeps only transactions that are whole on every partition stopped with
     * it; the aborts it removes of transactions that began below it are written again like a plain stop's.
     *
     * @throws CutRefusedException if this leader's log ends below the decided cut: records the stop keeps are not all here
     */
    StopStart beginStop(String mirror, TopicPartition tp, int leaderEpoch, LogFence.Permit permit, java.util.Optional<StopCut> decided,
                        long chosenCut)
            throws NotLeaderException, StepTimeoutException, InterruptedException, LogFence.SupersededException, CutRefusedException {
        permit.check(); // a stop superseded while queued does nothing
        await(tp, leaderEpoch, permit, s -> s.highWatermark() == s.logEndOffset(),
            "the in-sync followers did not replicate the log end");
        LeaderLogState state = leaderState(tp, leaderEpoch);
        StoredBatch last = lastBatch(tp, state);
        if (last != null && BarrierBatch.isBarrier(last)) {
            log.info("Mirror '{}' partition {}: the barrier is already at offset {}", mirror, tp, last.baseOffset());
            StopCut made = decided.orElse(new StopCut(last.baseOffset(), last.baseOffset()));
            return new AlreadyStopped(finish(mirror, tp, leaderEpoch, permit, last.baseOffset(), made));
        }
        if (decided.isEmpty()) {
            long offset = state.lastStableOffset();
            if (chosenCut >= 0 && chosenCut <= offset) {
                offset = Math.max(chosenCut, state.logStartOffset());
                log.info("Mirror '{}' partition {}: the consistent stop cuts at offset {} (the last stable offset is {}, the log end {})",
                    mirror, tp, offset, state.lastStableOffset(), state.logEndOffset());
            } else if (chosenCut >= 0) {
                log.warn("Mirror '{}' partition {}: the consistent stop chose offset {}, above this leader's last stable offset {} "
                    + "(records lost by an unclean election?); cutting at the last stable offset, which may split a transaction "
                    + "that other partitions keep", mirror, tp, chosenCut, offset);
            }
            StopCut cut = new StopCut(offset, state.logEndOffset(), firstAbortsPerProducer(tp, offset, state.logEndOffset()));
            return new CutAt(cut, cut.removesRecords());
        }
        StopCut cut = decided.get();
        if (state.logEndOffset() < cut.offset()) {
            String refusal = "refusing to stop " + tp + " at offset " + state.logEndOffset() + " on broker " + broker.nodeId()
                + ": the stop decided to keep the log up to offset " + cut.offset() + ", but this replica's log ends at "
                + state.logEndOffset() + ", so records [" + state.logEndOffset() + ", " + cut.offset() + ") are missing here (an "
                + "unclean election?); the stop is retried, and goes on once a replica that holds them leads the partition";
            log.error("Mirror '{}' partition {}: {}", mirror, tp, refusal);
            throw new CutRefusedException(refusal);
        }
        log.info("Mirror '{}' partition {}: continuing the stop whose cut at offset {} an earlier attempt decided (the log ended "
            + "at {} then, {} now; the last stable offset here is {}: lower when that cut removed the commit marker of a "
            + "transaction that began below it, whose committed records stay)", mirror, tp, cut.offset(), cut.logEnd(),
            state.logEndOffset(), state.lastStableOffset());
        return new CutAt(cut, false);
    }

    /**
     * The rest of the stop, once its cut is recorded: truncates to the cut on the leader and its in-sync followers, hands the
     * leadership over if a replica out of the ISR may hold records past it, appends the barrier there and cleans the
     * producer state.
     *
     * @throws NotLeaderException   if leadership moved, or this stop handed it over (the new leader runs the stop)
     * @throws StepTimeoutException  if a wait timed out; retrying is safe
     * @throws LogFence.SupersededException if a later procedure superseded this stop
     */
    Outcome completeStop(String mirror, TopicPartition tp, int leaderEpoch, LogFence.Permit permit, String sourceClusterId,
                         StopCut cut, TruncationListener listener)
            throws NotLeaderException, StepTimeoutException, InterruptedException, LogFence.SupersededException {
        long end = leaderState(tp, leaderEpoch).logEndOffset();
        if (cut.offset() < end) {
            log.info("Mirror '{}' partition {}: truncating to offset {} (the last stable offset when the stop began, or a "
                + "consistent stop's cut), removing offsets [{}, {}); evidence: the stop's cut, recorded before any truncation",
                mirror, tp, cut.offset(), cut.offset(), end);
        }
        hold(TestOnlyStopHold.Step.BEFORE_CUT, tp, leaderEpoch);
        boolean truncatedNow = truncate(tp, leaderEpoch, permit, cut.offset(), listener);
        handOverIfAReplicaMissedTheCut(mirror, tp, leaderEpoch, permit, truncatedNow);
        rewriteAbortsOfTransactionsBelowTheCut(mirror, tp, leaderEpoch, permit, cut);
        hold(TestOnlyStopHold.Step.AFTER_CUT, tp, leaderEpoch);
        long barrierOffset = leaderState(tp, leaderEpoch).logEndOffset();
        ByteBuffer barrier = BarrierBatch.build(barrierOffset, leaderEpoch, sourceClusterId, time.milliseconds()).bytes();
        permit.change(() -> broker.appendAsLeader(tp, leaderEpoch, barrier));
        log.info("Mirror '{}' partition {}: wrote the MIRROR_PID_RESET barrier at offset {} (source cluster {})",
            mirror, tp, barrierOffset, sourceClusterId);
        hold(TestOnlyStopHold.Step.AFTER_BARRIER, tp, leaderEpoch);
        return finish(mirror, tp, leaderEpoch, permit, barrierOffset, cut);
    }

    /**
     * What an alignment left: the log end, and the last batch found identical on both sides (its end and the source's
     * leader epoch of it; -1 when none was compared), from which a lost lineage is restored.
     */
    record Aligned(long logEnd, long lastIdenticalEnd, int sourceEpoch) {
    }

    /**
     * Truncates the log where it provably stops matching the source, on the leader and on every in-sync follower, and
     * keeps everything when nothing is proven. A cut the lineage proposes is confirmed against the batches first; one
     * the batches contradict (a stale lineage) gives way to the batch comparison.
     *
     * @param source the source's log of the partition
     */
    Aligned alignWithSource(String mirror, TopicPartition tp, int leaderEpoch, LogFence.Permit permit, LogAlignment.Plan plan,
                            LogComparison.BatchReader source, TruncationListener listener) throws Exception {
        permit.check();
        LeaderLogState state = leaderState(tp, leaderEpoch);
        long start = state.logStartOffset();
        long end = state.logEndOffset();
        LogComparison.BatchReader destination = (from, to) -> localBatches(tp, from, to);
        LogComparison.Result compared = null;
        Cut cut = null;
        if (plan instanceof LogAlignment.Propose proposed) {
            java.util.Optional<String> contradiction = LogComparison.contradicts(proposed.cut().offset(), end, destination, source);
            if (contradiction.isEmpty()) {
                cut = proposed.cut();
            } else {
                log.warn("Mirror '{}' partition {}: not truncating to offset {} as the {} suggests ({}): {}; comparing the batches "
                    + "instead", mirror, tp, proposed.cut().offset(), proposed.cut().evidence(), proposed.cut().proof(), contradiction.get());
                compared = LogComparison.search(proposed.cut().offset(), end, destination, source);
            }
        } else if (plan instanceof LogAlignment.Compare) {
            compared = LogComparison.search(start, end, destination, source);
        }
        if (compared != null && compared.diverged()) {
            cut = new Cut(Math.max(start, compared.firstDifferent()), Cut.Evidence.BATCH_COMPARISON, compared.difference());
        }
        if (compared != null && !compared.diverged()) {
            log.info("Mirror '{}' partition {}: the log [{}, {}) matches the source's up to offset {} by batch comparison; nothing "
                + "is truncated", mirror, tp, start, end, compared.lastIdenticalEnd());
        }
        if (cut != null && cut.offset() < end) {
            log.info("Mirror '{}' partition {}: truncating to offset {} where this log and the source's diverge, removing [{}, {}); "
                + "evidence: {} ({})", mirror, tp, cut.offset(), cut.offset(), end, cut.evidence(), cut.proof());
            truncate(tp, leaderEpoch, permit, cut.offset(), listener);
            handOverIfAReplicaMissedTheCut(mirror, tp, leaderEpoch, permit, true);
        }
        long newEnd = leaderState(tp, leaderEpoch).logEndOffset();
        return compared == null ? new Aligned(newEnd, -1, -1) : new Aligned(newEnd, compared.lastIdenticalEnd(), compared.sourceEpoch());
    }

    /**
     * Hands the leadership to an in-sync replica when a replica outside the ISR may hold records of the current leader
     * epoch past the log end: the log ends with a batch of that epoch, or this leader has just truncated records it may
     * have written in it (the replica missed this truncation, or an earlier attempt's). The next batch must then start a
     * new epoch (see the class invariant).
     *
     * @param truncatedNow whether this procedure has just truncated the log
     * @throws NotLeaderException once the leadership was handed over
     */
    private void handOverIfAReplicaMissedTheCut(String mirror, TopicPartition tp, int leaderEpoch, LogFence.Permit permit,
                                                boolean truncatedNow)
            throws NotLeaderException, StepTimeoutException, InterruptedException, LogFence.SupersededException {
        LeaderLogState state = leaderState(tp, leaderEpoch);
        StoredBatch last = lastBatch(tp, state);
        if (!truncatedNow && (last == null || last.partitionLeaderEpoch() != leaderEpoch)) {
            return; // nothing of this epoch is in the log or was just removed from it: the next batch starts it
        }
        ReplicaAssignment assignment = broker.replicaAssignment(tp, leaderEpoch);
        java.util.List<Integer> replicas = assignment.replicas();
        java.util.Set<Integer> inSync = broker.inSyncFollowerLogEndOffsets(tp, leaderEpoch).keySet();
        java.util.List<Integer> outOfSync = replicas.stream().filter(r -> r != broker.nodeId() && !inSync.contains(r)).toList();
        if (outOfSync.isEmpty()) {
            return;
        }
        // The preferred replica if it is in sync (a plain preferred election), else the first in-sync one.
        java.util.Optional<Integer> target = replicas.stream().filter(inSync::contains).findFirst();
        String cannot = target.isEmpty() ? "no other replica is in sync"
            : assignment.reassigning() && !replicas.get(0).equals(target.get())
                ? "a reassignment is under way, which reordering the replicas would change" : null;
        if (cannot != null) {
            log.warn("Mirror '{}' partition {}: replica(s) {} are out of the ISR and may hold records past offset {}, but {} to "
                + "take the leadership and start a new leader epoch; going on at epoch {}. After a stop such a replica is truncated to "
                + "the barrier offset when it returns, by this extension on its broker; after an alignment's cut, reassign it away "
                + "or let it catch up before it can lead", mirror, tp, outOfSync, state.logEndOffset(), cannot, leaderEpoch);
            return;
        }
        permit.check();
        log.info("Mirror '{}' partition {}: replica(s) {} are out of the ISR and may hold records of leader epoch {} past "
            + "offset {}; handing the leadership to in-sync replica {} so that the next batch starts a new leader epoch and Kafka "
            + "truncates those replicas to it when they return", mirror, tp, outOfSync, leaderEpoch, state.logEndOffset(), target.get());
        handover.moveTo(tp, replicas, target.get());
        throw new NotLeaderException("broker " + broker.nodeId() + " handed the leadership of " + tp + " to broker " + target.get()
            + " after truncating it to offset " + state.logEndOffset());
    }

    /**
     * The first transaction marker of each producer in {@code [from, to)} of the local leader's log, where it is an ABORT,
     * in log order: read batch by batch, keeping only markers, since the range holds whole open transactions.
     */
    private java.util.List<TransactionMarker> firstAbortsPerProducer(TopicPartition tp, long from, long to) {
        java.util.Map<Long, TransactionMarker> first = new java.util.LinkedHashMap<>();
        forEachLocalBatch(tp, from, to, b -> {
            if (b.baseOffset() >= from && b.isControlBatch()) {
                TransactionMarker.of(b).ifPresent(m -> first.putIfAbsent(m.producerId(), m));
            }
        });
        return first.values().stream().filter(m -> !m.commit()).toList();
    }

    /**
     * Writes again, at the log end (the cut), the abort of each transaction that began below the cut and whose abort marker
     * the cut removed: open in the producer state the truncation rebuilt, with an ABORT as its producer's first marker past
     * the cut. Without it those records would read as committed once the barrier clears the producer state. A transaction
     * open here whose first marker past the cut was a COMMIT keeps its records below the cut, committed, as before the
     * stop. Idempotent: a retry truncates to the cut first, so it writes the same markers again at the same offsets.
     */
    private void rewriteAbortsOfTransactionsBelowTheCut(String mirror, TopicPartition tp, int leaderEpoch, LogFence.Permit permit,
                                                        StopCut cut)
            throws NotLeaderException, LogFence.SupersededException {
        if (cut.abortsPastCut().isEmpty()) {
            return;
        }
        java.util.Map<Long, Long> open = broker.openTransactionStarts(tp, leaderEpoch);
        for (TransactionMarker abort : cut.abortsPastCut()) {
            Long begun = open.get(abort.producerId());
            if (begun == null) {
                continue; // its transaction lay wholly past the cut, or ended below it: nothing of it is open here
            }
            long offset = leaderState(tp, leaderEpoch).logEndOffset();
            ByteBuffer marker = abort.toBatch(offset, leaderEpoch).bytes();
            permit.change(() -> broker.appendAsLeader(tp, leaderEpoch, marker));
            log.info("Mirror '{}' partition {}: wrote the ABORT marker of producer {} (epoch {}) again at offset {}: its transaction "
                + "began at offset {}, below the cut, and the source aborted it at an offset the cut removed", mirror, tp,
                abort.producerId(), abort.producerEpoch(), offset, begun);
        }
    }

    /** The local leader's batches that hold offsets in {@code [from, to)}. */
    private java.util.List<StoredBatch> localBatches(TopicPartition tp, long from, long to) {
        java.util.List<StoredBatch> out = new java.util.ArrayList<>();
        forEachLocalBatch(tp, from, to, out::add);
        return out;
    }

    /** Hands each of the local leader's batches that hold offsets in {@code [from, to)} to {@code action}, in order, a megabyte read at a time. */
    private void forEachLocalBatch(TopicPartition tp, long from, long to, java.util.function.Consumer<StoredBatch> action) {
        long position = from;
        while (position < to) {
            long next = position;
            for (StoredBatch b : broker.localRecords(tp, position, 1024 * 1024)) {
                if (b.lastOffset() >= from && b.baseOffset() < to) {
                    action.accept(b);
                }
                next = b.nextOffset();
            }
            if (next == position) {
                break;
            }
            position = next;
        }
    }

    /**
     * Truncates the leader to {@code offset} if it ends above it, then waits until the in-sync followers do not either.
     *
     * @return whether the leader's log was truncated
     */
    private boolean truncate(TopicPartition tp, int leaderEpoch, LogFence.Permit permit, long offset, TruncationListener listener)
            throws NotLeaderException, StepTimeoutException, InterruptedException, LogFence.SupersededException {
        long end = leaderState(tp, leaderEpoch).logEndOffset();
        if (offset < end) {
            permit.change(() -> {
                broker.truncateLeaderTo(tp, leaderEpoch, offset);
                return null;
            });
            listener.truncated(offset, end);
        }
        long target = Math.min(offset, end);
        await(tp, leaderEpoch, permit, s -> followersAtOrBelow(tp, leaderEpoch, target),
            "the in-sync followers did not truncate to " + target);
        return offset < end;
    }

    private Outcome finish(String mirror, TopicPartition tp, int leaderEpoch, LogFence.Permit permit, long barrierOffset,
                           StopCut cut)
            throws NotLeaderException, StepTimeoutException, InterruptedException, LogFence.SupersededException {
        int removed = permit.change(() -> broker.removeProducersBefore(tp, barrierOffset));
        if (removed > 0) {
            log.info("Mirror '{}' partition {}: removed {} mirrored producer(s) from the leader's producer state", mirror, tp, removed);
        }
        await(tp, leaderEpoch, permit, s -> s.highWatermark() > barrierOffset, "the in-sync followers did not replicate the barrier");
        return cut.removesRecords() ? new Outcome(barrierOffset, cut.offset(), cut.logEnd()) : new Outcome(barrierOffset, -1L, -1L);
    }

    private boolean followersAtOrBelow(TopicPartition tp, int leaderEpoch, long end) {
        try {
            Map<Integer, Long> ends = broker.inSyncFollowerLogEndOffsets(tp, leaderEpoch);
            return ends.values().stream().allMatch(e -> e <= end);
        } catch (NotLeaderException e) {
            return true; // reported by the next leaderState call
        }
    }

    private StoredBatch lastBatch(TopicPartition tp, LeaderLogState state) {
        if (state.logEndOffset() <= state.logStartOffset()) {
            return null;
        }
        java.util.List<StoredBatch> tail = broker.localRecords(tp, state.logEndOffset() - 1, 1024 * 1024);
        return tail.isEmpty() ? null : tail.get(tail.size() - 1);
    }

    private LeaderLogState leaderState(TopicPartition tp, int leaderEpoch) throws NotLeaderException {
        LeaderLogState s = broker.leaderLogState(tp).orElseThrow(() ->
            new NotLeaderException("broker " + broker.nodeId() + " no longer leads " + tp));
        if (s.leaderEpoch() != leaderEpoch) {
            throw new NotLeaderException("leader epoch of " + tp + " moved from " + leaderEpoch + " to " + s.leaderEpoch());
        }
        return s;
    }

    private void hold(TestOnlyStopHold.Step step, TopicPartition tp, int leaderEpoch) throws InterruptedException {
        TestOnlyStopHold.at(step, tp, () -> !closing
            && broker.leaderLogState(tp).filter(s -> s.leaderEpoch() == leaderEpoch).isPresent(), time);
    }

    /** The broker is shutting down: a test-only hold lets its stop go on (the shutdown waits for it). */
    void closing() {
        closing = true;
    }

    private interface StateCondition {
        boolean test(LeaderLogState state);
    }

    private void await(TopicPartition tp, int leaderEpoch, LogFence.Permit permit, StateCondition condition, String what)
            throws NotLeaderException, StepTimeoutException, InterruptedException, LogFence.SupersededException {
        long deadline = time.milliseconds() + WAIT_MS;
        while (!condition.test(leaderState(tp, leaderEpoch))) {
            permit.check(); // a superseded procedure frees its thread at once
            if (time.milliseconds() > deadline) {
                throw new StepTimeoutException(what + " of " + tp + " within " + WAIT_MS + " ms (" + leaderState(tp, leaderEpoch) + ")");
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("waiting until " + what + " of " + tp);
            }
            time.sleep(POLL_MS); // polling a broker-local condition; no event to wait on exists
        }
    }

    /** The stop refused a cut that would lose records it decided to keep; the stop is retried. */
    static final class CutRefusedException extends Exception {
        private static final long serialVersionUID = 1L;

        CutRefusedException(String message) {
            super(message);
        }
    }

    /** A step did not complete in time; the procedure is retried. */
    static final class StepTimeoutException extends Exception {
        private static final long serialVersionUID = 1L;

        StepTimeoutException(String message) {
            super(message);
        }
    }
}
