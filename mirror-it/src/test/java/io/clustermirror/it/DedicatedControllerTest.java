package io.clustermirror.it;

import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A destination with a dedicated controller (1 controller-only node + 2 broker-only nodes, launched processes): the
 * controller, which authorizes CreatePartitions, DeleteTopics and topic config changes, keeps mirror topics read-only,
 * lets the metadata sync through, and fails closed while it cannot read the mirror state.
 */
@Tag(ProcessCluster.TAG)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@MirrorClusterTest(topologies = "topologies")
class DedicatedControllerTest {
    private static final int CONTROLLER = 1;
    private static final int BROKER_B = 3;

    private static MirrorTestCluster source;
    private static ProcessCluster destination;
    private static ClusterMirrorAdmin mirrors;

    /**
     * A one-broker in-JVM source named {@code <name>-source} and a destination named {@code <name>-destination} of
     * {@code controllers} dedicated controllers and {@code brokers} brokers, launched as {@code destination} says.
     */
    static ClusterPair.Topologies dedicatedPair(String name, int controllers, int brokers, ClusterTopology.Builder destination) {
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name(name + "-source").brokers(1).topology(),
            destination.dedicated(controllers, brokers).build());
    }

    static ClusterPair.Topologies topologies() {
        return dedicatedPair("dedicated", 1, 2, ProcessCluster.topology("dedicated-destination"));
    }

    @BeforeAll
    static void nameTheClusters(ClusterPair<MirrorTestCluster, ProcessCluster> clusters) {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
    }

    /**
     * CreatePartitions, IncrementalAlterConfigs (retention.ms=1) and DeleteTopics of a MIRRORING topic are refused with
     * TOPIC_AUTHORIZATION_FAILED; the topic stays MIRRORING, one partition, identical to the source; an ordinary topic takes
     * the same calls; the metadata sync still grows the mirror topic and copies a source config change.
     */
    @Test
    @Order(1)
    void theControllerRefusesChangesOfMirrorTopicsAndLetsTheSyncThrough() throws Exception {
        String topic = "dc-orders";
        mirrorTopic("dc", topic);
        try (Admin admin = destination.admin()) {
            assertControllerChangesRefused(admin, topic);
            assertEquals(1, partitions(admin, topic), "no partition added");
            assertFalse(explicitConfigs(admin, topic).containsKey("retention.ms"), "retention.ms unchanged");

            Workloads.createTopics(admin, List.of(new NewTopic("dc-plain", 1, (short) 2)));
            admin.createPartitions(Map.of("dc-plain", NewPartitions.increaseTo(2))).all().get();
            admin.incrementalAlterConfigs(Map.of(resource("dc-plain"), List.of(retention("1")))).all().get();
            // A broker serves DescribeConfigs from its metadata, which follows the controller's change a moment later.
            TestUtils.waitFor(() -> "1".equals(explicitConfigs(admin, "dc-plain").get("retention.ms")), MirrorAssertions.TIMEOUT,
                "an ordinary topic takes retention.ms=1");
            admin.deleteTopics(List.of("dc-plain")).all().get();
        }
        MirrorAssertions.awaitState(mirrors, "dc", topic, 1, PartitionState.MIRRORING);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic, 1);

        try (Admin src = source.admin()) {
            src.createPartitions(Map.of(topic, NewPartitions.increaseTo(2))).all().get();
            src.incrementalAlterConfigs(Map.of(resource(topic), List.of(new AlterConfigOp(new ConfigEntry("max.message.bytes", "7200000"),
                AlterConfigOp.OpType.SET)))).all().get();
        }
        Workloads.writeToEveryPartition(source.bootstrapServers(), topic, 2, "grown", 5);
        try (Admin admin = destination.admin()) {
            TestUtils.waitFor(() -> partitions(admin, topic) == 2, MirrorAssertions.TIMEOUT, "the sync grows " + topic + " to 2 partitions");
            TestUtils.waitFor(() -> "7200000".equals(explicitConfigs(admin, topic).get("max.message.bytes")), MirrorAssertions.TIMEOUT,
                "the sync copies the source's max.message.bytes");
        }
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 2);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic, 2);
        MirrorAssertions.awaitState(mirrors, "dc", topic, 2, PartitionState.MIRRORING);
    }

    /**
     * A controller restarted with its clients pointed at a broker that is down cannot read the mirror state: it refuses
     * those changes on every topic (fail closed) and says why; once that broker is back it loads the state, and only
     * mirror topics stay refused.
     */
    @Test
    @Order(2)
    void aControllerThatCannotReachABrokerFailsClosedUntilItCan() throws Exception {
        String topic = "dc-closed";
        mirrorTopic("dc-closed", topic);
        try (Admin admin = destination.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic("dc-other", 1, (short) 2)));
        }
        destination.stop(BROKER_B);
        destination.stop(CONTROLLER);
        destination.launch(CONTROLLER, Map.of("cluster.mirror.local.bootstrap.servers", "localhost:" + destination.brokerPort(BROKER_B)));
        try (Admin admin = destination.admin()) {
            TestUtils.waitFor(() -> refused(admin.createPartitions(Map.of("dc-other", NewPartitions.increaseTo(2))).all()),
                MirrorAssertions.TIMEOUT, "the controller refuses to grow an ordinary topic while it cannot read the mirror state");
            assertRefused(admin.incrementalAlterConfigs(Map.of(resource("dc-other"), List.of(retention("1")))).all());
            assertTrue(destination.outputSinceLastStart(CONTROLLER).contains("has not loaded the Cluster Mirror state yet"),
                "the controller logs why it refuses");

            destination.start(BROKER_B);
            TestUtils.waitFor(() -> succeeded(admin.createPartitions(Map.of("dc-other", NewPartitions.increaseTo(2))).all()),
                MirrorAssertions.TIMEOUT, "the controller lets an ordinary topic grow once it has read the mirror state");
            assertControllerChangesRefused(admin, topic);
        }
        MirrorAssertions.awaitState(mirrors, "dc-closed", topic, 1, PartitionState.MIRRORING);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic, 1);
    }

    /**
     * A source topic named like an internal one ({@code __audit}), mirrored because the mirror's filters let it (the default
     * {@code mirror.topics.exclude=__.*} leaves such names out), is kept read-only by the controller like any mirror
     * topic: no new partition, no config change, no deletion. The cluster's own topics are never mirrored.
     */
    @Test
    @Order(3)
    void aMirrorTopicNamedWithTwoUnderscoresIsReadOnlyOnTheControllerToo() throws Exception {
        String topic = "__audit";
        mirrorTopic(source, destination, mirrors, "dc-audit", topic, Map.of("mirror.topics.exclude", ""));
        try (Admin admin = destination.admin()) {
            assertControllerChangesRefused(admin, topic);
            assertEquals(1, partitions(admin, topic), "no partition added");
            assertFalse(explicitConfigs(admin, topic).containsKey("retention.ms"), "retention.ms unchanged");
        }
        MirrorAssertions.awaitState(mirrors, "dc-audit", topic, 1, PartitionState.MIRRORING);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic, 1);

        ExecutionException internal = assertThrows(ExecutionException.class,
            () -> mirrors.startMirrorTopics("dc-audit", List.of("__mirror_state"), List.of()).all().get(60, TimeUnit.SECONDS));
        assertTrue(internal.getCause().getMessage().contains("'__mirror_state' is an internal topic of Kafka or a name reserved "
            + "for Cluster Mirror"), internal.getCause().toString());
    }

    /** Creates a one-partition source topic with every kind of batch and mirrors it to the end (metadata sync every second). */
    static void mirrorTopic(TestCluster source, TestCluster destination, ClusterMirrorAdmin mirrors, String mirror, String topic)
            throws Exception {
        mirrorTopic(source, destination, mirrors, mirror, topic, Map.of());
    }

    /** As above, with the mirror's configs on top of the test's. */
    static void mirrorTopic(TestCluster source, TestCluster destination, ClusterMirrorAdmin mirrors, String mirror, String topic,
                            Map<String, String> mirrorConfigs) throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 1)));
        }
        Workloads.writeAllKinds(source.bootstrapServers(), topic, 1, 3);
        Map<String, String> config = new HashMap<>(MirrorAssertions.mirrorConfig(source));
        config.put("mirror.metadata.refresh.interval.ms", "1000");
        config.putAll(mirrorConfigs);
        mirrors.createClusterMirror(mirror, config).all().get();
        mirrors.startMirrorTopics(mirror, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        MirrorAssertions.awaitState(mirrors, mirror, topic, 1, PartitionState.MIRRORING);
    }

    private static void mirrorTopic(String mirror, String topic) throws Exception {
        mirrorTopic(source, destination, mirrors, mirror, topic);
    }

    /** CreatePartitions, IncrementalAlterConfigs and DeleteTopics of the topic fail with TOPIC_AUTHORIZATION_FAILED. */
    static void assertControllerChangesRefused(Admin admin, String topic) throws Exception {
        assertRefused(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all());
        assertRefused(admin.incrementalAlterConfigs(Map.of(resource(topic), List.of(retention("1")))).all());
        assertRefused(admin.deleteTopics(List.of(topic)).all());
        assertTrue(admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(topic), topic + " still exists");
    }

    static void assertRefused(KafkaFuture<Void> call) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(60, TimeUnit.SECONDS));
        assertInstanceOf(TopicAuthorizationException.class, e.getCause());
    }

    /** True if the call failed with TOPIC_AUTHORIZATION_FAILED, false if it failed otherwise (e.g. no controller yet). */
    static boolean refused(KafkaFuture<Void> call) throws Exception {
        try {
            call.get(60, TimeUnit.SECONDS);
            throw new AssertionError("the call succeeded");
        } catch (ExecutionException e) {
            return e.getCause() instanceof TopicAuthorizationException;
        }
    }

    private static boolean succeeded(KafkaFuture<Void> call) throws Exception {
        try {
            call.get(60, TimeUnit.SECONDS);
            return true;
        } catch (ExecutionException e) {
            return false;
        }
    }

    static int partitions(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions().size();
    }

    static Map<String, String> explicitConfigs(Admin admin, String topic) throws Exception {
        Map<String, String> configs = new HashMap<>();
        admin.describeConfigs(List.of(resource(topic))).all().get(30, TimeUnit.SECONDS).get(resource(topic)).entries().stream()
            .filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG)
            .forEach(e -> configs.put(e.name(), e.value()));
        return configs;
    }

    static ConfigResource resource(String topic) {
        return new ConfigResource(ConfigResource.Type.TOPIC, topic);
    }

    static AlterConfigOp retention(String ms) {
        return new AlterConfigOp(new ConfigEntry("retention.ms", ms), AlterConfigOp.OpType.SET);
    }
}
