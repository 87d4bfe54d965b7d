package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The launcher ({@code bin/cluster-mirror-server-start.sh}) told to run on the stock Kafka installation of each supported
 * release other than the build's own ({@code KAFKA_LIBS}), as one combined node: it starts on that release, mirrors
 * idempotent and transactional producers in every codec with the same offsets and bytes, and stops with its barrier at
 * the source's end. {@link KafkaReleasesSmokeTest} covers the rest on the drop-in way with dedicated roles.
 */
@Tag(ProcessCluster.TAG)
class KafkaReleasesLauncherTest {
    private static MirrorTestCluster source;

    @BeforeAll
    static void startSource() throws Exception {
        source = MirrorTestCluster.builder().name("launcher-releases-source").brokers(1).start();
    }

    @AfterAll
    static void stopSource() throws Exception {
        source.close();
    }

    @ParameterizedTest(name = "Kafka {0}")
    @MethodSource("io.clustermirror.it.KafkaReleases#others")
    void theLauncherRunsOnTheReleaseAndMirrorsByteForByte(String release) throws Exception {
        String topic = "launcher-" + KafkaReleases.dashed(release);
        try (ProcessCluster destination = ProcessCluster.startOn("launcher-on-" + KafkaReleases.dashed(release), 1,
                ProcessCluster.LaunchMode.LAUNCHER, KafkaReleases.libsOf(release));
             ClusterMirrorAdmin mirrors = ClusterMirrorAdmin.create(destination.clientProperties())) {
            String output = destination.outputSinceLastStart(1);
            assertTrue(output.contains("launcher on Kafka " + release), "the launcher runs Kafka " + release + ":\n"
                + output.substring(Math.max(0, output.length() - 3000)));
            try (Admin admin = source.admin()) {
                admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
            }
            Workloads.writeAllKinds(source.bootstrapServers(), topic, 2, 2);
            mirrors.createClusterMirror("launcher", MirrorAssertions.mirrorConfig(source)).all().get();
            mirrors.startMirrorTopics("launcher", List.of(topic), List.of()).all().get();
            MirrorAssertions.awaitCaughtUp(source, destination, topic, 2);
            MirrorAssertions.assertIdenticalLogs(source, destination, topic, 2);

            long end;
            try (Admin admin = source.admin()) {
                end = MirrorAssertions.endOffset(admin, new TopicPartition(topic, 0));
            }
            mirrors.stopMirrorTopics("launcher", List.of(topic), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, "launcher", topic, 2, PartitionState.STOPPED);
            MirrorPartitionDescription stopped = MirrorAssertions.describe(mirrors, "launcher", topic, 0);
            assertEquals(end, stopped.barrierOffset(), "the barrier follows the source's last record: " + stopped);
        }
    }
}
