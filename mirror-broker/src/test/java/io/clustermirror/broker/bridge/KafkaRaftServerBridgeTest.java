package io.clustermirror.broker.bridge;

import io.clustermirror.testsupport.FreePorts;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static io.clustermirror.testsupport.TestUtils.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** BrokerHandle.fromRaftServer on a real, formatted, combined-mode KafkaRaftServer (what a launcher runs). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KafkaRaftServerBridgeTest {

    @Test
    void findsTheBrokerInsideAKafkaRaftServer() throws Exception {
        Path dir = Files.createTempDirectory("cm-raft");
        int controllerPort = FreePorts.next();
        Properties p = new Properties();
        p.put("process.roles", "broker,controller");
        p.put("node.id", "1");
        p.put("controller.quorum.voters", "1@localhost:" + controllerPort);
        p.put("listeners", "PLAINTEXT://localhost:0,CONTROLLER://localhost:" + controllerPort);
        p.put("controller.listener.names", "CONTROLLER");
        p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("log.dirs", dir.toString());
        p.put("offsets.topic.replication.factor", "1");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        new Formatter()
            .setNodeId(1)
            .setClusterId(Uuid.randomUuid().toString())
            .setDirectories(List.of(dir.toString()))
            .setReleaseVersion(MetadataVersion.latestProduction())
            .setControllerListenerName("CONTROLLER")
            .setMetadataLogDirectory(dir.toString())
            .run();

        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(p, false), Time.SYSTEM);
        server.startup();
        try {
            Optional<BrokerHandle> h = BrokerHandle.fromRaftServer(server);
            assertTrue(h.isPresent());
            BrokerHandle b = h.get();
            assertEquals(1, b.nodeId());
            try (Admin a = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, b.localBootstrapServers()))) {
                a.createTopics(List.of(new NewTopic("t", 1, (short) 1))).all().get();
                assertEquals(b.clusterId(), a.describeCluster().clusterId().get());
            }
            TopicPartition tp = new TopicPartition("t", 0);
            waitFor(() -> b.leaderLogState(tp).isPresent(), Duration.ofSeconds(15), () -> "leader of t-0");
            assertTrue(b.topicId("t").isPresent());
        } finally {
            server.shutdown();
            server.awaitShutdown();
        }
    }
}
