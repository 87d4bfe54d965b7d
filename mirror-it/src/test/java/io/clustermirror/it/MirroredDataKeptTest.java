package io.clustermirror.it;

import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A destination log that holds exactly what the source holds is never cut, whatever a new leader finds of the
 * partition in {@code __mirror_state}: no record (its image has not loaded it, or it was deleted), or a degraded one
 * that a previous leader wrote (PREPARING or FAILED, nothing mirrored, no source epochs), also when it retries after
 * the source was unreachable. Each test mirrors a topic fully, takes that record away or degrades it, moves the
 * destination leadership, and checks that every batch mirrored before is still there as it was, on every replica.
 */
// Three destination brokers: the mirrored partitions have three replicas, so leadership can move.
@MirrorClusterTest(source = "kept-source", destination = "kept-destination", destinationBrokers = 3)
class MirroredDataKeptTest {
    private static final Logger log = LoggerFactory.getLogger(MirroredDataKeptTest.class);

    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;

    @Test
    void aNewLeaderWithoutAStateRecordKeepsTheMirroredLog() throws Exception {
        assertANewLeaderKeepsTheMirroredLogAfter("kept-no-record", MirroredDataKeptTest::deleteStateRecord);
    }

    @Test
    void aNewLeaderFindingADegradedRecordKeepsTheMirroredLog() throws Exception {
        assertANewLeaderKeepsTheMirroredLogAfter("kept-degraded", MirroredDataKeptTest::degradeStateRecord);
    }

    /** A change of a partition's {@code __mirror_state} record, done once every destination broker's image has it. */
    @FunctionalInterface
    private interface StateRecordChange {
        void apply(String mirror, TopicPartition tp) throws Exception;
    }

    /** Mirrors a topic fully, changes its state record, moves its leadership to another broker and checks nothing was cut. */
    private static void assertANewLeaderKeepsTheMirroredLogAfter(String mirror, StateRecordChange change) throws Exception {
        TopicPartition tp = new TopicPartition(mirror, 0);
        MirrorAssertions.MirroredLog before = mirrorFully(mirror, tp);
        change.apply(mirror, tp);
        int leader = Leadership.moveAway(clusters.destination, tp);
        log.info("Broker {} leads {} now", leader, tp);
        assertKeptWhileMirroringGoesOn(mirror, tp, before);
    }

    /**
     * A new leader that finds the degraded record while the source is down fails to prepare (it cannot read the
     * source) and records FAILED with nothing mirrored; its retries once the source is back must keep the log too.
     */
    @Test
    void aRetryAfterASourceStallKeepsTheMirroredLog() throws Exception {
        String mirror = "kept-stall";
        TopicPartition tp = new TopicPartition(mirror, 0);
        MirrorAssertions.MirroredLog before = mirrorFully(mirror, tp);

        degradeStateRecord(mirror, tp);
        int sourceBroker = clusters.source.brokerIds().iterator().next();
        clusters.source.shutdownBroker(sourceBroker);
        try {
            int leader = Leadership.moveAway(clusters.destination, tp);
            // FAILED lasts the retry backoff (a second at first), then the retry records PREPARING with the error kept.
            MirrorPartitionDescription failed = TestUtils.waitForValue(() -> {
                MirrorPartitionDescription d = MirrorAssertions.describe(clusters.mirrors, mirror, tp.topic(), tp.partition());
                boolean retrying = d.state() == PartitionState.PREPARING && d.lastError() != null;
                return d.state() == PartitionState.FAILED || retrying ? Optional.of(d) : Optional.empty();
            }, MirrorAssertions.TIMEOUT, "the new leader of " + tp + " to fail preparing while the source is down (FAILED, or "
                + "PREPARING its retry after FAILED)");
            log.info("Broker {} leads {} and failed while the source is down: {}", leader, tp, failed);
        } finally {
            clusters.source.startBroker(sourceBroker);
        }

        assertKeptWhileMirroringGoesOn(mirror, tp, before);
    }

    /**
     * Mirrors a new one-partition source topic holding every kind of batch to the end, waits until the leader has
     * recorded that in {@code __mirror_state}, and returns what the destination then holds.
     */
    private static MirrorAssertions.MirroredLog mirrorFully(String mirror, TopicPartition tp) throws Exception {
        try (Admin admin = clusters.source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(tp.topic(), 1, (short) 1)));
        }
        Workloads.writeAllKinds(clusters.source.bootstrapServers(), tp.topic(), 1, 3);
        clusters.mirrors.createClusterMirror(mirror, MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        clusters.mirrors.startMirrorTopics(mirror, List.of(tp.topic()), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, tp.topic(), 1);
        long end;
        try (Admin admin = clusters.source.admin()) {
            end = MirrorAssertions.endOffset(admin, tp);
        }
        // Once the leader recorded its last progress it writes no more (the source is idle): nothing of its own
        // overwrites the record the tests change.
        TestUtils.waitFor(() -> {
            MirrorPartitionDescription d = MirrorAssertions.describe(clusters.mirrors, mirror, tp.topic(), tp.partition());
            return d.state() == PartitionState.MIRRORING && d.lastMirroredOffset() == end - 1 && d.sourceEndOffset() == end;
        }, MirrorAssertions.TIMEOUT, "the leader of " + tp + " to record that it mirrored up to offset " + end);
        return MirrorAssertions.captureMirroredLog(clusters.destination, clusters.mirrors, mirror, tp);
    }

    /** Deletes the partition's record (a tombstone), as if the new leader's image had not loaded it yet. */
    private static void deleteStateRecord(String mirror, TopicPartition tp) throws Exception {
        String partitionKey = PartitionStateRecord.stateKey(mirror, tp.topic(), tp.partition());
        for (String logKey : clusters.destination.mirrorImage(clusters.destination.leaderOf(tp)).stateLogKeysOf(partitionKey)) {
            writeStateRecord(logKey, null);
        }
        awaitEveryImage(mirror, tp, Optional.empty());
    }

    /**
     * Replaces the partition's record with what a leader that found none writes: PREPARING, nothing mirrored, no
     * source epochs, no barrier or truncation; with the current leader epoch, so it wins over the real one.
     */
    private static void degradeStateRecord(String mirror, TopicPartition tp) throws Exception {
        int leader = clusters.destination.leaderOf(tp);
        PartitionStateRecord current = clusters.destination.mirrorImage(leader).partitionState(mirror, tp.topic(), tp.partition())
            .orElseThrow(() -> new AssertionError("no state record of " + tp + " on its leader " + leader));
        int leaderEpoch = clusters.destination.broker(leader).leaderLogState(tp).orElseThrow().leaderEpoch();
        PartitionStateRecord degraded = new PartitionStateRecord(mirror, tp.topic(), tp.partition(), PartitionState.PREPARING,
            leaderEpoch, leader, current.sourceTopicId(), -1, -1, List.of(), -1, current.destLogEndOffset(), null, -1, -1, -1,
            System.currentTimeMillis());
        writeStateRecord(degraded.logKey(), RecordCodec.encodeState(degraded));
        awaitEveryImage(mirror, tp, Optional.of(degraded));
    }

    /** Writes a {@code __mirror_state} record of a partition (null: a tombstone) as its leaders do, acknowledged by all replicas. */
    private static void writeStateRecord(String logKey, byte[] value) throws Exception {
        byte[] key = RecordCodec.encodeKey(logKey);
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(),
                Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
            producer.send(new ProducerRecord<>(InternalTopics.STATE, key, value)).get();
        }
    }

    /** Waits until every destination broker's mirror image holds {@code expected} as the partition's record (or none). */
    private static void awaitEveryImage(String mirror, TopicPartition tp, Optional<PartitionStateRecord> expected)
            throws InterruptedException {
        for (int broker : clusters.destination.brokerIds()) {
            TestUtils.waitFor(() -> clusters.destination.mirrorImage(broker).partitionState(mirror, tp.topic(), tp.partition()).equals(expected),
                MirrorAssertions.TIMEOUT, "the image of broker " + broker + " to hold " + expected.map(Object::toString).orElse("no record")
                    + " for " + tp);
        }
    }

    /**
     * The partition mirrors again and takes new source writes, and nothing mirrored before was cut or copied again:
     * the destination still equals the source, batch for batch.
     */
    private static void assertKeptWhileMirroringGoesOn(String mirror, TopicPartition tp, MirrorAssertions.MirroredLog before)
            throws Exception {
        MirrorAssertions.awaitState(clusters.mirrors, mirror, tp.topic(), 1, PartitionState.MIRRORING);
        Workloads.writeIdempotentAndTransactional(clusters.source.bootstrapServers(), tp.topic(), mirror + "-after");
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, tp.topic(), 1);
        MirrorAssertions.assertMirroredLogKept(clusters.destination, clusters.mirrors, mirror, before);
        MirrorAssertions.assertIdenticalLogs(clusters.source, clusters.destination, tp.topic(), 1);
        MirrorAssertions.assertSameRecords(clusters.source, clusters.destination, tp.topic(), 1);
    }
}
