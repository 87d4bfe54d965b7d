package io.clustermirror.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The launcher ({@code bin/cluster-mirror-server-start.sh}) told to run on the stock Kafka installation of each supported
 * release other than the build's own ({@code KAFKA_LIBS}), as one combined node: it starts on that release, mirrors
 * idempotent and transactional producers in every codec with the same offsets and bytes, and stops with its barrier at
 * the source's end. The mirror is created, started, described and stopped with {@code kafka-cluster-mirrors.sh} run from
 * the same installation, so the tool and its {@code ClusterMirrorAdmin} run on that release's {@code kafka-clients}.
 * {@link KafkaReleasesSmokeTest} covers the rest on the drop-in way with dedicated roles.
 */
@Tag(ProcessCluster.TAG)
@MirrorClusterTest(topologies = "topologies")
class KafkaReleasesLauncherTest {
    private static MirrorTestCluster source;

    /** Only the source: each test starts the destinations it needs. */
    static ClusterPair.Topologies topologies() {
        return ClusterPair.Topologies.sourceOnly(MirrorTestCluster.builder().name("launcher-releases-source").brokers(1).topology());
    }

    @BeforeAll
    static void nameTheSource(ClusterPair<MirrorTestCluster, ProcessCluster> clusters) {
        source = clusters.source;
    }

    @ParameterizedTest(name = "Kafka {0}")
    @MethodSource("io.clustermirror.it.KafkaReleases#others")
    void theLauncherRunsOnTheReleaseAndMirrorsByteForByte(String release) throws Exception {
        String topic = "launcher-" + KafkaReleases.dashed(release);
        Path libs = KafkaReleases.libsOf(release);
        try (ProcessCluster destination = ProcessCluster.start(ProcessCluster.topology("launcher-on-" + KafkaReleases.dashed(release))
                .combined(1).kafkaRelease(release).build());
             ClusterMirrorAdmin mirrors = ClusterMirrorAdmin.create(destination.clientProperties())) {
            String output = destination.outputSinceLastStart(1);
            assertTrue(output.contains("launcher on Kafka " + release), "the launcher runs Kafka " + release + ":\n"
                + output.substring(Math.max(0, output.length() - 3000)));
            try (Admin admin = source.admin()) {
                Workloads.createTopics(admin, List.of(new NewTopic(topic, 2, (short) 1)));
            }
            Workloads.writeAllKinds(source.bootstrapServers(), topic, 2, 2);
            Path config = Files.writeString(Files.createTempFile("launcher-mirror-", ".properties"),
                "bootstrap.servers=" + source.bootstrapServers() + "\n");
            String bootstrap = destination.bootstrapServers();
            assertSucceeds(CliRun.launched(libs, bootstrap, "--create", "--mirror", "launcher", "--mirror-config", config.toString()));
            assertSucceeds(CliRun.launched(libs, bootstrap, "--start", "--mirror", "launcher", "--topics", topic));
            MirrorAssertions.awaitCaughtUp(source, destination, topic, 2);
            MirrorAssertions.assertIdenticalLogs(source, destination, topic, 2);

            long end;
            try (Admin admin = source.admin()) {
                end = MirrorAssertions.endOffset(admin, new TopicPartition(topic, 0));
            }
            assertSucceeds(CliRun.launched(libs, bootstrap, "--stop", "--mirror", "launcher", "--topics", topic));
            MirrorAssertions.awaitState(mirrors, "launcher", topic, 2, PartitionState.STOPPED);
            CliRun described = assertSucceeds(CliRun.launched(libs, bootstrap, "--describe", "--mirror", "launcher", "--json"));
            JsonNode partitions = new ObjectMapper().readTree(described.out()).get("mirrors").get(0).get("topics").get(0)
                .get("partitions");
            JsonNode first = partitions.get(0).get("partition").asInt() == 0 ? partitions.get(0) : partitions.get(1);
            assertEquals("STOPPED", first.get("state").asText(), described.out());
            assertEquals(end, first.get("barrierOffset").asLong(), "the barrier follows the source's last record: " + described.out());
            MirrorPartitionDescription stopped = MirrorAssertions.describe(mirrors, "launcher", topic, 0);
            assertEquals(end, stopped.barrierOffset(), "the build's own clients read the same: " + stopped);
        }
    }

    private static CliRun assertSucceeds(CliRun run) {
        assertEquals(0, run.exit(), run.describe());
        return run;
    }
}
