package io.clustermirror.it;

import io.clustermirror.broker.auth.MirrorAwareAuthorizer;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No config change destroys a mirror topic's data, from anyone: on a destination with a dedicated controller and ACLs
 * (every client a super user), a client that copies the extension's client-id form may set on a MIRRORING topic only the
 * values the metadata sync copies from the source, and a broker-level default that would reach a mirror topic's data is
 * refused; the sync itself keeps copying the source's configs.
 */
@Tag(ProcessCluster.TAG)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@MirrorClusterTest(topologies = "topologies")
class MirrorTopicConfigProtectionTest {
    private static final String MIRROR = "guarded";
    private static final String TOPIC = "guarded-orders";
    /** A client id of the extension's form ({@code cluster-mirror-<...>-<32 hex>}), copied by a super user's client. */
    private static final String FORGED_CLIENT_ID = "cluster-mirror-x-0123456789abcdef0123456789abcdef";
    private static final ConfigResource CLUSTER_DEFAULT = new ConfigResource(ConfigResource.Type.BROKER, "");

    private static ClusterPair<MirrorTestCluster, ProcessCluster> pair;
    private static MirrorTestCluster source;
    private static ProcessCluster destination;

    /** A destination that enforces ACLs and applies retention every second. */
    static ClusterPair.Topologies topologies() {
        return DedicatedControllerTest.dedicatedPair("guarded", 1, 2, ProcessCluster.topology("guarded-destination").serverProperties(Map.of(
            "authorizer.class.name", MirrorAwareAuthorizer.class.getName(),
            "super.users", "User:ANONYMOUS",
            "allow.everyone.if.no.acl.found", "true",
            // An accepted retention.ms=1 would delete the mirrored records within a second.
            "log.retention.check.interval.ms", "1000")));
    }

    @BeforeAll
    static void mirrorTheTopic() throws Exception {
        source = pair.source;
        destination = pair.destination;
        // Policy apply: the sync copies the source's shorter retention at once, and a forged client then tries other values.
        DedicatedControllerTest.mirrorTopic(source, destination, pair.mirrors, MIRROR, TOPIC,
            Map.of(MirrorConfig.SOURCE_DESTRUCTIVE_POLICY, "apply"));
    }


    /**
     * IncrementalAlterConfigs of retention.ms=1, unclean.leader.election.enable=true and min.insync.replicas=1 on the
     * MIRRORING topic from a super user whose client id copies the extension's form: refused by the controller's policy,
     * naming the cause; the topic keeps its configs and every mirrored record stays readable from offset 0. The same call
     * with an ordinary client id is refused by the authorizer, as before.
     */
    @Test
    @Order(1)
    void aSuperUserWithTheExtensionsClientIdCannotSetDestructiveConfigsOnAMirroringTopic() throws Exception {
        try (Admin forged = forgedAdmin(); Admin admin = destination.admin()) {
            for (AlterConfigOp op : List.of(set("retention.ms", "1"), set("unclean.leader.election.enable", "true"),
                    set("min.insync.replicas", "1"))) {
                PolicyViolationException refused = assertPolicyViolation(forged.incrementalAlterConfigs(
                    Map.of(DedicatedControllerTest.resource(TOPIC), List.of(op))).all());
                assertTrue(refused.getMessage().contains("'" + TOPIC + "' is a read-only mirror topic of cluster mirror '" + MIRROR + "'"),
                    refused.getMessage());
            }
            DedicatedControllerTest.assertControllerChangesRefused(admin, TOPIC);
            assertEquals(Map.of(), DedicatedControllerTest.explicitConfigs(admin, TOPIC), "the topic kept its configs");
            assertEquals(0, MirrorAssertions.startOffset(admin, new TopicPartition(TOPIC, 0)), "no record deleted");
        }
        MirrorAssertions.assertSameRecords(source, destination, TOPIC, 1);
        MirrorAssertions.awaitState(pair.mirrors, MIRROR, TOPIC, 1, PartitionState.MIRRORING);
    }

    /**
     * The metadata sync keeps copying the source's configs through the same controller: a source retention.ms of two hours
     * appears on the mirror topic; a forged client may then set only that value.
     */
    @Test
    @Order(2)
    void theSyncStillCopiesTheSourcesRetention() throws Exception {
        try (Admin src = source.admin()) {
            src.incrementalAlterConfigs(Map.of(DedicatedControllerTest.resource(TOPIC), List.of(set("retention.ms", "7200000")))).all()
                .get(30, TimeUnit.SECONDS);
        }
        try (Admin admin = destination.admin(); Admin forged = forgedAdmin()) {
            TestUtils.waitFor(() -> "7200000".equals(DedicatedControllerTest.explicitConfigs(admin, TOPIC).get("retention.ms")), MirrorAssertions.TIMEOUT,
                "the sync copies the source's retention.ms");
            assertPolicyViolation(forged.incrementalAlterConfigs(Map.of(DedicatedControllerTest.resource(TOPIC),
                List.of(set("retention.ms", "1")))).all());
            assertEquals("7200000", DedicatedControllerTest.explicitConfigs(admin, TOPIC).get("retention.ms"));
        }
        MirrorAssertions.assertSameRecords(source, destination, TOPIC, 1);
    }

    /**
     * A cluster-level default that reaches the mirror topic (it has no retention.bytes of its own) is refused, naming the
     * topic and the way out; log.retention.ms, which the topic now sets itself from the source, may change.
     */
    @Test
    @Order(3)
    void aBrokerLevelDefaultThatWouldReachAMirrorTopicIsRefused() throws Exception {
        try (Admin admin = destination.admin()) {
            PolicyViolationException refused = assertPolicyViolation(admin.incrementalAlterConfigs(Map.of(CLUSTER_DEFAULT,
                List.of(set("log.retention.bytes", "1")))).all());
            assertTrue(refused.getMessage().contains("'retention.bytes' of 1 read-only mirror topic(s) that take it from the broker "
                + "default (" + TOPIC + ")"), refused.getMessage());
            assertPolicyViolation(admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.BROKER, "2"),
                List.of(set("log.retention.bytes", "1")))).all());

            admin.incrementalAlterConfigs(Map.of(CLUSTER_DEFAULT, List.of(set("log.retention.ms", "604800001")))).all()
                .get(30, TimeUnit.SECONDS);
            admin.incrementalAlterConfigs(Map.of(CLUSTER_DEFAULT, List.of(new AlterConfigOp(new ConfigEntry("log.retention.ms", null),
                AlterConfigOp.OpType.DELETE)))).all().get(30, TimeUnit.SECONDS);
        }
        MirrorAssertions.assertSameRecords(source, destination, TOPIC, 1);
    }

    private static Admin forgedAdmin() {
        Properties props = destination.clientProperties();
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, FORGED_CLIENT_ID);
        return Admin.create(props);
    }

    private static AlterConfigOp set(String name, String value) {
        return new AlterConfigOp(new ConfigEntry(name, value), AlterConfigOp.OpType.SET);
    }

    private static PolicyViolationException assertPolicyViolation(KafkaFuture<Void> call) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(60, TimeUnit.SECONDS));
        return assertInstanceOf(PolicyViolationException.class, e.getCause());
    }
}
