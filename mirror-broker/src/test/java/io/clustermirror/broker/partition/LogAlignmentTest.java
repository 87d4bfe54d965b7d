package io.clustermirror.broker.partition;

import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.PartitionStateRecord;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

class LogAlignmentTest {
    private static Optional<PartitionStateRecord> state(PartitionState state, long barrier) {
        return Optional.of(new PartitionStateRecord("m", "t", 0, state, 0, 1, "id", barrier - 1, 3, List.of(), barrier, barrier + 1,
            null, barrier, -1, -1, 1L));
    }

    private static LogAlignment.Plan plan(long start, long end, Optional<PartitionStateRecord> own, Optional<PartitionStateRecord> fromUs,
                                          OptionalLong ourEnd) {
        return LogAlignment.plan(start, end, own, fromUs, ourEnd);
    }

    private static Cut proposed(LogAlignment.Plan plan) {
        return assertInstanceOf(LogAlignment.Propose.class, plan).cut();
    }

    @Test
    void anEmptyLogIsKept() {
        assertInstanceOf(LogAlignment.Keep.class, plan(0, 0, Optional.empty(), Optional.empty(), OptionalLong.empty()));
        assertInstanceOf(LogAlignment.Keep.class, plan(7, 7, Optional.empty(), state(PartitionState.STOPPED, 3), OptionalLong.empty()));
    }

    @Test
    void failbackProposesTheSourcesBarrierOrWhereOurEpochOfItsLastBatchEnds() {
        Cut atBarrier = proposed(plan(0, 50, Optional.empty(), state(PartitionState.STOPPED, 40), OptionalLong.empty()));
        assertEquals(40, atBarrier.offset());
        assertEquals(Cut.Evidence.BARRIER, atBarrier.evidence());
        assertEquals(40, proposed(plan(0, 50, Optional.empty(), state(PartitionState.STOPPED, 40), OptionalLong.of(45))).offset());
        Cut atEpochEnd = proposed(plan(0, 50, Optional.empty(), state(PartitionState.STOPPED, 40), OptionalLong.of(35)));
        assertEquals(35, atEpochEnd.offset(), "our log moved on from that epoch before the source's barrier");
        assertEquals(Cut.Evidence.SOURCE_EPOCH_LINEAGE, atEpochEnd.evidence());
        assertInstanceOf(LogAlignment.Keep.class, plan(0, 30, Optional.empty(), state(PartitionState.STOPPED, 40), OptionalLong.empty()),
            "nothing beyond our own end");
        assertEquals(20, proposed(plan(20, 50, Optional.empty(), state(PartitionState.STOPPED, 10), OptionalLong.empty())).offset(),
            "never below our log start");
    }

    @Test
    void aRetryAfterAFailedPreparationPlansAgain() {
        Optional<PartitionStateRecord> failedWhilePreparing = Optional.of(new PartitionStateRecord("m", "t", 0, PartitionState.FAILED,
            0, 1, "id", -1, -1, List.of(), -1, 50, "timed out", -1, -1, -1, 1L));
        assertEquals(40, proposed(plan(0, 50, failedWhilePreparing, state(PartitionState.STOPPED, 40), OptionalLong.empty())).offset());
        Optional<PartitionStateRecord> failedWhileMirroring = Optional.of(new PartitionStateRecord("m", "t", 0, PartitionState.FAILED,
            0, 1, "id", 49, 3, List.of(), 50, 50, "fetch failed", -1, -1, -1, 1L));
        assertInstanceOf(LogAlignment.Compare.class, plan(0, 50, failedWhileMirroring, state(PartitionState.STOPPED, 40),
            OptionalLong.empty()), "it had mirrored: the log is the source's up to what another writer may have appended");
    }

    @Test
    void aRestartAfterOurOwnStopProposesOurBarrier() {
        Cut cut = proposed(plan(0, 60, state(PartitionState.STOPPED, 25), Optional.empty(), OptionalLong.empty()));
        assertEquals(25, cut.offset());
        assertEquals(Cut.Evidence.BARRIER, cut.evidence());
    }

    @Test
    void aMissingOrDegradedLineageComparesTheBatchesInsteadOfCuttingEverything() {
        assertInstanceOf(LogAlignment.Compare.class, plan(5, 60, Optional.empty(), Optional.empty(), OptionalLong.empty()));
        // What a leader that had not loaded the state wrote: PREPARING, nothing mirrored, no lineage.
        Optional<PartitionStateRecord> degraded = Optional.of(new PartitionStateRecord("m", "t", 0, PartitionState.PREPARING,
            9, 1, "id", -1, -1, List.of(), -1, 60, null, -1, -1, -1, 1L));
        assertInstanceOf(LogAlignment.Compare.class, plan(0, 60, degraded, Optional.empty(), OptionalLong.empty()));
    }
}
