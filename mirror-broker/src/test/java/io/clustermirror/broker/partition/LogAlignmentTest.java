package io.clustermirror.broker.partition;

import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.PartitionStateRecord;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

class LogAlignmentTest {
    private static Optional<PartitionStateRecord> state(PartitionState state, long barrier) {
        return Optional.of(new PartitionStateRecord("m", "t", 0, state, 0, 1, "id", barrier - 1, 3, List.of(), barrier, barrier + 1,
            null, barrier, -1, -1, 1L));
    }

    @Test
    void anEmptyLogOrOneThisMirrorWasMirroringIntoIsNotCut() {
        assertEquals(0, LogAlignment.alignmentOffset(0, 0, Optional.empty(), Optional.empty(), OptionalLong.empty()));
        assertEquals(50, LogAlignment.alignmentOffset(0, 50, state(PartitionState.MIRRORING, -1), state(PartitionState.STOPPED, 10),
            OptionalLong.empty()), "a leader change continues from the log end");
    }

    @Test
    void failbackCutsAtTheSourcesBarrierOrWhereOurEpochOfItsLastBatchEnds() {
        assertEquals(40, LogAlignment.alignmentOffset(0, 50, Optional.empty(), state(PartitionState.STOPPED, 40), OptionalLong.empty()));
        assertEquals(40, LogAlignment.alignmentOffset(0, 50, Optional.empty(), state(PartitionState.STOPPED, 40), OptionalLong.of(45)));
        assertEquals(35, LogAlignment.alignmentOffset(0, 50, Optional.empty(), state(PartitionState.STOPPED, 40), OptionalLong.of(35)),
            "our log moved on from that epoch before the source's barrier");
        assertEquals(30, LogAlignment.alignmentOffset(0, 30, Optional.empty(), state(PartitionState.STOPPED, 40), OptionalLong.empty()),
            "never beyond our own end");
        assertEquals(20, LogAlignment.alignmentOffset(20, 50, Optional.empty(), state(PartitionState.STOPPED, 10), OptionalLong.empty()),
            "never below our log start");
    }

    @Test
    void aRetryAfterAFailedPreparationComputesTheCutAgain() {
        Optional<PartitionStateRecord> failedWhilePreparing = Optional.of(new PartitionStateRecord("m", "t", 0, PartitionState.FAILED,
            0, 1, "id", -1, -1, List.of(), -1, 50, "timed out", -1, -1, -1, 1L));
        assertEquals(40, LogAlignment.alignmentOffset(0, 50, failedWhilePreparing, state(PartitionState.STOPPED, 40), OptionalLong.empty()));
        Optional<PartitionStateRecord> failedWhileMirroring = Optional.of(new PartitionStateRecord("m", "t", 0, PartitionState.FAILED,
            0, 1, "id", 49, 3, List.of(), 50, 50, "fetch failed", -1, -1, -1, 1L));
        assertEquals(50, LogAlignment.alignmentOffset(0, 50, failedWhileMirroring, state(PartitionState.STOPPED, 40), OptionalLong.empty()),
            "it had mirrored: the log is the source's");
    }

    @Test
    void aRestartAfterOurOwnStopCutsAtOurBarrier() {
        assertEquals(25, LogAlignment.alignmentOffset(0, 60, state(PartitionState.STOPPED, 25), Optional.empty(), OptionalLong.empty()));
    }

    @Test
    void aLogWithAnUnknownHistoryStartsFromScratch() {
        assertEquals(5, LogAlignment.alignmentOffset(5, 60, Optional.empty(), Optional.empty(), OptionalLong.empty()));
    }
}
