package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.common.secrets.PasswordEncoderKeys;
import io.clustermirror.testsupport.Keystores;
import io.clustermirror.testkit.MirrorTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.security.plain.PlainLoginModule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One source broker, one destination broker, one topic: the whole path from command to identical logs. */
@MirrorClusterTest(topologies = "topologies")
class MirroringSmokeTest {
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;

    /** A destination with a password encoder secret. */
    static ClusterPair.Topologies topologies() {
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("smoke-source").brokers(1).topology(),
            MirrorTestCluster.builder().name("smoke-destination").brokers(1)
                .brokerConfig(PasswordEncoderKeys.SECRET_CONFIG, Keystores.newPassword()).topology());
    }

    @BeforeAll
    static void nameTheClusters(ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters) {
        source = clusters.source;
        destination = clusters.destination;
    }

    @Test
    void mirrorsATopicWithIdenticalOffsetsAndBytes() throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic("smoke", 2, (short) 1)));
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

    private static CliRun cli(String... args) {
        return CliRun.run(destination.bootstrapServers(), args);
    }

    @Test
    void theCommandLineToolDrivesAMirrorAndNamesErrors(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic("cli-topic", 1, (short) 1)));
        }
        Workloads.writeAllKinds(source.bootstrapServers(), "cli-topic", 1, 3);
        Path config = dir.resolve("mirror.properties");
        Files.writeString(config, "bootstrap.servers=" + source.bootstrapServers() + "\nsasl.jaas.config="
            + PlainLoginModule.class.getName() + " required username=\"cli\" password=\"secret-value\";\n");
        CliRun created = cli("--create", "--mirror", "cli", "--mirror-config", config.toString());
        assertEquals(0, created.exit(), created.err());
        CliRun started = cli("--start", "--mirror", "cli", "--topics", "cli-.*");
        assertEquals(0, started.exit(), started.err());
        assertTrue(started.out().contains("cli-topic"), started.out());
        MirrorAssertions.awaitCaughtUp(source, destination, "cli-topic", 1);
        MirrorAssertions.assertIdenticalLogs(source, destination, "cli-topic", 1);

        CliRun described = cli("--describe", "--mirror", "cli");
        assertEquals(0, described.exit(), described.err());
        assertTrue(described.out().contains("cli-topic") && described.out().contains("MIRRORING"), described.out());
        assertTrue(!described.out().contains("secret-value"), "secrets are never printed: " + described.out());
        CliRun json = cli("--describe", "--mirror", "cli", "--json");
        assertEquals(0, json.exit(), json.err());
        assertTrue(json.out().contains("\"cli-topic\"") && !json.out().contains("secret-value"), json.out());
        CliRun listed = cli("--list");
        assertTrue(listed.exit() == 0 && listed.out().contains("cli"), listed.out());

        CliRun unknown = cli("--describe", "--mirror", "nope");
        assertEquals(1, unknown.exit());
        assertEquals("UNKNOWN_CLUSTER_MIRROR: no mirror named 'nope'", unknown.err().trim());
        CliRun duplicate = cli("--create", "--mirror", "cli", "--mirror-config", config.toString());
        assertEquals(1, duplicate.exit());
        assertTrue(duplicate.err().startsWith("CLUSTER_MIRROR_ALREADY_EXISTS: "), duplicate.err());
        assertEquals(1, duplicate.err().trim().lines().count(), "one line: " + duplicate.err());
        CliRun usage = cli("--start", "--mirror", "cli");
        assertEquals(2, usage.exit(), usage.err());
    }
}
