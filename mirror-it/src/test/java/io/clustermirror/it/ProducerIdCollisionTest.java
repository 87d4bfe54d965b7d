package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Invariant 4 on in-JVM clusters: after a stop, local producers that Kafka hands the same ids the mirrored batches
 * carry write and commit on every replica that leads, before and after restarts.
 *
 * <p>Producer ids come in blocks of 1000 per broker, handed out in order from 0 on a fresh cluster, and a restarted
 * broker gets a new block. Both clusters here are fresh and used by this test alone, so the destination's brokers
 * hand out the same low ids of blocks 0, 1000 and 2000 that the source's producers used: the collisions do not
 * depend on what other tests did to a shared cluster.
 */
@MirrorClusterTest(source = "collide-source", sourceBrokers = 3, destination = "collide-destination", destinationBrokers = 3)
class ProducerIdCollisionTest {
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster destination;
    private static ClusterMirrorAdmin mirrors;

    @BeforeAll
    static void nameTheClusters() {
        destination = clusters.destination;
        mirrors = clusters.mirrors;
    }

    @Test
    void localProducersWithMirroredProducerIdsWorkOnEveryReplicaAndAfterRestarts() throws Exception {
        String topic = "collide";
        TopicPartition tp = new TopicPartition(topic, 0);
        MirrorTestCluster source = clusters.source;
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 3)));
        }
        Workloads.writeWithManyProducers(source.bootstrapServers(), topic, 150, 5);
        Set<Long> mirroredIds = MirrorAssertions.producerIds(source, tp);
        mirrors.createClusterMirror("collide", MirrorAssertions.mirrorConfig(source)).all().get();
        mirrors.startMirrorTopics("collide", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        mirrors.stopMirrorTopics("collide", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitState(mirrors, "collide", topic, 1, PartitionState.STOPPED);
        assertTrue(MirrorAssertions.producerIds(destination, tp).isEmpty(),
            "no mirrored producer is left in the leader's state: " + MirrorAssertions.producerIds(destination, tp));

        List<String> written = new ArrayList<>();
        Set<Long> localIds = new HashSet<>();
        writeWithCollidingIds(tp, localIds, written, "first-leader");
        // Leadership to each other replica in turn: followers removed the mirrored producers themselves.
        for (int round = 0; round < 2; round++) {
            int leader = destination.leaderOf(tp);
            destination.shutdownBroker(leader);
            TestUtils.waitFor(() -> destination.leaderOf(tp) != leader, MirrorAssertions.TIMEOUT, "no new leader for " + tp);
            writeWithCollidingIds(tp, localIds, written, "leader-round-" + round);
            destination.startBroker(leader);
        }
        for (int broker : new ArrayList<>(destination.brokerIds())) {
            destination.restartBroker(broker);
        }
        writeWithCollidingIds(tp, localIds, written, "after-restarts");
        Set<Long> collisions = new HashSet<>(localIds);
        collisions.retainAll(mirroredIds);
        assertTrue(collisions.size() >= 3, "local producers reused mirrored producer ids " + collisions
            + "; fewer than 3 collisions would prove little (local ids: " + localIds + ", mirrored ids: " + mirroredIds + ")");
        List<String> values = MirrorAssertions.readAll(destination, tp).stream().map(r -> r.split(" ")[2]).toList();
        assertTrue(values.containsAll(written), "every acknowledged local write is readable: " + written + " in " + values);
    }

    /** Writes with a new idempotent and a new transactional producer and collects the ids they were given. */
    private static void writeWithCollidingIds(TopicPartition tp, Set<Long> localIds, List<String> written, String tag) throws Exception {
        Set<Long> before = MirrorAssertions.producerIds(destination, tp);
        try (KafkaProducer<byte[], byte[]> idempotent = destinationProducer(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true));
             KafkaProducer<byte[], byte[]> transactional = destinationProducer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "dest-" + tag))) {
            String v1 = "idem-" + tag;
            TestUtils.waitFor(() -> {
                try {
                    idempotent.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, Workloads.bytes(v1))).get();
                    return true;
                } catch (ExecutionException e) {
                    // Right after a leader change the new leader refuses writes until its producer state is clean.
                    if (e.getCause() instanceof TopicAuthorizationException) {
                        return false;
                    }
                    throw e;
                }
            }, MirrorAssertions.TIMEOUT, "idempotent write after " + tag);
            written.add(v1);
            transactional.initTransactions();
            transactional.beginTransaction();
            String v2 = "tx-" + tag;
            transactional.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, Workloads.bytes(v2))).get();
            transactional.commitTransaction();
            written.add(v2);
        }
        Set<Long> now = MirrorAssertions.producerIds(destination, tp);
        now.removeAll(before);
        localIds.addAll(now);
    }

    private static KafkaProducer<byte[], byte[]> destinationProducer(Map<String, Object> extra) {
        Map<String, Object> props = new HashMap<>(Map.of(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000,
            ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 15_000, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000));
        props.putAll(extra);
        return Workloads.producer(destination.bootstrapServers(), props);
    }
}
