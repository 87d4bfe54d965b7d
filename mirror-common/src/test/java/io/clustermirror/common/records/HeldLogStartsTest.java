package io.clustermirror.common.records;

import io.clustermirror.common.records.HeldLogStarts.Entry;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HeldLogStartsTest {
    private static final long HOLD = 1_000;

    @Test
    void aMovePastTheDestinationIsHeldFromWhenItWasSeen() {
        HeldLogStarts held = HeldLogStarts.NONE.observe(500, 0, 10_000);
        assertEquals(List.of(new Entry(500, 10_000)), held.entries());
        assertEquals(-1, held.dueOffset(10_999, HOLD, null), "not due before the hold has passed");
        assertEquals(500, held.dueOffset(11_000, HOLD, null));
        assertEquals(new Entry(500, 10_000), held.oldest());
        assertEquals(11_000, held.oldest().appliesAtMs(HOLD));
    }

    @Test
    void aMoveTheDestinationAlreadyFollowedOrThatIsHeldAlreadyChangesNothing() {
        assertSame(HeldLogStarts.NONE, HeldLogStarts.NONE.observe(500, 500, 1));
        assertSame(HeldLogStarts.NONE, HeldLogStarts.NONE.observe(400, 500, 1));
        HeldLogStarts held = HeldLogStarts.NONE.observe(500, 0, 1);
        assertSame(held, held.observe(500, 0, 2), "seen again: the first sighting's time stays");
        assertSame(held, held.observe(300, 0, 3), "the source's log start never moves back; an older response is ignored");
    }

    @Test
    void eachLaterMoveWaitsItsOwnHold() {
        HeldLogStarts held = HeldLogStarts.NONE.observe(100, 0, 0).observe(200, 0, 600).observe(300, 0, 900);
        assertEquals(-1, held.dueOffset(999, HOLD, null));
        assertEquals(100, held.dueOffset(1_000, HOLD, null), "the first move is due, not the later ones it would reveal");
        assertEquals(200, held.dueOffset(1_600, HOLD, null));
        assertEquals(300, held.dueOffset(1_900, HOLD, null));
        assertEquals(300, held.dueOffset(900, 0, null), "a hold of 0 applies every move as soon as it is seen (policy apply)");
    }

    @Test
    void followingTheSourceDropsTheMovesThatAreDone() {
        HeldLogStarts held = HeldLogStarts.NONE.observe(100, 0, 0).observe(200, 0, 600);
        assertEquals(List.of(new Entry(200, 600)), held.followedTo(100).entries());
        assertEquals(List.of(new Entry(200, 600)), held.followedTo(150).entries());
        assertTrue(held.followedTo(200).isEmpty());
        assertSame(held, held.followedTo(50));
        assertEquals(-1, HeldLogStarts.NONE.highestOffset());
        assertNull(HeldLogStarts.NONE.oldest());
    }

    @Test
    void aBackwardClockNeverPutsALaterMoveBeforeAnEarlierOne() {
        HeldLogStarts held = HeldLogStarts.NONE.observe(100, 0, 5_000).observe(200, 0, 4_000);
        assertEquals(List.of(new Entry(100, 5_000), new Entry(200, 5_000)), held.entries());
    }

    @Test
    void theBoundMergesTheNewestMovesAndNeverShortensAHold() {
        HeldLogStarts held = HeldLogStarts.NONE;
        for (int i = 1; i <= HeldLogStarts.MAX_ENTRIES + 5; i++) {
            held = held.observe(i * 100L, 0, i * 10L);
        }
        assertEquals(HeldLogStarts.MAX_ENTRIES, held.entries().size());
        assertEquals(new Entry((HeldLogStarts.MAX_ENTRIES + 5) * 100L, (HeldLogStarts.MAX_ENTRIES + 5) * 10L),
            held.entries().get(HeldLogStarts.MAX_ENTRIES - 1), "the newest move is kept exactly");
        for (int i = 1; i < HeldLogStarts.MAX_ENTRIES; i++) {
            assertEquals(new Entry(i * 100L, i * 10L), held.entries().get(i - 1), "the older moves are kept exactly");
        }
        // Every offset seen becomes due no earlier than its own hold would have made it.
        for (int i = 1; i <= HeldLogStarts.MAX_ENTRIES + 5; i++) {
            long seenAt = i * 10L;
            assertTrue(held.dueOffset(seenAt + HOLD - 1, HOLD, null) < i * 100L, "offset " + i * 100L + " due too early");
        }
    }

    @Test
    void recordedMovesAreCheckedAgainstTheInvariants() {
        assertSame(HeldLogStarts.NONE, HeldLogStarts.of(null));
        assertSame(HeldLogStarts.NONE, HeldLogStarts.of(List.of()));
        assertThrows(IllegalArgumentException.class, () -> HeldLogStarts.of(List.of(new Entry(200, 1), new Entry(100, 2))));
        assertThrows(IllegalArgumentException.class, () -> HeldLogStarts.of(List.of(new Entry(100, 2), new Entry(200, 1))));
        List<Entry> tooMany = new ArrayList<>();
        for (int i = 0; i <= HeldLogStarts.MAX_ENTRIES; i++) {
            tooMany.add(new Entry(i, i));
        }
        assertThrows(IllegalArgumentException.class, () -> HeldLogStarts.of(tooMany));
    }

    @Test
    void aHoldPastTheEndOfTimeNeverApplies() {
        HeldLogStarts held = HeldLogStarts.NONE.observe(100, 0, 10);
        assertEquals(Long.MAX_VALUE, held.oldest().appliesAtMs(Long.MAX_VALUE));
        assertEquals(-1, held.dueOffset(Long.MAX_VALUE - 1, Long.MAX_VALUE, null));
    }

    @Test
    void anAppliedDecisionMakesTheMovesItCoversDueAtOnceButNotLaterOnes() {
        HeldLogStarts held = HeldLogStarts.NONE.observe(100, 0, 0).observe(200, 0, 600).observe(300, 0, 900);
        HeldDecision apply = new HeldDecision(HeldDecision.Verdict.APPLY, 600);
        assertSame(held, held.decided(apply), "an application changes no entry: they become due");
        assertEquals(200, held.dueOffset(601, HOLD, apply));
        assertEquals(300, held.dueOffset(1_900, HOLD, apply), "a later move still waits its own hold");
        assertEquals(-1, held.dueOffset(601, HOLD, null));
    }

    @Test
    void aRejectedDecisionKeepsTheRecordsAndIsNotHeldAgainUntilTheSourceMovesFurther() {
        HeldLogStarts held = HeldLogStarts.NONE.observe(100, 0, 0).observe(200, 0, 600).observe(300, 0, 900);
        HeldDecision reject = new HeldDecision(HeldDecision.Verdict.REJECT, 600);
        HeldLogStarts rejected = held.decided(reject);
        assertEquals(List.of(new Entry(200, 600, true), new Entry(300, 900)), rejected.entries());
        assertEquals(List.of(new Entry(300, 900)), rejected.held());
        assertSame(rejected, rejected.decided(reject), "the same decision again (a new leader) changes nothing");
        assertEquals(-1, rejected.dueOffset(1_899, Long.MAX_VALUE / 2, null), "a rejected move never becomes due by time");
        assertEquals(300, rejected.dueOffset(1_900, HOLD, null), "a later move still applies after its hold");
        assertSame(rejected, rejected.observe(200, 0, 5_000), "the rejected move is not held again");

        HeldLogStarts onlyRejected = HeldLogStarts.NONE.observe(100, 0, 0).decided(reject);
        assertTrue(onlyRejected.isEmpty(), "nothing is held back, though the records are kept");
        assertNull(onlyRejected.oldest());
        assertEquals(List.of(new Entry(100, 0, true), new Entry(400, 7_000)), onlyRejected.observe(400, 0, 7_000).entries());
        assertEquals(100, onlyRejected.dueOffset(0, HOLD, new HeldDecision(HeldDecision.Verdict.APPLY, 8_000)),
            "an operator who applies later applies the rejected move too");
        assertThrows(IllegalArgumentException.class, () -> HeldLogStarts.of(List.of(new Entry(1, 1), new Entry(2, 2, true))),
            "only the first entry may be rejected");
        assertEquals(onlyRejected, RecordCodec.decodeState(RecordCodec.encodeState(withHeld(onlyRejected))).heldLogStarts());
    }

    private static PartitionStateRecord withHeld(HeldLogStarts held) {
        PartitionStateRecord none = RecordCodecTest.STATE;
        return new PartitionStateRecord(none.mirror(), none.topic(), none.partition(), none.state(),
            none.leaderEpoch(), none.leaderId(), none.sourceTopicId(), none.lastMirroredOffset(), none.lastMirroredEpoch(),
            none.sourceEpochs(), none.sourceLogEndOffset(), none.destLogEndOffset(), none.lastError(), none.barrierOffset(),
            none.truncatedFromOffset(), none.truncatedToOffset(), none.updatedMs(), null, null, held);
    }

    @Test
    void heldMovesRoundTripInTheStateRecordAndAreLeftOutWhenNoneIsHeld() {
        PartitionStateRecord none = RecordCodecTest.STATE;
        String encoded = new String(RecordCodec.encodeState(none), StandardCharsets.UTF_8);
        assertFalse(encoded.contains("heldLogStarts"), encoded);
        assertEquals(HeldLogStarts.NONE, RecordCodec.decodeState(RecordCodec.encodeState(none)).heldLogStarts());

        PartitionStateRecord holding = withHeld(HeldLogStarts.NONE.observe(500, 0, 10_000).observe(700, 0, 20_000));
        assertEquals(holding, RecordCodec.decodeState(RecordCodec.encodeState(holding)));
        assertTrue(new String(RecordCodec.encodeState(holding), StandardCharsets.UTF_8)
            .contains("\"heldLogStarts\":[{\"offset\":500,\"sinceMs\":10000},{\"offset\":700,\"sinceMs\":20000}]"));
    }
}
