package io.clustermirror.it;

import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one jar dropped into a stock Kafka installation of each supported release other than the build's own
 * ({@link KafkaReleases#others()}), on launched nodes: a dedicated controller and two brokers. Against a source on the
 * build's Kafka that runs the extension too, each release mirrors idempotent and transactional producers in every codec
 * with the same offsets and bytes, refuses produce to and deletion of a mirror topic (the deletion through its
 * controller-only node), keeps mirroring through a restart of a partition's leader, stops with a barrier that leaves
 * no mirrored producer behind, and is the source of a failback. The tests of a release run in order on its cluster.
 */
@Tag(ProcessCluster.TAG)
@ParameterizedClass(name = "Kafka {0}")
@MethodSource("io.clustermirror.it.KafkaReleases#others")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@MirrorClusterTest(topologies = "topologies")
class KafkaReleasesSmokeTest {
    private static final int PARTITIONS = 2;

    /** The source, on the build's Kafka, shared by every release: each release has its own topic and mirrors. */
    private static MirrorTestCluster source;
    private static ClusterMirrorAdmin mirrorsOnSource;
    private static ProcessCluster destination;
    private static ClusterMirrorAdmin mirrors;

    @Parameter
    String release;

    /** The source runs the extension too: each release's destination fails back to it. */
    static ClusterPair.Topologies topologies() {
        return ClusterPair.Topologies.sourceOnly(MirrorTestCluster.builder().name("releases-source").brokers(1).withExtension(true).topology());
    }

    @BeforeAll
    static void nameTheSource(ClusterPair<MirrorTestCluster, ProcessCluster> clusters) {
        source = clusters.source;
        mirrorsOnSource = clusters.mirrorsOn(source);
    }

    @BeforeParameterizedClassInvocation
    static void startDestination(String release) throws Exception {
        destination = ProcessCluster.start(ProcessCluster.topology("kafka-" + KafkaReleases.dashed(release)).dedicated(1, 2)
            .launchMode(ClusterTopology.LaunchMode.DROP_IN).kafkaRelease(release).build());
        for (int node : destination.nodeIds()) {
            String output = destination.outputSinceLastStart(node);
            assertTrue(output.contains("agent on Kafka " + release), "node " + node + " runs Kafka " + release + ":\n"
                + output.substring(Math.max(0, output.length() - 3000)));
        }
        mirrors = ClusterMirrorAdmin.create(destination.clientProperties());
    }

    @AfterParameterizedClassInvocation
    static void stopDestination() throws Exception {
        try (ClusterMirrorAdmin m = mirrors; ProcessCluster d = destination) {
            // closed in reverse order
        }
    }

    private String topic() {
        return "smoke-" + KafkaReleases.dashed(release);
    }

    private String mirror() {
        return "to-" + KafkaReleases.dashed(release);
    }

    @Test
    @Order(1)
    void mirrorsEveryKindOfBatchWithTheSameOffsetsAndBytes() throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic(), PARTITIONS, (short) 1)));
        }
        Workloads.writeAllKinds(source.bootstrapServers(), topic(), PARTITIONS, 4);
        mirrors.createClusterMirror(mirror(), MirrorAssertions.mirrorConfig(source)).all().get();
        mirrors.startMirrorTopics(mirror(), List.of(topic()), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic(), PARTITIONS);
        MirrorAssertions.awaitState(mirrors, mirror(), topic(), PARTITIONS, PartitionState.MIRRORING);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic(), PARTITIONS);
        MirrorAssertions.assertSameRecords(source, destination, topic(), PARTITIONS);
    }

    @Test
    @Order(2)
    void aMirrorTopicRefusesProduceAndItsControllerRefusesItsDeletion() throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(destination.bootstrapServers(),
                Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 20_000,
                    ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000))) {
            ExecutionException refused = assertThrows(ExecutionException.class,
                () -> producer.send(Workloads.record(topic(), 0, "local", 0)).get(60, TimeUnit.SECONDS));
            assertInstanceOf(TopicAuthorizationException.class, refused.getCause(), String.valueOf(refused.getCause()));
        }
        try (Admin admin = destination.admin()) {
            DedicatedControllerTest.assertControllerChangesRefused(admin, topic());
        }
    }

    @Test
    @Order(3)
    void mirroringGoesOnThroughARestartOfAPartitionsLeader() throws Exception {
        TopicPartition tp = new TopicPartition(topic(), 0);
        int leader = destination.leaderOf(tp);
        destination.stop(leader);
        Workloads.writeIdempotentAndTransactional(source.bootstrapServers(), topic(), "restart-" + KafkaReleases.dashed(release));
        destination.start(leader);
        MirrorAssertions.awaitCaughtUp(source, destination, topic(), PARTITIONS);
        MirrorAssertions.awaitMirroringWithoutError(mirrors, mirror(), topic(), PARTITIONS);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic(), PARTITIONS);
    }

    @Test
    @Order(4)
    void aStopWritesTheBarrierAndLeavesNoMirroredProducer() throws Exception {
        TopicPartition tp = new TopicPartition(topic(), 0);
        long end;
        try (Admin admin = source.admin()) {
            end = MirrorAssertions.endOffset(admin, tp);
        }
        mirrors.stopMirrorTopics(mirror(), List.of(topic()), List.of()).all().get();
        MirrorAssertions.awaitState(mirrors, mirror(), topic(), PARTITIONS, PartitionState.STOPPED);
        MirrorPartitionDescription stopped = MirrorAssertions.describe(mirrors, mirror(), topic(), 0);
        assertEquals(end, stopped.barrierOffset(), "the barrier follows the source's last record: " + stopped);
        TestUtils.waitFor(() -> MirrorAssertions.producerIds(destination, tp).isEmpty(), MirrorAssertions.TIMEOUT,
            "no mirrored producer left after the barrier on Kafka " + release);
        // Local producers write after the barrier, whatever ids they get.
        List<Workloads.Acked> local = Workloads.writeIdempotentAndTransactional(destination.bootstrapServers(), topic(),
            "local-" + KafkaReleases.dashed(release));
        assertTrue(local.stream().allMatch(w -> w.offset() > end), "local writes follow the barrier: " + local);
    }

    @Test
    @Order(5)
    void theStoppedTopicFailsBackToTheOldSource() throws Exception {
        TopicPartition tp = new TopicPartition(topic(), 0);
        String back = "back-" + KafkaReleases.dashed(release);
        mirrorsOnSource.createClusterMirror(back, MirrorAssertions.mirrorConfig(destination)).all().get();
        mirrorsOnSource.startMirrorTopics(back, List.of(topic()), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(destination, source, topic(), PARTITIONS);
        MirrorAssertions.awaitState(mirrorsOnSource, back, topic(), PARTITIONS, PartitionState.MIRRORING);
        MirrorAssertions.assertIdenticalLogs(destination, source, topic(), PARTITIONS);
        List<String> onSource = MirrorAssertions.readAll(source, tp);
        assertEquals(MirrorAssertions.readAll(destination, tp), onSource);
        assertTrue(onSource.stream().anyMatch(r -> r.contains("local-" + KafkaReleases.dashed(release) + "-tx")),
            "the writes on Kafka " + release + " came back");
        Set<Long> idsOnDestination = MirrorAssertions.producerIds(destination, tp);
        TestUtils.waitFor(() -> MirrorAssertions.producerIds(source, tp).equals(idsOnDestination), MirrorAssertions.TIMEOUT,
            "the old source holds exactly the producers of Kafka " + release + " after their barrier: " + idsOnDestination);
        mirrorsOnSource.stopMirrorTopics(back, List.of(topic()), List.of()).all().get();
        MirrorAssertions.awaitState(mirrorsOnSource, back, topic(), PARTITIONS, PartitionState.STOPPED);
    }
}
