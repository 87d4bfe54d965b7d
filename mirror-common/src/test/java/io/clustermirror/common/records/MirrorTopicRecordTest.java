package io.clustermirror.common.records;

import io.clustermirror.common.DesiredState;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

class MirrorTopicRecordTest {
    private static final MirrorTopicRecord TOPIC = new MirrorTopicRecord("t", "dr", DesiredState.MIRRORING, "id", 3, 1L);
    private static final HeldChange RETENTION = HeldChange.held(HeldChange.Kind.CONFIG, "retention.ms", "1", 0);
    private static final HeldChange GROWTH = HeldChange.held(HeldChange.Kind.PARTITIONS, HeldChange.PARTITIONS_NAME, "500", 0);

    private static LastCommand at(long ms) {
        return new LastCommand("c" + ms, CommandOp.HOLD_CHANGES, ms, "held");
    }

    @Test
    void aChangeStaysHeldFromWhenItWasFirstRecordedWithItsDecisionAndIsForgottenOnceNotFound() {
        MirrorTopicRecord first = TOPIC.holding(List.of(RETENTION), at(100));
        assertEquals(List.of(HeldChange.held(HeldChange.Kind.CONFIG, "retention.ms", "1", 100)), first.heldChanges());
        MirrorTopicRecord applied = first.decided(HeldDecision.Verdict.APPLY, at(200));
        assertEquals(new HeldDecision(HeldDecision.Verdict.APPLY, 200), applied.logStartDecision());
        MirrorTopicRecord again = applied.holding(List.of(RETENTION, GROWTH), at(300));
        assertEquals(List.of(new HeldChange(HeldChange.Kind.CONFIG, "retention.ms", "1", 100, HeldChange.Status.APPROVED),
            HeldChange.held(HeldChange.Kind.PARTITIONS, "partitions", "500", 300)), again.heldChanges(),
            "a change held already keeps its time and the operator's decision; a new one is held from now");
        assertEquals(List.of(), again.holding(List.of(), at(400)).heldChanges());
        assertEquals(new HeldDecision(HeldDecision.Verdict.APPLY, 200), again.holding(List.of(), at(400)).logStartDecision(),
            "the decision stays for the partition leaders");
    }

    @Test
    void aRejectionMarksEveryHeldChangeAndGrowingDropsAHeldGrowthItReached() {
        MirrorTopicRecord held = TOPIC.holding(List.of(RETENTION, GROWTH), at(100));
        MirrorTopicRecord rejected = held.decided(HeldDecision.Verdict.REJECT, at(200));
        assertEquals(List.of(HeldChange.Status.REJECTED, HeldChange.Status.REJECTED),
            rejected.heldChanges().stream().map(HeldChange::status).toList());
        assertEquals(List.of("retention.ms"), held.withPartitions(500, at(300)).heldChanges().stream().map(HeldChange::name).toList());
        assertEquals(2, held.withPartitions(499, at(300)).heldChanges().size());
    }

    @Test
    void heldChangesRoundTripAndARecordThatHoldsNothingIsWrittenAsBefore() {
        String plain = new String(RecordCodec.encodeTopic(TOPIC), StandardCharsets.UTF_8);
        assertFalse(plain.contains("heldChanges") || plain.contains("logStartDecision"), plain);
        MirrorTopicRecord decoded = RecordCodec.decodeTopic(RecordCodec.encodeTopic(TOPIC));
        assertEquals(List.of(), decoded.heldChanges());
        assertNull(decoded.logStartDecision());
        MirrorTopicRecord held = TOPIC.holding(List.of(RETENTION, GROWTH,
            HeldChange.held(HeldChange.Kind.CONFIG, "retention.bytes", null, 0)), at(100)).decided(HeldDecision.Verdict.REJECT, at(200));
        assertEquals(held, RecordCodec.decodeTopic(RecordCodec.encodeTopic(held)));
    }
}
