package io.clustermirror.server;

import io.clustermirror.broker.node.ExtensionRegistry;
import io.clustermirror.broker.bridge.KafkaServerLauncher;
import io.clustermirror.testsupport.FreePorts;
import io.clustermirror.testsupport.TestUtils;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClusterMirrorServerTest {
    @TempDir
    Path dir;

    @Test
    void overridesWinOverTheFile() throws IOException {
        Path file = dir.resolve("server.properties");
        Files.writeString(file, "node.id=1\nlog.dirs=/data\n");
        Properties props = ClusterMirrorServer.parseArgs(new String[] {
            file.toString(), "--override", "node.id=2", "--override", "sasl.jaas.config=a=b"});
        assertEquals("2", props.getProperty("node.id"));
        assertEquals("/data", props.getProperty("log.dirs"));
        assertEquals("a=b", props.getProperty("sasl.jaas.config"), "values may contain '='");
    }

    @Test
    void missingFileIsAOneLineError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ClusterMirrorServer.parseArgs(new String[] {dir.resolve("absent.properties").toString()}));
        assertTrue(e.getMessage().startsWith("Cannot read the server properties file"), e.getMessage());
    }

    @Test
    void errorsAreDescribedInOneLine() {
        assertEquals("Invalid configuration: Missing required configuration \"x\"",
            ClusterMirrorServer.describe(new ConfigException("Missing required configuration \"x\"")));
        assertEquals("No readable meta.properties files found. (format the log directories with bin/kafka-storage.sh format first)",
            ClusterMirrorServer.describe(new RuntimeException("No readable meta.properties files found.")));
        assertEquals("NullPointerException", ClusterMirrorServer.describe(new NullPointerException()));
    }

    @Test
    void unformattedLogDirsAreRejectedBeforeStart() throws IOException {
        Properties props = nodeProperties("broker,controller", FreePorts.next());
        Exception e = assertThrows(RuntimeException.class, () -> KafkaServerLauncher.create(props));
        assertTrue(ClusterMirrorServer.describe(e).contains("meta.properties"), ClusterMirrorServer.describe(e));
    }

    @Test
    void combinedNodeServesClientsAndClosesTheExtensionBeforeTheBroker() throws Exception {
        Properties props = formattedNode("broker,controller");
        KafkaServerLauncher launcher = KafkaServerLauncher.create(props);
        List<String> events = new CopyOnWriteArrayList<>();
        ClusterMirrorServer server = new ClusterMirrorServer(launcher, broker -> {
            events.add("attached");
            return () -> events.add("closed, broker shut down: " + KafkaServerLauncher.isBrokerShutdown(broker));
        });
        try {
            server.startup();
            assertEquals(List.of("attached"), events);
            assertTrue(launcher.broker().isPresent());
            assertEquals(List.of("0:hello", "1:world"), produceAndConsume(props));
        } finally {
            server.shutdown();
        }
        server.awaitShutdown();
        assertEquals(List.of("attached", "closed, broker shut down: false"), events);
        assertTrue(KafkaServerLauncher.isBrokerShutdown(launcher.broker().get()));
    }

    @Test
    void controllerOnlyNodeHasNoExtension() throws Exception {
        KafkaServerLauncher launcher = KafkaServerLauncher.create(formattedNode("controller"));
        List<String> events = new CopyOnWriteArrayList<>();
        ClusterMirrorServer server = new ClusterMirrorServer(launcher, broker -> {
            events.add("attached");
            return () -> { };
        });
        try {
            server.startup();
            assertFalse(launcher.broker().isPresent());
        } finally {
            server.shutdown();
        }
        server.awaitShutdown();
        assertEquals(List.of(), events);
    }

    @Test
    void failedAttachLeavesTheNodeForTheCallerToShutDown() throws Exception {
        assertStartFailsToAttach(KafkaServerLauncher.create(formattedNode("broker,controller")), broker -> {
            throw new UnsupportedOperationException("not yet");
        });
    }

    @Test
    void failedAttachWhileStartingFailsTheStartWithoutOpeningTheClientListener() throws Exception {
        Properties props = formattedNode("broker,controller");
        int clientPort = FreePorts.next();
        props.put("listeners", props.getProperty("listeners").replace("PLAINTEXT://", "INTERNAL://")
            + ",CLIENT://localhost:" + clientPort);
        props.put("listener.security.protocol.map", "INTERNAL:PLAINTEXT,CLIENT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.put("inter.broker.listener.name", "INTERNAL");
        ExtensionRegistry.expectAttachments("the launcher");
        List<String> clientListenerOpen = new CopyOnWriteArrayList<>();
        assertStartFailsToAttach(KafkaServerLauncher.create(ReadOnlyAuthorizerSetup.apply(props)), broker -> {
            clientListenerOpen.add(String.valueOf(isOpen(clientPort)));
            throw new UnsupportedOperationException("not yet");
        });
        assertEquals(List.of("false"), clientListenerOpen, "attached while starting, before the client listener opened");
        assertFalse(isOpen(clientPort), "the client listener never opened");
    }

    /** The start fails with the attach's error, and the broker is down once the caller shut the node down. */
    private static void assertStartFailsToAttach(KafkaServerLauncher launcher,
                                                 Function<Object, ExtensionLifecycle.Attachment> failingAttacher) {
        ClusterMirrorServer server = new ClusterMirrorServer(launcher, failingAttacher);
        try {
            IllegalStateException e = assertThrows(IllegalStateException.class, server::startup);
            assertEquals("Failed to attach the Cluster Mirror extension to broker 1: not yet", e.getMessage());
        } finally {
            server.shutdown();
        }
        server.awaitShutdown();
        assertTrue(KafkaServerLauncher.isBrokerShutdown(launcher.broker().get()));
    }

    private static boolean isOpen(int port) {
        try (Socket socket = new Socket("localhost", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private Properties formattedNode(String roles) throws Exception {
        Properties props = nodeProperties(roles, FreePorts.next());
        Formatter formatter = new Formatter()
            .setNodeId(1)
            .setClusterId(Uuid.randomUuid().toString())
            .setDirectories(List.of(props.getProperty("log.dirs")))
            .setMetadataLogDirectory(props.getProperty("log.dirs"))
            .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
            .setControllerListenerName("CONTROLLER");
        formatter.setPrintStream(new PrintStream(OutputStream.nullOutputStream()));
        formatter.run();
        return props;
    }

    private Properties nodeProperties(String roles, int controllerPort) throws IOException {
        Path logDir = Files.createDirectories(dir.resolve("data-" + Uuid.randomUuid()));
        Properties props = new Properties();
        props.putAll(Map.of(
            "process.roles", roles,
            "node.id", "1",
            "controller.quorum.voters", "1@localhost:" + controllerPort,
            "controller.listener.names", "CONTROLLER",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs", logDir.toString(),
            "offsets.topic.replication.factor", "1",
            "transaction.state.log.replication.factor", "1",
            "transaction.state.log.min.isr", "1"));
        if (roles.contains("broker")) {
            props.put("listeners", "PLAINTEXT://localhost:" + FreePorts.next() + ",CONTROLLER://localhost:" + controllerPort);
            props.put("inter.broker.listener.name", "PLAINTEXT");
        } else {
            props.put("listeners", "CONTROLLER://localhost:" + controllerPort);
        }
        return props;
    }

    private static List<String> produceAndConsume(Properties serverProps) throws Exception {
        String bootstrap = serverProps.getProperty("listeners").split(",")[0].replace("PLAINTEXT://", "");
        TopicPartition tp = new TopicPartition("greetings", 0);
        try (Admin admin = Admin.create(Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(tp.topic(), 1, (short) 1))).all().get();
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(tp.topic(), "hello")).get();
            producer.send(new ProducerRecord<>(tp.topic(), "world")).get();
        }
        List<String> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            TestUtils.waitFor(() -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                    records.add(r.offset() + ":" + r.value());
                }
                return records.size() >= 2;
            }, TestUtils.DEFAULT_TIMEOUT, "two records from " + tp);
        }
        return records;
    }
}
