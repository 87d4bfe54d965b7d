package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.StartPreview;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Failback between two clusters that both run the extension, and loops between them (the failback and loop rules of docs/DESIGN.md). */
@MirrorClusterTest(topologies = "topologies")
class FailbackTest {
    private static MirrorTestCluster a;
    private static MirrorTestCluster b;
    private static ClusterMirrorAdmin mirrorsOnA;
    private static ClusterMirrorAdmin mirrorsOnB;

    /** Two clusters of two brokers, both running the extension: each mirrors the other in turn. */
    static ClusterPair.Topologies topologies() {
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("failback-a").brokers(2).withExtension(true).topology(),
            MirrorTestCluster.builder().name("failback-b").brokers(2).topology());
    }

    @BeforeAll
    static void nameTheClusters(ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters) {
        a = clusters.source;
        b = clusters.destination;
        mirrorsOnA = clusters.mirrorsOn(a);
        mirrorsOnB = clusters.mirrors;
    }

    private static MirrorPartitionDescription describe(ClusterMirrorAdmin admin, String mirror, String topic) throws Exception {
        return MirrorAssertions.describe(admin, mirror, topic, 0);
    }

    private static void awaitState(ClusterMirrorAdmin admin, String mirror, String topic, PartitionState state) throws InterruptedException {
        MirrorAssertions.awaitState(admin, mirror, topic, 1, state);
    }

    private static void writeIdempotentAndTransactional(MirrorTestCluster cluster, String topic, String tag) throws Exception {
        Workloads.writeIdempotentAndTransactional(cluster.bootstrapServers(), topic, tag);
    }

    private static Set<Long> producerIds(MirrorTestCluster cluster, TopicPartition tp) throws Exception {
        return MirrorAssertions.producerIds(cluster, tp);
    }

    @Test
    void failbackTruncatesToTheFailoverPointThenCopiesOnlyTheOtherSidesWrites() throws Exception {
        String topic = "orders";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = a.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 2)));
        }
        writeIdempotentAndTransactional(a, topic, "a1");
        mirrorsOnB.createClusterMirror("from-a", MirrorAssertions.mirrorConfig(a)).all().get();
        mirrorsOnB.startMirrorTopics("from-a", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(a, b, topic, 1);

        // A's last writes are not mirrored: the mirror is paused when they happen, then B fails over.
        mirrorsOnB.pauseMirrorTopics("from-a", List.of(topic), List.of()).all().get();
        awaitState(mirrorsOnB, "from-a", topic, PartitionState.PAUSED);
        writeIdempotentAndTransactional(a, topic, "a-lost");
        mirrorsOnB.stopMirrorTopics("from-a", List.of(topic), List.of()).all().get();
        awaitState(mirrorsOnB, "from-a", topic, PartitionState.STOPPED);
        long failoverPoint = describe(mirrorsOnB, "from-a", topic).barrierOffset();
        writeIdempotentAndTransactional(b, topic, "b1");
        // Many producers on B: producer ids come in blocks from 0 on both clusters, so A's next ones will be among them.
        for (int i = 0; i < 60; i++) {
            try (KafkaProducer<byte[], byte[]> p = Workloads.producer(b.bootstrapServers(), Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
                Workloads.sendBatch(p, topic, 0, "b-many-" + i, 1);
            }
        }

        // Failback: A mirrors B; its log is cut at B's barrier and then copies B's barrier and B's writes.
        mirrorsOnA.createClusterMirror("from-b", MirrorAssertions.mirrorConfig(b)).all().get();
        long endOnA;
        try (Admin admin = a.admin()) {
            endOnA = MirrorAssertions.endOffset(admin, tp);
        }
        List<StartPreview> previews = mirrorsOnA.previewStartMirrorTopics("from-b", List.of(topic), List.of()).partitions().get();
        assertEquals(List.of(new StartPreview(topic, 0, PartitionState.UNKNOWN, -1, failoverPoint, endOnA, StartPreview.Cut.SOURCE_BARRIER,
            failoverPoint, endOnA, 10)), previews, "the start dry-run sees B's barrier and A's unmirrored writes");
        mirrorsOnA.startMirrorTopics("from-b", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(b, a, topic, 1);
        MirrorPartitionDescription onA = describe(mirrorsOnA, "from-b", topic);
        assertEquals(failoverPoint, onA.truncatedFromOffset(), "A was cut at the failover point: " + onA);
        assertEquals(endOnA, onA.truncatedToOffset(), "A's cut is the one the dry-run predicted: " + onA);
        MirrorAssertions.assertIdenticalLogs(b, a, topic, 1);
        List<String> recordsOnA = MirrorAssertions.readAll(a, tp);
        assertEquals(MirrorAssertions.readAll(b, tp), recordsOnA);
        assertTrue(recordsOnA.stream().noneMatch(r -> r.contains("a-lost")), "A's unmirrored writes are gone after the failback");
        assertTrue(recordsOnA.stream().anyMatch(r -> r.contains("b1-tx")), "B's writes reached A");

        // A loop: B cannot mirror the topic back from A while A copies it from B.
        ExecutionException loop = assertThrows(ExecutionException.class,
            () -> mirrorsOnB.startMirrorTopics("from-a", List.of(topic), List.of()).all().get());
        assertEquals(MirrorError.MIRROR_LOOP, assertInstanceOf(ClusterMirrorException.class, loop.getCause()).error());

        // A second failover, on A: local producers work, also those whose ids B's producers had.
        Set<Long> idsFromB = producerIds(b, tp);
        mirrorsOnA.stopMirrorTopics("from-b", List.of(topic), List.of()).all().get();
        awaitState(mirrorsOnA, "from-b", topic, PartitionState.STOPPED);
        assertTrue(producerIds(a, tp).isEmpty(), "no mirrored producer left on A's leader: " + producerIds(a, tp));
        Set<Long> localIds = new HashSet<>();
        for (int i = 0; i < 6; i++) {
            writeIdempotentAndTransactional(a, topic, "a2-" + i);
            localIds.addAll(producerIds(a, tp));
        }
        List<String> after = MirrorAssertions.readAll(a, tp);
        assertTrue(after.stream().anyMatch(r -> r.contains("a2-5-tx")), "A's writes after its failover are readable");
        localIds.retainAll(idsFromB);
        assertTrue(!localIds.isEmpty(), "A's new producers reused none of B's producer ids " + idsFromB + ": the test would prove little");
    }
}
