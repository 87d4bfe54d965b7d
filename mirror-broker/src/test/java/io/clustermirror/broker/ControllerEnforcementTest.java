package io.clustermirror.broker;

import io.clustermirror.broker.ControllerEnforcement.Outcome;
import io.clustermirror.broker.ControllerEnforcement.Probe;
import io.clustermirror.broker.ControllerEnforcement.State;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the end-to-end check of the controllers' read-only rule concludes from their answers. */
class ControllerEnforcementTest {
    private static MirrorImage image(String topic, DesiredState desired, PartitionState state) {
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        delta.replayMetadata(RecordCodec.encodeKey(RecordCodec.topicKey(topic)),
            RecordCodec.encodeTopic(new MirrorTopicRecord(topic, "dr", desired, "id", 3, 1L)));
        for (int p = 0; p < 3; p++) {
            PartitionStateRecord r = new PartitionStateRecord("dr", topic, p, state, 0, 0, "id", -1, -1, List.of(), -1, -1, null, -1, -1, -1, 1L);
            delta.replayState(RecordCodec.encodeKey(r.key()), RecordCodec.encodeState(r));
        }
        return delta.apply();
    }

    @Test
    void theProbeIsAReadOnlyMirrorTopicGrownByOnePartition() {
        assertEquals(Optional.of(new Probe("orders", "dr", 3)),
            ControllerEnforcement.probe(image("orders", DesiredState.MIRRORING, PartitionState.MIRRORING)));
        assertEquals(Optional.empty(), ControllerEnforcement.probe(image("orders", DesiredState.STOPPED, PartitionState.STOPPED)),
            "a stopped topic is writable: the controllers rightly accept its growth");
        assertEquals(Optional.empty(), ControllerEnforcement.probe(MirrorImage.EMPTY.withFencedTopics(Set.of("f"))));
        assertEquals(Optional.empty(), ControllerEnforcement.probe(MirrorImage.EMPTY));
    }

    @Test
    void onlyTheAuthorizersRefusalProvesTheRule() {
        assertEquals(Outcome.REFUSED, ControllerEnforcement.outcome(new TopicAuthorizationException(Set.of("orders"))));
        assertEquals(Outcome.ACCEPTED, ControllerEnforcement.outcome(null));
        assertEquals(Outcome.ACCEPTED, ControllerEnforcement.outcome(new InvalidPartitionsException("already has 4")),
            "checked after authorization");
        assertEquals(Outcome.INCONCLUSIVE, ControllerEnforcement.outcome(new NotControllerException("moving")));
        assertEquals(Outcome.INCONCLUSIVE, ControllerEnforcement.outcome(new TimeoutException()));
    }

    @Test
    void oneAcceptanceIsSuspectTwoInARowAreTheVerdict() {
        assertEquals(State.SUSPECT, ControllerEnforcement.next(State.UNCHECKED, Outcome.ACCEPTED));
        assertEquals(State.SUSPECT, ControllerEnforcement.next(State.ENFORCED, Outcome.ACCEPTED));
        assertEquals(State.UNENFORCED, ControllerEnforcement.next(State.SUSPECT, Outcome.ACCEPTED));
        assertEquals(State.UNENFORCED, ControllerEnforcement.next(State.UNENFORCED, Outcome.ACCEPTED));
        assertEquals(State.ENFORCED, ControllerEnforcement.next(State.UNENFORCED, Outcome.REFUSED), "a fixed controller clears it");
        assertEquals(State.ENFORCED, ControllerEnforcement.next(State.SUSPECT, Outcome.REFUSED), "a controller that caught up");
        for (State state : State.values()) {
            assertEquals(state, ControllerEnforcement.next(state, Outcome.INCONCLUSIVE), "an inconclusive answer changes nothing");
        }
    }

    @Test
    void onlyAPassedCheckWaitsTheLongInterval() {
        assertEquals(ControllerEnforcement.RECHECK_INTERVAL_MS, ControllerEnforcement.delayMs(State.ENFORCED, Outcome.REFUSED));
        assertEquals(ControllerEnforcement.CONFIRM_DELAY_MS, ControllerEnforcement.delayMs(State.ENFORCED, Outcome.INCONCLUSIVE));
        assertEquals(ControllerEnforcement.CONFIRM_DELAY_MS, ControllerEnforcement.delayMs(State.SUSPECT, Outcome.ACCEPTED));
        assertEquals(ControllerEnforcement.CONFIRM_DELAY_MS, ControllerEnforcement.delayMs(State.UNENFORCED, Outcome.ACCEPTED),
            "a fixed controller clears the alarm within seconds");
    }

    @Test
    void theErrorIsRepeatedOnlyEveryRecheckIntervalWhileItLasts() {
        assertTrue(ControllerEnforcement.errorDue(-1, 1_000));
        assertFalse(ControllerEnforcement.errorDue(1_000, 1_000 + ControllerEnforcement.CONFIRM_DELAY_MS));
        assertTrue(ControllerEnforcement.errorDue(1_000, 1_000 + ControllerEnforcement.RECHECK_INTERVAL_MS));
    }
}
