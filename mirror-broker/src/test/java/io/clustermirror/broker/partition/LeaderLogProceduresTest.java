package io.clustermirror.broker.partition;

import io.clustermirror.broker.bridge.NotLeaderException;
import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.TransactionMarker;
import io.clustermirror.common.records.StopCut;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The stop and the alignment against an in-memory leader log, on mock time: no broker. */
class LeaderLogProceduresTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final int NODE = 1;
    private static final int EPOCH = 4;

    private final MockTime time = new MockTime(0, 1_700_000_000_000L, 0);
    private final InMemoryReplica log = new InMemoryReplica(TP, NODE, EPOCH);
    private final List<String> handovers = new ArrayList<>();
    private final List<String> truncations = new ArrayList<>();
    private final LeaderLogProcedures procedures = new LeaderLogProcedures(log,
        (tp, replicas, target) -> handovers.add(tp + " -> " + target + " of " + replicas), time);
    private final LogFence fence = new LogFence(7);

    /** The cut an earlier attempt of the stop recorded, if any. */
    private Optional<StopCut> decided = Optional.empty();
    /** The cut a consistent stop chose, -1 for none. */
    private long chosenCut = -1;
    /** The cuts the stops decided, as the manager records them before their truncation. */
    private final List<StopCut> recordedCuts = new ArrayList<>();

    /** Runs the stop as the manager does: its first step, then (with a cut decided now recorded first) the rest. */
    private LeaderLogProcedures.Outcome stop() throws Exception {
        LeaderLogProcedures.StopStart start = procedures.beginStop("dr", TP, EPOCH, fence.permit(7), decided, chosenCut);
        if (start instanceof LeaderLogProcedures.AlreadyStopped stopped) {
            return stopped.outcome();
        }
        LeaderLogProcedures.CutAt at = (LeaderLogProcedures.CutAt) start;
        assertEquals(decided.isEmpty() && at.cut().removesRecords(), at.mustRecord(),
            "only a stop without an earlier cut records one, if it removes records");
        if (at.mustRecord()) {
            recordedCuts.add(at.cut());
        }
        return procedures.completeStop("dr", TP, EPOCH, fence.permit(7), "source-cluster", at.cut(),
            (from, to) -> truncations.add(from + ".." + to));
    }

    @Test
    void stopTruncatesToTheLastStableOffsetAndWritesTheBarrierRightAfter() throws Exception {
        log.withRecords(3, 2).withRecords(2, 2); // mirrored at the source's epoch 2; [3, 5) is an open transaction
        log.lastStableOffset = 3;
        log.followerEnds.put(2, 0L);

        LeaderLogProcedures.Outcome outcome = stop();

        assertEquals(new LeaderLogProcedures.Outcome(3, 3, 5), outcome);
        assertEquals(List.of("3..5"), truncations, "the truncation is reported as it happens");
        assertEquals(List.of("truncate 3", "append 3", "remove producers before 3"), log.changes);
        StoredBatch barrier = log.lastBatch();
        assertTrue(BarrierBatch.isBarrier(barrier));
        assertEquals(3, barrier.baseOffset());
        assertEquals(EPOCH, barrier.partitionLeaderEpoch(), "the barrier is written in the stopping leader's epoch");
        assertEquals(Optional.of("source-cluster"), BarrierBatch.sourceClusterId(barrier));
        assertEquals(time.milliseconds(), barrier.maxTimestamp(), "stamped by the injected clock");
        assertEquals(List.of(), handovers, "the log ends in an older epoch: the barrier starts a new one anyway");
    }

    @Test
    void theFirstAttemptDecidesTheCutAtTheLastStableOffsetBeforeChangingAnything() throws Exception {
        log.withRecords(3, 2).withRecords(2, 2);
        log.lastStableOffset = 3;

        LeaderLogProcedures.StopStart start = procedures.beginStop("dr", TP, EPOCH, fence.permit(7), Optional.empty(), -1);

        assertEquals(new LeaderLogProcedures.CutAt(new StopCut(3, 5), true), start);
        assertEquals(List.of(), log.changes, "deciding the cut changes nothing: it is recorded first");
    }

    /**
     * The first attempt cut at 5 and removed the commit marker of a transaction that began at 2: the rebuilt producer state
     * has it open again, so the last stable offset is 2. A later attempt (a retry, or a new leader after a crash) cuts at
     * the recorded 5, never at 2: records [2, 5) are committed on the source.
     */
    @Test
    void aLaterAttemptCutsAtTheRecordedCutNotAtALowerLastStableOffset() throws Exception {
        log.withRecords(5, 2).withRecords(2, 2); // a new leader that had not followed the first cut: [5, 7) is still here
        log.lastStableOffset = 2;
        decided = Optional.of(new StopCut(5, 7));

        LeaderLogProcedures.Outcome outcome = stop();

        assertEquals(new LeaderLogProcedures.Outcome(5, 5, 7), outcome, "the barrier at the recorded cut, the cut reported whole");
        assertEquals(List.of("truncate 5", "append 5", "remove producers before 5"), log.changes);
        assertEquals(List.of(), recordedCuts, "nothing decided again");
    }

    @Test
    void aLaterAttemptOnALogAlreadyCutWritesTheBarrierThereAndReportsTheFirstCut() throws Exception {
        log.withRecords(5, 2);
        log.lastStableOffset = 2;
        decided = Optional.of(new StopCut(5, 7));

        assertEquals(new LeaderLogProcedures.Outcome(5, 5, 7), stop());
        assertEquals(List.of("append 5", "remove producers before 5"), log.changes);
        assertEquals(List.of(), truncations, "nothing truncated here: the first attempt's cut is the one reported");
    }

    /**
     * [0, 2) plain; A (producer 10) begins at 2; B (11) at 3; A aborts at 4; C (12) begins at 5; B commits at 6; C is open,
     * so the source's last stable offset, 5, is where the destination ends. Here B is open (its commit is not mirrored):
     * the last stable offset is 3. The cut at 3 removes A's abort: A's record at 2 would read as committed.
     */
    private void abortedAcrossTheCut() {
        log.withRecords(2, 2);
        log.batches.add(io.clustermirror.broker.TestBatches.transactional(2, 1, 10L, 2));
        log.batches.add(io.clustermirror.broker.TestBatches.transactional(3, 1, 11L, 2));
        log.batches.add(new TransactionMarker(10L, (short) 0, false, 5, 1_000L).toBatch(4, 2));
        log.lastStableOffset = 3;
    }

    @Test
    void theCutKeepsTheAbortOfATransactionThatBeganBelowItAndWritesItAgainBeforeTheBarrier() throws Exception {
        abortedAcrossTheCut();

        LeaderLogProcedures.Outcome outcome = stop();

        TransactionMarker abortOfA = new TransactionMarker(10L, (short) 0, false, 5, 1_000L);
        assertEquals(List.of(new StopCut(3, 5, List.of(abortOfA))), recordedCuts, "decided, with the abort, before the truncation");
        assertEquals(new LeaderLogProcedures.Outcome(4, 3, 5), outcome, "the barrier follows the abort written again");
        assertEquals(List.of("truncate 3", "append 3", "append 4", "remove producers before 4"), log.changes);
        StoredBatch rewritten = log.batches.get(log.batches.size() - 2);
        assertEquals(java.util.Optional.of(abortOfA), TransactionMarker.of(rewritten), "the source's abort, byte for byte but its offset");
        assertEquals(3, rewritten.baseOffset());
        assertEquals(EPOCH, rewritten.partitionLeaderEpoch());
        assertEquals(Map.of(), log.openTransactionStarts(TP, EPOCH), "nothing is open once the barrier is written");
    }

    @Test
    void aLaterAttemptWritesTheRecordedAbortsAgainAtTheSameOffsets() throws Exception {
        abortedAcrossTheCut();
        stop();
        // A new leader that had not followed the barrier: it holds the cut log and the abort written again, no barrier.
        log.batches.remove(log.batches.size() - 1);
        log.changes.clear();
        decided = Optional.of(recordedCuts.get(0));

        assertEquals(new LeaderLogProcedures.Outcome(4, 3, 5), stop());
        assertEquals(List.of("truncate 3", "append 3", "append 4", "remove producers before 4"), log.changes);
    }

    @Test
    void anAbortPastTheCutOfATransactionThatBeganPastItIsNotWrittenAgain() throws Exception {
        log.withRecords(2, 2);
        log.batches.add(io.clustermirror.broker.TestBatches.transactional(2, 1, 11L, 2)); // B, open here
        log.batches.add(io.clustermirror.broker.TestBatches.transactional(3, 1, 10L, 2)); // A begins past the cut
        log.batches.add(new TransactionMarker(10L, (short) 0, false, 5, 1_000L).toBatch(4, 2));
        log.lastStableOffset = 2;

        assertEquals(new LeaderLogProcedures.Outcome(2, 2, 5), stop());
        assertEquals(List.of("truncate 2", "append 2", "remove producers before 2"), log.changes, "only the barrier");
    }

    @Test
    void aCommitPastTheCutLeavesTheRecordsBelowItCommitted() throws Exception {
        log.withRecords(2, 2);
        log.batches.add(io.clustermirror.broker.TestBatches.transactional(2, 1, 10L, 2));
        log.batches.add(io.clustermirror.broker.TestBatches.transactional(3, 1, 11L, 2));
        log.batches.add(new TransactionMarker(10L, (short) 0, true, 5, 1_000L).toBatch(4, 2));
        log.lastStableOffset = 3;

        assertEquals(new LeaderLogProcedures.Outcome(3, 3, 5), stop());
        assertEquals(List.of(new StopCut(3, 5)), recordedCuts, "no abort to keep");
        assertEquals(List.of("truncate 3", "append 3", "remove producers before 3"), log.changes);
    }

    @Test
    void aConsistentStopCutsWhereItChoseBelowTheLastStableOffset() throws Exception {
        log.withRecords(3, 2).withRecords(2, 2).withRecords(2, 2); // [5, 7) open
        log.lastStableOffset = 5;
        chosenCut = 3;

        assertEquals(new LeaderLogProcedures.Outcome(3, 3, 7), stop());
        assertEquals(List.of(new StopCut(3, 7)), recordedCuts);
        assertEquals(List.of("truncate 3", "append 3", "remove producers before 3"), log.changes);
    }

    @Test
    void aChosenCutAboveTheLastStableOffsetGivesWayToIt() throws Exception {
        log.withRecords(3, 2).withRecords(2, 2);
        log.lastStableOffset = 3;
        chosenCut = 4; // this leader holds less than the client saw

        assertEquals(new LeaderLogProcedures.Outcome(3, 3, 5), stop());
    }

    @Test
    void aLeaderWhoseLogEndsBelowTheRecordedCutRefusesToStop() {
        log.withRecords(4, 2);
        decided = Optional.of(new StopCut(5, 7));

        LeaderLogProcedures.CutRefusedException e = assertThrows(LeaderLogProcedures.CutRefusedException.class, this::stop);

        assertTrue(e.getMessage().contains("records [4, 5) are missing here"), e.getMessage());
        assertEquals(List.of(), log.changes, "no barrier below the records the stop keeps");
    }

    @Test
    void aStopFindingItsBarrierAtTheLogEndWritesNoOther() throws Exception {
        log.withRecords(3, 2);
        log.batches.add(BarrierBatch.build(3, EPOCH, "source-cluster", 1L));

        assertEquals(new LeaderLogProcedures.Outcome(3, -1, -1), stop());
        assertEquals(List.of("remove producers before 3"), log.changes, "idempotent: nothing truncated, no second barrier");
    }

    @Test
    void aWaitThatNeverCompletesTimesOutOnTheClockBeforeChangingTheLog() {
        log.withRecords(3, 2);
        log.followerEnds.put(2, 1L);
        log.replicating = false; // the follower never catches up: HW stays below the log end
        long start = time.milliseconds();

        LeaderLogProcedures.StepTimeoutException e = assertThrows(LeaderLogProcedures.StepTimeoutException.class, this::stop);

        assertTrue(e.getMessage().contains("did not replicate the log end"), e.getMessage());
        assertTrue(time.milliseconds() - start > LeaderLogProcedures.WAIT_MS, "waited the whole step on mock time");
        assertEquals(List.of(), log.changes);
    }

    @Test
    void aSupersededStopChangesNothing() {
        log.withRecords(3, 2);
        fence.advanceTo(8);

        assertThrows(LogFence.SupersededException.class, this::stop);
        assertEquals(List.of(), log.changes);
    }

    @Test
    void aDeposedLeaderStopsBeforeItsNextStep() {
        log.withRecords(3, 2);
        log.leaderEpoch = EPOCH + 1;

        assertThrows(NotLeaderException.class, this::stop);
        assertEquals(List.of(), log.changes);
    }

    /** A replica out of the ISR may hold more of the current epoch: the barrier must start a new epoch on another leader. */
    @Test
    void aReplicaThatMissedTheCutMakesTheStopHandTheLeadershipOver() {
        log.withRecords(3, EPOCH).withRecords(2, EPOCH);
        log.lastStableOffset = 3;
        log.replicas.addAll(List.of(2, 3));
        log.followerEnds.put(2, 0L); // in sync; broker 3 is not

        NotLeaderException e = assertThrows(NotLeaderException.class, this::stop);

        assertTrue(e.getMessage().contains("handed the leadership"), e.getMessage());
        assertEquals(List.of(TP + " -> 2 of [1, 2, 3]"), handovers);
        assertEquals(List.of("truncate 3"), log.changes, "truncated, but no barrier: the new leader writes it in its epoch");
    }

    @Test
    void withNoOtherReplicaInSyncTheBarrierGoesAtTheCurrentEpoch() throws Exception {
        log.withRecords(3, EPOCH);
        log.replicas.add(3); // out of the ISR, and no in-sync replica to take over

        assertEquals(new LeaderLogProcedures.Outcome(3, -1, -1), stop());
        assertEquals(List.of(), handovers);
        assertEquals(List.of("append 3", "remove producers before 3"), log.changes);
    }

    /**
     * A replica out of the ISR may hold the records an alignment cuts, written in the current epoch (local writes after a
     * stop, mirrored earlier): were the mirror to go on in that epoch, Kafka would take the returning replica's log for a
     * prefix of the leader's and keep them. Found by the chaos runner's failover/failback cycles.
     */
    @Test
    void anAlignmentCutWithAReplicaOutOfTheIsrHandsTheLeadershipOver() {
        log.withRecords(3, 2).withRecords(4, EPOCH); // mirrored [0, 3), then local writes [3, 7) in the current epoch
        log.replicas.addAll(List.of(2, 3));
        log.followerEnds.put(2, 7L); // in sync; broker 3 is not

        NotLeaderException e = assertThrows(NotLeaderException.class, () -> align(new LogAlignment.Propose(
            new Cut(3, Cut.Evidence.BARRIER, "the source's barrier at offset 3"))));

        assertTrue(e.getMessage().contains("handed the leadership") && e.getMessage().contains("offset 3"), e.getMessage());
        assertEquals(List.of(TP + " -> 2 of [1, 2, 3]"), handovers);
        assertEquals(List.of("truncate 3"), log.changes, "truncated on the leader; the new leader mirrors on in its own epoch");
        assertEquals(List.of("3..7"), truncations);
    }

    /** The same cut with every replica in sync: they truncate with the leader, and it mirrors on in its epoch. */
    @Test
    void anAlignmentCutWithEveryReplicaInSyncKeepsTheLeadership() throws Exception {
        log.withRecords(3, 2).withRecords(4, EPOCH);
        log.replicas.add(2);
        log.followerEnds.put(2, 7L);

        LeaderLogProcedures.Aligned aligned = align(new LogAlignment.Propose(new Cut(3, Cut.Evidence.BARRIER, "a barrier")));

        assertEquals(3, aligned.logEnd());
        assertEquals(List.of(), handovers);
        assertEquals(List.of("truncate 3"), log.changes);
    }

    private LeaderLogProcedures.Aligned align(LogAlignment.Plan plan) throws Exception {
        // The source holds nothing at the cut: nothing contradicts it.
        return procedures.alignWithSource("dr", TP, EPOCH, fence.permit(7), plan, (from, to) -> List.of(),
            (from, to) -> truncations.add(from + ".." + to));
    }

    @Test
    void alignmentKeepsALogWithNothingToCut() throws Exception {
        log.withRecords(3, 2);

        LeaderLogProcedures.Aligned aligned = procedures.alignWithSource("dr", TP, EPOCH, fence.permit(7), new LogAlignment.Keep(),
            (from, to) -> List.of(), (from, to) -> truncations.add(from + ".." + to));

        assertEquals(new LeaderLogProcedures.Aligned(3, -1, -1), aligned);
        assertEquals(List.of(), log.changes);
    }
}
