package io.clustermirror.broker.controller;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Mirror topics stay read-only after a loss of the mirror state, across restarts, until the new state knows them. */
class InternalStateFenceTest {
    private static final Map<String, String> IDS = Map.of("__mirror_metadata", "m1", "__mirror_state", "s1");
    private static final Map<String, String> NEW_IDS = Map.of("__mirror_metadata", "m2", "__mirror_state", "s2");

    @TempDir
    Path dir;

    private Path file() {
        return dir.resolve(InternalStateFence.FILE_NAME);
    }

    /** An image with mirror topics "mirroring" (read-only) and "stopped" (stopped on its one partition: writable). */
    private static MirrorImage mirroringAndStopped() {
        PartitionStateRecord stopped = new PartitionStateRecord("dr", "stopped", 0, PartitionState.STOPPED, 1, 1, "id", -1, -1,
            List.of(), 0, 0, null, 5, -1, -1, 1L);
        return new MirrorImage(Map.of(), Map.of(
            "mirroring", new MirrorTopicRecord("mirroring", "dr", DesiredState.MIRRORING, "id", 1, 1L),
            "stopped", new MirrorTopicRecord("stopped", "dr", DesiredState.STOPPED, "id", 1, 1L)), Map.of(stopped.key(), stopped));
    }

    private static MirrorImage loadedOnce(InternalStateFence fence, Map<String, String> ids, MirrorImage image) {
        fence.startIncarnation(ids, Set.of());
        return fence.publish(image, true);
    }

    @Test
    void readOnlyTopicsStayFencedAcrossRestartsWhenTheInternalTopicsAreRecreated() {
        assertEquals(Set.of(), loadedOnce(new InternalStateFence(file()), IDS, mirroringAndStopped()).fencedTopics());

        InternalStateFence restarted = new InternalStateFence(file());
        assertEquals(Set.of("mirroring"), restarted.startIncarnation(NEW_IDS, Set.of()).fencedTopics(), "only the read-only one");
        assertEquals(Set.of("mirroring"), restarted.publish(MirrorImage.EMPTY, true).fencedTopics());

        InternalStateFence restartedAgain = new InternalStateFence(file());
        assertEquals(Set.of("mirroring"), restartedAgain.startIncarnation(NEW_IDS, Set.of()).fencedTopics(), "the fence is remembered");
        assertEquals(Set.of(), restartedAgain.publish(mirroringAndStopped(), true).fencedTopics(),
            "the new state knows the topic again: its rules apply");
        assertEquals(Set.of(), new InternalStateFence(file()).startIncarnation(NEW_IDS, Set.of()).fencedTopics());
    }

    @Test
    void aFenceIsLiftedOnlyByACompleteImage() {
        InternalStateFence fence = new InternalStateFence(null);
        loadedOnce(fence, IDS, mirroringAndStopped());
        fence.topicsDeleted(Set.of("__mirror_metadata", "__mirror_state"));
        assertEquals(Set.of("mirroring"), fence.startIncarnation(NEW_IDS, Set.of()).fencedTopics());
        assertEquals(Set.of("mirroring"), fence.publish(mirroringAndStopped(), false).fencedTopics(), "still loading");
        assertEquals(Set.of(), fence.publish(mirroringAndStopped(), true).fencedTopics());
    }

    @Test
    void deletedRecordsAreALossEvenWithTheSameTopicIds() {
        InternalStateFence fence = new InternalStateFence(file());
        loadedOnce(fence, IDS, mirroringAndStopped());
        assertEquals(Set.of("mirroring"), new InternalStateFence(file()).startIncarnation(IDS, Set.of("__mirror_state", "__mirror_metadata")).fencedTopics());
    }

    @Test
    void theSameTopicsAtStartAreNoLoss() {
        loadedOnce(new InternalStateFence(file()), IDS, mirroringAndStopped());
        InternalStateFence restarted = new InternalStateFence(file());
        assertEquals(Set.of(), restarted.startIncarnation(IDS, Set.of()).fencedTopics());
        assertEquals(Set.of(), restarted.publish(MirrorImage.EMPTY, true).fencedTopics(),
            "the topics' own records say what is a mirror topic (e.g. a mirror deleted while this broker was down)");
    }

    /**
     * Issue 32 point 5: {@code __mirror_state} alone deleted, re-created or with records deleted. The desired state is intact,
     * so nothing is fenced: the new incarnation starts from the image this broker knew, in which the stopped topic is
     * writable and the mirroring one read-only, and the new state's records go on from there.
     */
    @Test
    void losingTheStateAloneCarriesTheKnownStateOverAndFencesNothing() {
        for (Set<String> recordsDeleted : List.of(Set.<String>of(), Set.of("__mirror_state"))) {
            InternalStateFence fence = new InternalStateFence(file());
            MirrorImage known = loadedOnce(fence, IDS, mirroringAndStopped());
            Map<String, String> newState = recordsDeleted.isEmpty() ? Map.of("__mirror_metadata", "m1", "__mirror_state", "s2") : IDS;
            MirrorImage start = fence.startIncarnation(newState, recordsDeleted);
            assertEquals(Set.of(), start.fencedTopics(), String.valueOf(recordsDeleted));
            assertEquals(known.topics(), start.topics());
            assertEquals(known.partitionState("dr", "stopped", 0), start.partitionState("dr", "stopped", 0));
            assertTrue(io.clustermirror.broker.auth.MirrorAwareAuthorizer.readOnlyMirrorOf(start, "stopped").isEmpty(), "writable");
            assertTrue(io.clustermirror.broker.auth.MirrorAwareAuthorizer.readOnlyMirrorOf(start, "mirroring").isPresent(), "read-only");
            assertEquals(Set.of(), fence.publish(start, true).fencedTopics());
        }
    }

    /** Losing {@code __mirror_metadata}, alone or with the state, loses the desired state: the read-only topic is fenced. */
    @Test
    void losingTheMetadataFencesTheReadOnlyTopicsOnly() {
        for (Map<String, String> ids : List.of(Map.of("__mirror_metadata", "m2", "__mirror_state", "s1"), NEW_IDS)) {
            InternalStateFence fence = new InternalStateFence(null);
            loadedOnce(fence, IDS, mirroringAndStopped());
            MirrorImage start = fence.startIncarnation(ids, Set.of());
            assertEquals(Set.of("mirroring"), start.fencedTopics(), String.valueOf(ids));
            assertTrue(start.topics().isEmpty(), "what the lost desired state said no longer holds");
        }
        InternalStateFence emptied = new InternalStateFence(null);
        loadedOnce(emptied, IDS, mirroringAndStopped());
        assertEquals(Set.of("mirroring"), emptied.startIncarnation(IDS, Set.of("__mirror_metadata")).fencedTopics(), "records deleted");
    }

    /** A topic whose stop completed just before the loss is not fenced, however recently the read-only topics were evaluated. */
    @Test
    void aTopicStoppedJustBeforeTheLossIsNotFenced() {
        InternalStateFence fence = new InternalStateFence(null);
        MirrorImage stopped = mirroringAndStopped();
        PartitionStateRecord stoppingRecord = new PartitionStateRecord("dr", "stopped", 0, PartitionState.STOPPING, 1, 1, "id", -1, -1,
            List.of(), 0, 0, null, 5, -1, -1, 0L);
        MirrorImage beforeTheStop = new MirrorImage(Map.of(), stopped.topics(), Map.of(stoppingRecord.key(), stoppingRecord));
        loadedOnce(fence, IDS, beforeTheStop);
        fence.publish(stopped, true); // the same topics: the evaluation of a moment ago would still hold
        fence.topicsDeleted(Set.of("__mirror_metadata", "__mirror_state"));
        assertEquals(Set.of("mirroring"), fence.fenced());
    }
}
