package io.clustermirror.common.records;

import io.clustermirror.common.PartitionState;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PartitionStateLagTest {
    private static final long WRITTEN_MS = 1_700_000_000_000L;

    private static PartitionStateRecord record(PartitionState state, Long oldestUnmirrored) {
        return new PartitionStateRecord("dr", "orders", 0, state, 1, 1, "t", 9L, 0, List.of(), 20L, 10L, null, -1L, -1L, -1L,
            WRITTEN_MS, oldestUnmirrored);
    }

    @Test
    void caughtUpIsZeroInEveryState() {
        for (PartitionState state : PartitionState.values()) {
            assertEquals(0, record(state, PartitionStateRecord.NOTHING_UNMIRRORED).lagMs(WRITTEN_MS + 60_000), state.name());
        }
    }

    @Test
    void aMirroringPartitionShowsItsAgeWhenItsLeaderWroteTheRecord() {
        PartitionStateRecord r = record(PartitionState.MIRRORING, WRITTEN_MS - 300);
        assertEquals(300, r.lagMs(WRITTEN_MS + 4_000), "the missing records of then were mirrored since");
    }

    @Test
    void aPartitionThatDoesNotFetchGrowsOlderWithTheClock() {
        for (PartitionState state : List.of(PartitionState.PAUSED, PartitionState.FAILED, PartitionState.PREPARING)) {
            PartitionStateRecord r = record(state, WRITTEN_MS - 300);
            assertEquals(300, r.lagMs(WRITTEN_MS), state.name());
            assertEquals(10_300, r.lagMs(WRITTEN_MS + 10_000), state.name());
            assertEquals(300, r.lagMs(WRITTEN_MS - 5_000), state + ": a reader's clock behind the writer's never shrinks it");
        }
    }

    @Test
    void aStoppedPartitionKeepsTheAgeMirroringEndedWith() {
        assertEquals(300, record(PartitionState.STOPPED, WRITTEN_MS - 300).lagMs(WRITTEN_MS + 3_600_000));
    }

    @Test
    void aSourceClockAheadOfTheReadersNeverGivesANegativeAge() {
        assertEquals(0, record(PartitionState.PAUSED, WRITTEN_MS + 1_000).lagMs(WRITTEN_MS));
    }

    @Test
    void whileTheSourceCannotBeReachedTheAgeIsUnknownNeverZero() {
        for (Long oldest : new Long[] {PartitionStateRecord.NOTHING_UNMIRRORED, WRITTEN_MS - 300}) {
            PartitionStateRecord unreachable = new PartitionStateRecord("dr", "orders", 0, PartitionState.MIRRORING, 1, 1, "t", 9L, 0,
                List.of(), 20L, 20L, "SOURCE_UNAVAILABLE: no fetch of orders-0 from the source succeeded for 6 s", -1L, -1L, -1L,
                WRITTEN_MS, oldest);
            assertTrue(unreachable.sourceUnavailable());
            assertEquals(-1, unreachable.lagMs(WRITTEN_MS + 60_000), "the source may have taken records since: " + oldest);
        }
        PartitionStateRecord skipped = new PartitionStateRecord("dr", "orders", 0, PartitionState.MIRRORING, 1, 1, "t", 9L, 0,
            List.of(), 20L, 20L, "SOURCE_RETENTION_OUTRUN: source offsets [1, 5) were deleted", -1L, -1L, -1L, WRITTEN_MS,
            PartitionStateRecord.NOTHING_UNMIRRORED);
        assertFalse(skipped.sourceUnavailable());
        assertEquals(0, skipped.lagMs(WRITTEN_MS));
    }
}
