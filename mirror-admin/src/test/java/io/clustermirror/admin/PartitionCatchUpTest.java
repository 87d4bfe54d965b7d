package io.clustermirror.admin;

import io.clustermirror.common.PartitionState;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PartitionCatchUpTest {
    private static PartitionCatchUp catchUp(long sourceStable, long sourceEnd, long destinationEnd, long destinationStable) {
        return new PartitionCatchUp("orders", 0, PartitionState.MIRRORING, sourceStable, sourceEnd, destinationEnd, destinationStable, -1);
    }

    @Test
    void caughtUpWhenTheDestinationHoldsTheSourcesEndSettled() {
        assertTrue(catchUp(120, 120, 120, 120).caughtUp());
        assertEquals(0, catchUp(120, 120, 120, 120).lag());
        assertEquals("", catchUp(120, 120, 120, 120).behindBecause());
    }

    @Test
    void behindWhileCopying() {
        PartitionCatchUp behind = catchUp(120, 120, 100, 100);
        assertFalse(behind.caughtUp());
        assertEquals(20, behind.lag());
        assertEquals("orders-0 (MIRRORING): 20 offset(s) behind (source last stable offset 120, end 120; destination last "
            + "stable offset 100, end 100)", behind.behindBecause());
    }

    @Test
    void anOpenSourceTransactionKeepsItBehindWhateverTheFetchIsolation() {
        // read_committed: the destination stops at the source's last stable offset.
        PartitionCatchUp committed = catchUp(100, 104, 100, 100);
        assertFalse(committed.caughtUp());
        assertEquals(4, committed.lag());
        assertTrue(committed.sourceTransactionOpen());
        assertTrue(committed.behindBecause().endsWith("a transaction is open on the source from offset 100: end it (commit, "
            + "abort, or wait for its transaction.timeout.ms)"), committed.behindBecause());
        // read_uncommitted: the destination holds the open transaction, which a stop would truncate.
        assertFalse(catchUp(100, 104, 104, 100).caughtUp());
    }

    @Test
    void unknownOffsetsAreNeverCaughtUp() {
        PartitionCatchUp unknown = catchUp(120, 120, -1, -1);
        assertFalse(unknown.caughtUp());
        assertEquals(-1, unknown.lag());
        assertTrue(unknown.behindBecause().contains("offsets unknown"), unknown.behindBecause());
    }

    @Test
    void aStartWaitsForMirroringTooAndSaysSo() {
        PartitionCatchUp preparing = new PartitionCatchUp("orders", 1, PartitionState.PREPARING, 0, 0, 0, 0, -1);
        assertTrue(preparing.caughtUp(), "an empty topic holds all the source holds before it mirrors");
        assertFalse(preparing.mirroringAndCaughtUp());
        assertTrue(catchUp(120, 120, 120, 120).mirroringAndCaughtUp());
        assertEquals("", catchUp(120, 120, 120, 120).notMirroringAndCaughtUpBecause());
        assertEquals("orders-1 (PREPARING): caught up but not MIRRORING yet", preparing.notMirroringAndCaughtUpBecause());
        assertEquals(catchUp(120, 120, 100, 100).behindBecause(), catchUp(120, 120, 100, 100).notMirroringAndCaughtUpBecause());
        NotCaughtUpException e = NotCaughtUpException.afterStart(List.of(preparing), 5000);
        assertEquals("MIRROR_TOPIC_NOT_CAUGHT_UP: 1 partition(s) had not caught up with the source after 5000 ms; the topics "
            + "were started and go on mirroring: orders-1 (PREPARING): caught up but not MIRRORING yet. Follow them with "
            + "--describe, or wait with a longer --timeout-ms", e.getMessage());
        assertEquals(List.of(preparing), e.behind());
    }

    @Test
    void theFailureNamesThePartitionsBehind() {
        NotCaughtUpException e = new NotCaughtUpException(List.of(catchUp(120, 120, 100, 100)), 5000);
        assertEquals("MIRROR_TOPIC_NOT_CAUGHT_UP: 1 partition(s) had not caught up with the source after 5000 ms, so nothing was "
            + "stopped: orders-0 (MIRRORING): 20 offset(s) behind (source last stable offset 120, end 120; destination last "
            + "stable offset 100, end 100). Stop the source's producers and retry, with a longer --timeout-ms if the mirror is "
            + "still copying", e.getMessage());
    }
}
