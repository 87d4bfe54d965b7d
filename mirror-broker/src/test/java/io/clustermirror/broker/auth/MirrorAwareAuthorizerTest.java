package io.clustermirror.broker.auth;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The read-only rule: a mirror topic takes client writes only once it is STOPPED on every partition. */
class MirrorAwareAuthorizerTest {
    static MirrorImage image(DesiredState desired, PartitionState... states) {
        return image("t", desired, states);
    }

    /** An image in which mirror "dr" holds {@code name} in that desired state, its partitions in those states. */
    static MirrorImage image(String name, DesiredState desired, PartitionState... states) {
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        MirrorTopicRecord topic = new MirrorTopicRecord(name, "dr", desired, "id", states.length, 1L);
        delta.replayMetadata(RecordCodec.encodeKey(RecordCodec.topicKey(name)), RecordCodec.encodeTopic(topic));
        for (int p = 0; p < states.length; p++) {
            if (states[p] == null) {
                continue; // never reported
            }
            PartitionStateRecord r = new PartitionStateRecord("dr", name, p, states[p], 0, 0, "id", -1, -1, List.of(),
                -1, -1, null, -1, -1, -1, 1L);
            delta.replayState(RecordCodec.encodeKey(r.key()), RecordCodec.encodeState(r));
        }
        return delta.apply();
    }

    @Test
    void mirroringPausedAndStoppingTopicsAreReadOnly() {
        assertEquals(Optional.of("dr"), MirrorAwareAuthorizer.readOnlyMirrorOf(image(DesiredState.MIRRORING, PartitionState.MIRRORING), "t"));
        assertEquals(Optional.of("dr"), MirrorAwareAuthorizer.readOnlyMirrorOf(image(DesiredState.PAUSED, PartitionState.PAUSED), "t"));
        assertEquals(Optional.of("dr"), MirrorAwareAuthorizer.readOnlyMirrorOf(
            image(DesiredState.STOPPED, PartitionState.STOPPED, PartitionState.STOPPING), "t"), "one partition still STOPPING");
        assertEquals(Optional.of("dr"), MirrorAwareAuthorizer.readOnlyMirrorOf(
            image(DesiredState.STOPPED, PartitionState.STOPPED, null), "t"), "one partition never reported STOPPED");
        assertEquals(Optional.of("dr"), MirrorAwareAuthorizer.readOnlyMirrorOf(
            image(DesiredState.MIRRORING, PartitionState.STOPPED), "t"), "started again after a stop");
    }

    @Test
    void aTopicStoppedOnEveryPartitionAndOtherTopicsAreWritable() {
        assertEquals(Optional.empty(), MirrorAwareAuthorizer.readOnlyMirrorOf(
            image(DesiredState.STOPPED, PartitionState.STOPPED, PartitionState.STOPPED), "t"));
        assertEquals(Optional.empty(), MirrorAwareAuthorizer.readOnlyMirrorOf(image(DesiredState.MIRRORING, PartitionState.MIRRORING), "other"));
    }
}
