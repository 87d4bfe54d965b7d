package io.clustermirror.common.image;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.ControllerPositionRecord;
import io.clustermirror.common.records.LastCommand;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MirrorImageTest {
    private static MirrorTopicRecord topic(String name, String mirror) {
        return new MirrorTopicRecord(name, mirror, DesiredState.MIRRORING, "id-" + name, 2, 1L);
    }

    private static PartitionStateRecord state(String topic, int partition, PartitionState state, int leaderEpoch) {
        return new PartitionStateRecord("dr", topic, partition, state, leaderEpoch, 1, "id", -1L, -1, List.of(),
            0L, 0L, null, -1L, -1L, -1L, 1L);
    }

    private static void replay(MirrorDelta delta, MirrorTopicRecord t) {
        delta.replayMetadata(RecordCodec.encodeKey(RecordCodec.topicKey(t.topic())), RecordCodec.encodeTopic(t));
    }

    private static void replay(MirrorDelta delta, PartitionStateRecord s) {
        delta.replayState(RecordCodec.encodeKey(s.logKey()), RecordCodec.encodeState(s));
    }

    @Test
    void topicsOfFiltersByMirrorAndSortsByName() {
        MirrorImage image = new MirrorImage(Map.of(), Map.of("b", topic("b", "dr"), "a", topic("a", "dr"),
            "c", topic("c", "other")), Map.of());
        assertEquals(List.of(topic("a", "dr"), topic("b", "dr")), image.topicsOf("dr"));
        assertEquals(List.of(), image.topicsOf("none"));
    }

    @Test
    void partitionStatesOfFiltersByMirrorAndTopicAndSortsByPartition() {
        PartitionStateRecord p10 = state("t", 10, PartitionState.MIRRORING, 0);
        PartitionStateRecord p2 = state("t", 2, PartitionState.PAUSED, 0);
        PartitionStateRecord other = state("t2", 0, PartitionState.MIRRORING, 0);
        MirrorImage image = new MirrorImage(Map.of(), Map.of(), Map.of(p10.key(), p10, p2.key(), p2, other.key(), other));
        assertEquals(List.of(p2, p10), List.copyOf(image.partitionStatesOf("dr", "t")));
        assertEquals(List.of(), List.copyOf(image.partitionStatesOf("x", "t")));
        assertEquals(p2, image.partitionState("dr", "t", 2).orElseThrow());
    }

    @Test
    void partitionStatesOfATopicComeFromAnIndexBuiltOnceNotFromAScan() {
        PartitionStateRecord p0 = state("t", 0, PartitionState.STOPPED, 0);
        PartitionStateRecord p1 = state("t", 1, PartitionState.STOPPING, 0);
        PartitionStateRecord other = state("t2", 0, PartitionState.STOPPED, 0);
        MirrorImage image = new MirrorImage(Map.of(), Map.of(), Map.of(p0.key(), p0, p1.key(), p1, other.key(), other));
        // The same list object on every call: served from the index, not computed again per call.
        assertSame(image.partitionStatesOf("dr", "t"), image.partitionStatesOf("dr", "t"));
        assertEquals(List.of(p0, p1), List.copyOf(image.partitionStatesOf("dr", "t")));
        assertFalse(image.stoppedOnEveryPartition("dr", "t", 2), "one partition still STOPPING");
        assertTrue(image.stoppedOnEveryPartition("dr", "t2", 1));
        assertFalse(image.stoppedOnEveryPartition("dr", "t2", 2), "a partition never reported");
        assertFalse(image.stoppedOnEveryPartition("other", "t2", 1), "another mirror's topic of the same name");

        PartitionStateRecord p1Stopped = state("t", 1, PartitionState.STOPPED, 1);
        MirrorImage next = new MirrorImage(Map.of(), Map.of(), Map.of(p0.key(), p0, p1Stopped.key(), p1Stopped));
        assertTrue(next.stoppedOnEveryPartition("dr", "t", 2), "a new image has its own index");
    }

    @Test
    void metadataRecordsAddReplaceAndTombstonesRemove() {
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        MirrorRecord mirror = new MirrorRecord("dr", Map.of("bootstrap.servers", "s:1"), "A", 1L);
        delta.replayMetadata(RecordCodec.encodeKey(RecordCodec.mirrorKey("dr")), RecordCodec.encodeMirror(mirror));
        replay(delta, topic("a", "dr"));
        replay(delta, topic("b", "dr"));
        MirrorImage first = delta.apply();
        assertEquals(Map.of("dr", mirror), first.mirrors());
        assertEquals(2, first.topics().size());

        MirrorDelta next = new MirrorDelta(first);
        MirrorTopicRecord paused = topic("a", "dr").withDesired(DesiredState.PAUSED, new LastCommand("c-1", CommandOp.PAUSE, 2L, "paused"));
        replay(next, paused);
        next.replayMetadata(RecordCodec.encodeKey(RecordCodec.topicKey("b")), null);
        next.replayMetadata(RecordCodec.encodeKey(RecordCodec.mirrorKey("dr")), null);
        MirrorImage second = next.apply();
        assertEquals(Map.of("a", paused), second.topics());
        assertTrue(second.mirrors().isEmpty());
        assertEquals(2, first.topics().size(), "the base image is immutable");
        // A kind of record a newer version writes is ignored, so an older reader goes on; an unreadable value is not.
        next.replayMetadata(RecordCodec.encodeKey("future-kind:x"), "{\"version\":9}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(second.topics(), next.apply().topics());
        assertThrows(IllegalArgumentException.class,
            () -> next.replayMetadata(RecordCodec.encodeKey(RecordCodec.topicKey("c")), "not json".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    @Test
    void staleLeaderStateIsFenced() {
        PartitionStateRecord epoch5 = state("t", 0, PartitionState.MIRRORING, 5);
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        replay(delta, epoch5);
        replay(delta, state("t", 0, PartitionState.FAILED, 4)); // stale leader: ignored
        assertEquals(epoch5, delta.apply().partitionState("dr", "t", 0).orElseThrow());

        PartitionStateRecord sameEpoch = state("t", 0, PartitionState.PAUSED, 5);
        replay(delta, sameEpoch);
        MirrorImage image = delta.apply();
        assertEquals(sameEpoch, image.partitionState("dr", "t", 0).orElseThrow());

        // Fencing also holds against the base image of a later delta.
        MirrorDelta later = new MirrorDelta(image);
        replay(later, state("t", 0, PartitionState.MIRRORING, 3));
        assertEquals(sameEpoch, later.apply().partitionState("dr", "t", 0).orElseThrow());
        PartitionStateRecord epoch6 = state("t", 0, PartitionState.STOPPING, 6);
        replay(later, epoch6);
        assertEquals(epoch6, later.apply().partitionState("dr", "t", 0).orElseThrow());
    }

    @Test
    void stateTombstoneRemovesAndThenAnyEpochIsAccepted() {
        PartitionStateRecord epoch5 = state("t", 0, PartitionState.MIRRORING, 5);
        MirrorDelta delta = new MirrorDelta(new MirrorImage(Map.of(), Map.of(), Map.of(epoch5.key(), epoch5)));
        delta.replayState(RecordCodec.encodeKey(epoch5.logKey()), null);
        assertTrue(delta.apply().partitionStates().isEmpty());
        PartitionStateRecord epoch1 = state("t", 0, PartitionState.PREPARING, 1);
        replay(delta, epoch1);
        assertEquals(Map.of(epoch1.key(), epoch1), delta.apply().partitionStates());
    }

    @Test
    void emptyDeltaKeepsTheImageContents() {
        MirrorImage image = new MirrorImage(Map.of(), Map.of("a", topic("a", "dr")), Map.of());
        MirrorImage applied = new MirrorDelta(image).apply();
        assertEquals(image.topics(), applied.topics());
        assertSame(image.topics(), applied.topics());
    }

    @Test
    void theControllerPositionIsTheLastOneReplayedAndSurvivesOtherChanges() {
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        assertTrue(delta.apply().controllerPosition().isEmpty(), "no position until a controller recorded one");
        byte[] key = RecordCodec.encodeKey(RecordCodec.CONTROLLER_POSITION_KEY);
        delta.replayMetadata(key, RecordCodec.encodeControllerPosition(new ControllerPositionRecord(5, "c-4", 1L, "log-id")));
        delta.replayMetadata(key, RecordCodec.encodeControllerPosition(new ControllerPositionRecord(9, "c-8", 2L, "log-id")));
        MirrorImage image = delta.apply();
        assertEquals(new ControllerPositionRecord(9, "c-8", 2L, "log-id"), image.controllerPosition().orElseThrow());
        MirrorDelta next = new MirrorDelta(image);
        replay(next, topic("a", "dr"));
        assertEquals(image.controllerPosition(), next.apply().controllerPosition(), "other records keep the position");
    }
}
