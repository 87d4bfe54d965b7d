package io.clustermirror.it;

import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.testsupport.FreePorts;
import io.clustermirror.testsupport.KRaftConfigs;
import io.clustermirror.testsupport.LaunchedCluster;
import io.clustermirror.testsupport.ListenerPorts;
import io.clustermirror.testsupport.NodeRole;
import io.clustermirror.testsupport.LaunchedNode;
import io.clustermirror.testsupport.TestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A one-broker source cluster of another Apache Kafka release, launched as its own JVM from the classpath that the
 * {@code old-kafka/kafka-<version>} module (releases before 4.0) or the {@code kafka-releases/kafka-<version>} module
 * (4.x, the releases a destination is tested on too) collects ({@code target/libs}, built before this module's tests):
 * in ZooKeeper mode with a ZooKeeper server in a second JVM, or as a combined KRaft node: a {@link ClusterTopology} of
 * launch mode {@code STOCK} whose Kafka release is that release ({@link #topology}). The broker runs with an ACL
 * authorizer whose super user is the PLAINTEXT listener's {@code User:ANONYMOUS}, so that tests can create ACLs and
 * the mirror can read everything.
 */
final class ReleaseSource implements TestCluster, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReleaseSource.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final int BROKER_ID = 1;

    private final String version;
    private final ClusterTopology topology;
    private final Path libs;
    private final Path dir;
    private final ListenerPorts ports;
    private final List<Process> processes = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Kills the processes if the test JVM exits without closing the cluster. */
    private final Thread shutdownHook = new Thread(() -> processes.forEach(Process::destroyForcibly));

    private ReleaseSource(ClusterTopology topology, Path dir) {
        this.topology = topology;
        this.version = topology.kafkaRelease().orElseThrow();
        this.libs = KafkaReleases.libsOf(version);
        this.dir = dir;
        this.ports = ListenerPorts.allocate(topology);
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * The description of a one-broker source of Kafka {@code release}: in ZooKeeper mode ({@link ClusterTopology.Quorum#ZOOKEEPER})
     * or a combined KRaft node (any other quorum), with {@code extraConfigs} added to (or replacing) the defaults.
     */
    static ClusterTopology topology(String release, ClusterTopology.Quorum quorum, Map<String, String> extraConfigs) {
        boolean zooKeeper = quorum == ClusterTopology.Quorum.ZOOKEEPER;
        return ClusterTopology.builder("kafka-" + release + "-" + (zooKeeper ? "zookeeper" : "kraft"))
            .launchMode(ClusterTopology.LaunchMode.STOCK)
            .kafkaRelease(release)
            .quorum(quorum)
            .node(BROKER_ID, zooKeeper ? NodeRole.BROKER : NodeRole.COMBINED)
            .serverProperty("super.users", "User:ANONYMOUS")
            .serverProperty("authorizer.class.name", zooKeeper ? "kafka.security.authorizer.AclAuthorizer"
                : "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
            .serverProperties(extraConfigs)
            .build();
    }

    /** Starts the one-broker cluster {@code topology} describes ({@link #topology}) and waits until its broker serves clients. */
    static ReleaseSource start(ClusterTopology topology) throws Exception {
        if (topology.launchMode() != ClusterTopology.LaunchMode.STOCK || topology.nodes().size() != 1) {
            throw new IllegalArgumentException("A release source is one stock Kafka node: " + topology);
        }
        ReleaseSource cluster = new ReleaseSource(topology, Files.createTempDirectory("old-kafka-" + topology.kafkaRelease().orElseThrow() + "-"));
        try {
            Map<String, String> configs = new LinkedHashMap<>();
            configs.put("broker.id", String.valueOf(BROKER_ID));
            configs.put("log.dirs", cluster.dataDir().toString());
            String listener = topology.clientListener();
            if (topology.quorum() == ClusterTopology.Quorum.ZOOKEEPER) {
                int zkPort = FreePorts.next();
                cluster.launch("zookeeper", List.of("org.apache.zookeeper.server.ZooKeeperServerMain",
                    String.valueOf(zkPort), cluster.dir.resolve("zookeeper").toString()));
                configs.put("zookeeper.connect", "localhost:" + zkPort);
                configs.put("listeners", listener + "://localhost:" + cluster.ports.port(BROKER_ID, listener));
                configs.putAll(KRaftConfigs.internalTopics(1));
                configs.putAll(topology.serverProperties());
            } else {
                configs.put("node.id", String.valueOf(BROKER_ID));
                configs.put("process.roles", topology.node(BROKER_ID).role().processRoles());
                configs.putAll(KRaftConfigs.serverProperties(topology, topology.node(BROKER_ID), cluster.ports));
            }
            Path properties = cluster.dir.resolve("server.properties");
            Files.writeString(properties, configs.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("\n", "", "\n")), StandardCharsets.UTF_8);
            if (topology.quorum() != ClusterTopology.Quorum.ZOOKEEPER) {
                cluster.format(properties);
            }
            cluster.launch("broker", List.of("kafka.Kafka", properties.toString()));
            cluster.awaitBroker();
            log.info("Kafka {} source ({}) at {} in {}", cluster.version, topology.quorum(), cluster.bootstrapServers(), cluster.dir);
            return cluster;
        } catch (Exception | AssertionError e) {
            cluster.close();
            throw e;
        }
    }

    private Path dataDir() {
        return dir.resolve("data");
    }

    private Path output(String role) {
        return dir.resolve(role + ".out");
    }

    private ProcessBuilder java(String role, List<String> mainAndArgs) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx384m", "-Xms64m", "-cp", libs + "/*"));
        command.addAll(mainAndArgs);
        return new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(output(role).toFile()));
    }

    private void format(Path properties) throws IOException, InterruptedException {
        Process p = java("format", List.of("kafka.tools.StorageTool", "format", "-t", Uuid.randomUuid().toString(),
            "-c", properties.toString())).start();
        if (!p.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("formatting the Kafka " + version + " log dir failed:\n"
                + LaunchedNode.tail(output("format"), 20));
        }
    }

    private synchronized void launch(String role, List<String> mainAndArgs) throws IOException {
        Process p = java(role, mainAndArgs).start();
        processes.add(p);
        log.info("Kafka {} source: {} started (pid {})", version, role, p.pid());
    }

    private void awaitBroker() throws Exception {
        try (Admin admin = admin()) {
            TestUtils.waitFor(() -> {
                for (Process p : processes) {
                    if (!p.isAlive()) {
                        throw new AssertionError("a process of the Kafka " + version + " source exited with status " + p.exitValue()
                            + "\n--- broker output ---\n" + LaunchedNode.tail(output("broker"), 30));
                    }
                }
                try {
                    return admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size() == 1;
                } catch (Exception e) {
                    return false; // not serving yet
                }
            }, START_TIMEOUT, "the Kafka " + version + " source broker to serve clients");
        }
    }

    /** The broker's console output (its log: the old releases log through SLF4J's simple binding). */
    String brokerOutput() throws IOException {
        return Files.readString(output("broker"), StandardCharsets.UTF_8);
    }

    @Override
    public String name() {
        return topology.name();
    }

    @Override
    public String bootstrapServers() {
        return "localhost:" + ports.advertisedPort(BROKER_ID, topology.clientListener());
    }

    @Override
    public int leaderOf(TopicPartition partition) {
        return BROKER_ID;
    }

    @Override
    public Path partitionDir(int brokerId, TopicPartition partition) throws InterruptedException {
        Path replica = dataDir().resolve(partition.toString());
        return TestUtils.waitForValue(() -> Files.isDirectory(replica) ? Optional.of(replica) : Optional.empty(),
            TestUtils.DEFAULT_TIMEOUT, "the replica of " + partition + " on the Kafka " + version + " source");
    }

    @Override
    public synchronized void close() {
        // The broker first (clean shutdown needs ZooKeeper), then ZooKeeper.
        for (int i = processes.size() - 1; i >= 0; i--) {
            Process p = processes.get(i);
            p.destroy();
            try {
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        processes.clear();
        LaunchedCluster.deleteTree(dir);
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs anyway
        }
    }

    @Override
    public String toString() {
        return name() + " at " + bootstrapServers();
    }
}
