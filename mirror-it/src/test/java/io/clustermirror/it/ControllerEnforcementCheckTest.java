package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.NewPartitions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A destination whose controller runs without the Cluster Mirror agent (stock Kafka with no authorizer: an install that left
 * the controllers out) lets clients change mirror topics, since the controllers authorize those changes. The brokers'
 * extension proves it end to end (a validateOnly CreatePartitions of a mirror topic that is accepted) and says so: an
 * ERROR naming the controller and the fix, and the gauge {@code controller-enforcement-failed} at 1 on every broker. Once
 * the controller runs with the agent, the check is refused again and the gauge goes back to 0.
 */
@Tag(ProcessCluster.TAG)
class ControllerEnforcementCheckTest {
    private static final int CONTROLLER = 1;
    private static final String METRICS = "kafka.server:type=cluster-mirror";
    private static final String GAUGE = "controller-enforcement-failed";

    @Test
    void aControllerWithoutTheAgentIsReportedUntilItRunsWithIt() throws Exception {
        String topic = "enforced";
        try (MirrorTestCluster source = MirrorTestCluster.builder().name("enforcement-source").brokers(1).start();
             ProcessCluster destination = ProcessCluster.startDedicatedWithBareControllers("enforcement-destination", 1, 2);
             ClusterMirrorAdmin mirrors = ClusterMirrorAdmin.create(destination.clientProperties())) {
            DedicatedControllerTest.mirrorTopic(source, destination, mirrors, "enforcement", topic);
            try (Admin admin = destination.admin()) {
                // The hole the check reports: this controller lets any client grow a mirror topic.
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2)), new CreatePartitionsOptions().validateOnly(true))
                    .all().get(60, TimeUnit.SECONDS);
            }
            awaitGaugeOnEveryBroker(destination, 1, "every broker reports that the controllers do not enforce the read-only rule");
            for (int broker : destination.brokerIds()) {
                String output = destination.outputSinceLastStart(broker);
                assertTrue(output.contains("ERROR") && output.contains("the active controller (node " + CONTROLLER + ") accepted a "
                    + "validateOnly CreatePartitions of mirror topic '" + topic + "'") && output.contains("Fix: start every controller "
                    + "node with the Cluster Mirror agent"), "broker " + broker + " names the controller and the fix:\n"
                    + output.substring(Math.max(0, output.length() - 5000)));
            }

            destination.stop(CONTROLLER);
            destination.installAgent(CONTROLLER);
            destination.launch(CONTROLLER);
            awaitGaugeOnEveryBroker(destination, 0, "the check passes once the controller runs with the agent");
            for (int broker : destination.brokerIds()) {
                assertTrue(destination.outputSinceLastStart(broker).contains("checked that the controllers enforce the read-only rule "
                    + "of mirror topics"), "broker " + broker + " logs that the check passed");
            }
            try (Admin admin = destination.admin()) {
                DedicatedControllerTest.assertControllerChangesRefused(admin, topic);
                assertEquals(1, DedicatedControllerTest.partitions(admin, topic), "no partition added");
            }
            MirrorAssertions.assertIdenticalLogs(source, destination, topic, 1);
        }
    }

    private static void awaitGaugeOnEveryBroker(ProcessCluster destination, int value, String what) throws Exception {
        TestUtils.waitFor(() -> {
            for (int broker : destination.brokerIds()) {
                if (destination.jmxAttribute(broker, METRICS, GAUGE).map(v -> ((Number) v).intValue()).orElse(-1) != value) {
                    return false;
                }
            }
            return true;
        }, MirrorAssertions.TIMEOUT, what);
    }
}
