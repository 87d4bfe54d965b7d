package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.testkit.MirrorTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** One source broker, one destination broker, one topic: the whole path from command to identical logs. */
class MirroringSmokeTest {
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;

    @BeforeAll
    static void startClusters() throws Exception {
        source = MirrorTestCluster.builder().name("smoke-source").brokers(1).start();
        destination = MirrorTestCluster.builder().name("smoke-destination").brokers(1).withExtension(true).start();
    }

    @AfterAll
    static void stopClusters() throws Exception {
        if (destination != null) {
            destination.close();
        }
        if (source != null) {
            source.close();
        }
    }

    @Test
    void mirrorsATopicWithIdenticalOffsetsAndBytes() throws Exception {
        try (Admin admin = source.admin()) {
            admin.createTopics(List.of(new NewTopic("smoke", 2, (short) 1))).all().get();
        }
        Workloads.writeAllKinds(source.bootstrapServers(), "smoke", 2, 5);
        try (ClusterMirrorAdmin mirrors = ClusterMirrorAdmin.create(destination.clientProperties())) {
            mirrors.createClusterMirror("smoke", MirrorAssertions.mirrorConfig(source)).all().get();
            assertEquals(List.of("smoke"), mirrors.startMirrorTopics("smoke", List.of("smoke"), List.of()).topics().get());
        }
        MirrorAssertions.awaitCaughtUp(source, destination, "smoke", 2);
        MirrorAssertions.assertIdenticalLogs(source, destination, "smoke", 2);
        MirrorAssertions.assertSameRecords(source, destination, "smoke", 2);
    }
}
