package io.clustermirror.broker.partition;

import io.clustermirror.broker.bridge.LeaderChange;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The producer-state hygiene against an in-memory replica and a direct scheduler: no broker. */
class ProducerStateHygieneTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final int NODE = 1;
    private static final int LEADER = 2;
    private static final Uuid TOPIC_ID = Uuid.fromString("x3Gs7VbKQwqUTGdAbbmGPA");

    private final InMemoryReplica replica = new InMemoryReplica(TP, NODE, 3);
    private final DirectScheduler scheduler = new DirectScheduler();
    /** What the partition's leader (another broker) holds, as the hygiene reads it. */
    private final InMemoryReplica leader = new InMemoryReplica(TP, LEADER, 3);
    private int leaderReads;
    private final ProducerStateHygiene hygiene = new ProducerStateHygiene(replica, (tp, from, to) -> {
        leaderReads++;
        List<StoredBatch> batches = new ArrayList<>();
        leader.localRecords(tp, from, Integer.MAX_VALUE).forEach(b -> {
            if (b.baseOffset() < to) {
                batches.add(b);
            }
        });
        return new ProducerStateHygiene.LeaderBatches(LEADER, batches);
    }, scheduler);

    /** An image whose mirror recorded {@code state} for the partition, with its barrier at {@code barrierOffset}. */
    private static MirrorImage imageWithBarrier(PartitionState state, long barrierOffset) {
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        MirrorTopicRecord topic = new MirrorTopicRecord(TP.topic(), "dr", DesiredState.STOPPED, "id", 1, 1L);
        delta.replayMetadata(RecordCodec.encodeKey(RecordCodec.topicKey(TP.topic())), RecordCodec.encodeTopic(topic));
        PartitionStateRecord r = new PartitionStateRecord("dr", TP.topic(), TP.partition(), state, 3, LEADER, "id", -1, -1, List.of(),
            -1, -1, null, barrierOffset, -1, -1, 1L);
        delta.replayState(RecordCodec.encodeKey(r.logKey()), RecordCodec.encodeState(r));
        return delta.apply();
    }

    private void hostReplica() {
        hygiene.onLeadershipChanges(List.of(new LeaderChange(TP, TOPIC_ID, replica.leader, replica.leaderEpoch, false)));
    }

    @Test
    void aReplicaPastTheBarrierLosesItsMirroredProducersAndALeaderIsThenCleanForWrites() {
        replica.withRecords(3, 1);
        replica.batches.add(BarrierBatch.build(3, 2, "src", 1L));
        replica.withRecords(1, 3);
        hostReplica();

        hygiene.onImage(imageWithBarrier(PartitionState.STOPPED, 3));

        assertEquals(List.of("remove producers before 3"), replica.changes, "the pass runs as the image arrives");
        assertTrue(hygiene.cleanForWrites(TP.topic()));
        assertEquals(1, replica.changes.size(), "clean at this epoch: a write does not clean again");
    }

    @Test
    void aReplicaThatHasNotReachedTheBarrierIsLeftAlone() {
        replica.withRecords(3, 1);
        hostReplica();
        hygiene.onImage(imageWithBarrier(PartitionState.STOPPED, 3));
        scheduler.runPeriodic();
        assertEquals(List.of(), replica.changes);
    }

    @Test
    void aNewLeaderEpochIsCleanedByTheFirstWriteThatAsks() {
        replica.withRecords(3, 1);
        hostReplica();
        hygiene.onImage(imageWithBarrier(PartitionState.STOPPED, 3)); // the barrier has not reached this replica yet
        replica.batches.add(BarrierBatch.build(3, 2, "src", 1L));
        replica.leaderEpoch = 4;

        assertTrue(hygiene.cleanForWrites(TP.topic()));
        assertTrue(hygiene.cleanForWrites(TP.topic()));

        assertEquals(List.of("remove producers before 3"), replica.changes, "once per leader epoch");
    }

    @Test
    void aWriteLooksUpTheBarriersOfItsTopicInAnIndexBuiltPerImage() {
        hygiene.onImage(imageWithBarrier(PartitionState.STOPPED, 3));
        assertEquals(Map.of(TP, 3L), hygiene.barriersOf(TP.topic()));
        // The same map object on every call: a lookup in what the image built, not a scan per write.
        assertSame(hygiene.barriersOf(TP.topic()), hygiene.barriersOf(TP.topic()));
        assertEquals(Map.of(), hygiene.barriersOf("not-mirrored"));
        assertTrue(hygiene.cleanForWrites("not-mirrored"));
        assertEquals(List.of(), replica.changes, "a write to another topic touches no mirror partition");
    }

    /** A follower out of the ISR during the stop holds what the stop truncated where the leader holds the barrier. */
    @Test
    void aFollowerThatMissedTheStopIsTruncatedToTheBarrierOnProof() {
        replica.leader = false;
        replica.withRecords(3, 1).withRecords(2, 1);
        leader.withRecords(3, 1);
        leader.batches.add(BarrierBatch.build(3, 2, "src", 1L));
        hostReplica();

        hygiene.onImage(imageWithBarrier(PartitionState.STOPPED, 3));

        assertEquals(List.of("truncate follower 3"), replica.changes, "no producer cleaning before it refetched the barrier");
    }

    @Test
    void aFollowerIsNotTruncatedWithoutTheLeadersBarrier() {
        replica.leader = false;
        replica.withRecords(3, 1).withRecords(2, 1);
        leader.withRecords(3, 1).withRecords(2, 1); // the recorded barrier is not there either
        hostReplica();

        hygiene.onImage(imageWithBarrier(PartitionState.STOPPED, 3));
        scheduler.runPeriodic();

        assertEquals(List.of("remove producers before 3", "remove producers before 3"), replica.changes,
            "not truncated; cleaned as any replica past the barrier");
        assertEquals(1, leaderReads, "the leader was read once: nothing to repair, no need to look again");
    }

    @Test
    void aFollowerHoldingTheBarrierIsOnlyCleaned() {
        replica.leader = false;
        replica.withRecords(3, 1);
        replica.batches.add(BarrierBatch.build(3, 2, "src", 1L));
        replica.withRecords(1, 3);
        hostReplica();

        hygiene.onImage(imageWithBarrier(PartitionState.STOPPED, 3));

        assertEquals(List.of("remove producers before 3"), replica.changes);
        assertEquals(0, leaderReads);
    }
}
