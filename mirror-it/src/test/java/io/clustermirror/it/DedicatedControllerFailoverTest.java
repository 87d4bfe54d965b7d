package io.clustermirror.it;

import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A destination with a quorum of dedicated controllers (3 controller-only nodes + 2 broker-only nodes), started the
 * drop-in way (Kafka's scripts with the agent; {@link DedicatedControllerTest} covers the launcher): the active
 * controller dies (SIGKILL) and the one that takes over keeps mirror topics read-only, from its own view of the mirror
 * state.
 */
@Tag(ProcessCluster.TAG)
@MirrorClusterTest(topologies = "topologies")
class DedicatedControllerFailoverTest {
    private static ClusterPair<MirrorTestCluster, ProcessCluster> pair;

    static ClusterPair.Topologies topologies() {
        return DedicatedControllerTest.dedicatedPair("dedicated-failover", 3, 2,
            ProcessCluster.topology("dedicated-failover-destination").launchMode(ClusterTopology.LaunchMode.DROP_IN));
    }

    @Test
    void aNewActiveControllerRefusesChangesOfMirrorTopics() throws Exception {
        String topic = "failover-orders";
        ProcessCluster destination = pair.destination;
        DedicatedControllerTest.mirrorTopic(pair.source, destination, pair.mirrors, "failover", topic);
        try (Admin admin = destination.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic("failover-plain", 1, (short) 2)));
            DedicatedControllerTest.assertControllerChangesRefused(admin, topic);

            int active = activeController(admin);
            destination.kill(active);
            TestUtils.waitFor(() -> {
                int now = activeController(admin);
                return now != active && now > 0;
            }, MirrorAssertions.TIMEOUT, "another controller to become active after controller " + active + " was killed");
            // The first requests may still go to the dead controller: wait for an answer from the new one.
            TestUtils.waitFor(() -> DedicatedControllerTest.refused(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all()),
                MirrorAssertions.TIMEOUT, "the new active controller answers");
            DedicatedControllerTest.assertControllerChangesRefused(admin, topic);
            admin.createPartitions(Map.of("failover-plain", NewPartitions.increaseTo(2))).all().get(60, TimeUnit.SECONDS);
            assertEquals(1, DedicatedControllerTest.partitions(admin, topic), "no partition added to the mirror topic");
        }
        MirrorAssertions.awaitState(pair.mirrors, "failover", topic, 1, PartitionState.MIRRORING);
        MirrorAssertions.assertIdenticalLogs(pair.source, destination, topic, 1);
    }

    private static int activeController(Admin admin) throws Exception {
        return admin.describeMetadataQuorum().quorumInfo().get(30, TimeUnit.SECONDS).leaderId();
    }
}
