package io.clustermirror.chaos;

import io.clustermirror.testkit.FaultProxy;
import io.clustermirror.testkit.FreePorts;
import io.clustermirror.testkit.KRaftConfigs;
import io.clustermirror.testkit.LaunchedNode;
import io.clustermirror.testkit.LaunchedNode.Role;
import io.clustermirror.testkit.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * The launched clusters of a chaos run, every node its own JVM:
 * <ul>
 *   <li>the <b>source</b>: {@code sourceBrokers} nodes (the first one also the KRaft controller), with the Cluster
 *       Mirror launcher too, since failback makes the source a destination of its own mirror (until then the extension
 *       does nothing there: the source holds no mirror). Each broker has two listeners: {@code INTERNAL}, which its peers and the workload use directly, and
 *       {@code CLIENT}, which is advertised at the address of that broker's {@link FaultProxy}, so that every
 *       connection of the mirror (bootstrap, metadata, fetchers) goes through a proxy and its faults;</li>
 *   <li>the <b>destination</b>: three brokers and one dedicated controller, all with the Cluster Mirror launcher,
 *       replication factor 3 and {@code min.insync.replicas=2} for every topic (mirror topics included).</li>
 * </ul>
 */
final class ChaosClusters implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ChaosClusters.class);
    static final Duration START_TIMEOUT = Duration.ofSeconds(180);
    private static final String BROKER_HEAP = "-Xmx512m -Xms128m";
    private static final String CONTROLLER_HEAP = "-Xmx256m -Xms64m";
    /** The node id of the destination's controller (brokers are 1, 2, 3). */
    static final int DESTINATION_CONTROLLER_ID = 9;
    static final int DESTINATION_BROKERS = 3;
    private static final String HEADER = "Written by the chaos runner.";
    /** The source's node that is also its only KRaft controller: never killed. */
    static final int SOURCE_CONTROLLER_ID = 1;

    private final Map<Integer, LaunchedNode> sourceNodes = new TreeMap<>();
    private final Map<Integer, Integer> sourceInternalPorts = new TreeMap<>();
    private final Map<Integer, FaultProxy> proxies = new TreeMap<>();
    private final Map<Integer, LaunchedNode> destinationBrokers = new TreeMap<>();
    private final Map<Integer, Integer> destinationPorts = new TreeMap<>();
    private LaunchedNode destinationController;
    private final String jvmOptions;

    private ChaosClusters(String jvmOptions) {
        this.jvmOptions = jvmOptions;
    }

    /**
     * Formats and starts both clusters and waits until every broker is ready; every node's JVM runs with
     * {@code jvmOptions} (a test-only agent, else empty).
     */
    static ChaosClusters start(Path home, Path workDir, int sourceBrokers, String jvmOptions) throws Exception {
        ChaosClusters clusters = new ChaosClusters(jvmOptions);
        try {
            clusters.startSource(home, workDir.resolve("source"), sourceBrokers);
            clusters.startDestination(home, workDir.resolve("destination"));
            clusters.awaitSourceReady();
            for (int id : clusters.destinationBrokers.keySet()) {
                clusters.awaitDestinationBrokerReady(id);
            }
            log.info("Clusters ready: source {} (mirror's view {}), destination {}", clusters.sourceBootstrapServers(),
                clusters.proxiedSourceBootstrapServers(), clusters.destinationBootstrapServers());
            return clusters;
        } catch (Exception e) {
            clusters.close();
            throw e;
        }
    }

    private void startSource(Path home, Path dir, int brokers) throws Exception {
        String clusterId = Uuid.randomUuid().toString();
        int controllerPort = FreePorts.next();
        for (int id = 1; id <= brokers; id++) {
            int internalPort = FreePorts.next();
            int clientPort = FreePorts.next();
            FaultProxy proxy = FaultProxy.startKafka("source-" + id, new InetSocketAddress("127.0.0.1", clientPort));
            proxies.put(id, proxy);
            sourceInternalPorts.put(id, internalPort);
            boolean controller = id == SOURCE_CONTROLLER_ID;
            Map<String, String> config = new LinkedHashMap<>();
            config.put("controller.quorum.bootstrap.servers", "localhost:" + controllerPort);
            String listeners = "INTERNAL://localhost:" + internalPort + ",CLIENT://127.0.0.1:" + clientPort;
            config.put("listeners", listeners + (controller ? ",CONTROLLER://localhost:" + controllerPort : ""));
            config.put("advertised.listeners", "INTERNAL://localhost:" + internalPort + ",CLIENT://127.0.0.1:" + proxy.address().getPort()
                + (controller ? ",CONTROLLER://localhost:" + controllerPort : ""));
            config.put("listener.security.protocol.map", "INTERNAL:PLAINTEXT,CLIENT:PLAINTEXT,CONTROLLER:PLAINTEXT");
            config.put("inter.broker.listener.name", "INTERNAL");
            config.put("controller.listener.names", "CONTROLLER");
            config.putAll(replication(brokers));
            LaunchedNode node = withJvmOptions(new LaunchedNode(home, "source", clusterId, id, controller ? Role.COMBINED : Role.BROKER,
                dir.resolve("node-" + id), BROKER_HEAP));
            node.writeProperties(HEADER, config);
            node.format(controller ? List.of("--standalone") : List.of());
            sourceNodes.put(id, node);
        }
        for (LaunchedNode node : sourceNodes.values()) {
            node.start();
        }
    }

    private void startDestination(Path home, Path dir) throws Exception {
        String clusterId = Uuid.randomUuid().toString();
        int controllerPort = FreePorts.next();
        Map<String, String> common = new LinkedHashMap<>();
        common.put("controller.quorum.bootstrap.servers", "localhost:" + controllerPort);
        common.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        common.put("controller.listener.names", "CONTROLLER");
        // A killed broker is fenced (its partitions get new leaders) after the session timeout; shorter than the default 9 s.
        common.put("broker.session.timeout.ms", "6000");
        common.put("broker.heartbeat.interval.ms", "1000");
        // No authorizer line: the launcher installs the read-only authorizer (ACLs off), as for an operator who sets none.

        Map<String, String> controllerConfig = new LinkedHashMap<>(common);
        controllerConfig.put("listeners", "CONTROLLER://localhost:" + controllerPort);
        controllerConfig.put("advertised.listeners", "CONTROLLER://localhost:" + controllerPort);
        destinationController = withJvmOptions(new LaunchedNode(home, "destination", clusterId, DESTINATION_CONTROLLER_ID, Role.CONTROLLER,
            dir.resolve("controller-" + DESTINATION_CONTROLLER_ID), CONTROLLER_HEAP));
        destinationController.writeProperties(HEADER, controllerConfig);
        destinationController.format(List.of("--standalone"));

        for (int id = 1; id <= DESTINATION_BROKERS; id++) {
            int port = FreePorts.next();
            destinationPorts.put(id, port);
            Map<String, String> config = new LinkedHashMap<>(common);
            config.put("listeners", "PLAINTEXT://localhost:" + port);
            config.put("advertised.listeners", "PLAINTEXT://localhost:" + port);
            config.put("inter.broker.listener.name", "PLAINTEXT");
            config.putAll(replication(DESTINATION_BROKERS));
            LaunchedNode node = withJvmOptions(new LaunchedNode(home, "destination", clusterId, id, Role.BROKER, dir.resolve("broker-" + id),
                BROKER_HEAP));
            node.writeProperties(HEADER, config);
            node.format(List.of());
            destinationBrokers.put(id, node);
        }
        destinationController.start();
        for (LaunchedNode node : destinationBrokers.values()) {
            node.start();
        }
    }

    /** The run's test-only JVM options ({@code KAFKA_OPTS}) on {@code node}, if it has any. */
    private LaunchedNode withJvmOptions(LaunchedNode node) {
        return jvmOptions.isEmpty() ? node : node.environment("KAFKA_OPTS", jvmOptions);
    }

    /** Replication settings for {@code brokers} brokers: factor 3 and min ISR 2 where there are 3. */
    private static Map<String, String> replication(int brokers) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("num.partitions", "1");
        config.put("default.replication.factor", String.valueOf(KRaftConfigs.replicationFactor(brokers)));
        config.put("min.insync.replicas", String.valueOf(KRaftConfigs.minInsyncReplicas(brokers)));
        config.putAll(KRaftConfigs.internalTopics(brokers));
        // Retention runs every 5 s (5 minutes by default), so that chaos-retention loses old segments during a run.
        config.put("log.retention.check.interval.ms", "5000");
        return config;
    }

    private void awaitSourceReady() throws Exception {
        for (LaunchedNode node : sourceNodes.values()) {
            awaitReady(node, sourceBootstrapServers());
        }
    }

    /** Waits until a source broker is ready; see {@link #awaitReady}. */
    void awaitSourceBrokerReady(int id) throws Exception {
        awaitReady(sourceNodes.get(id), sourceBootstrapServers());
    }

    /** Waits until a destination broker is ready; see {@link #awaitReady}. */
    void awaitDestinationBrokerReady(int id) throws Exception {
        awaitReady(destinationBroker(id), destinationBootstrapServers());
    }

    /** Waits until a broker is ready ({@link LaunchedNode#awaitReady}), failing early if the node exits. */
    private static void awaitReady(LaunchedNode node, String bootstrapServers) throws Exception {
        try (Admin admin = admin(bootstrapServers)) {
            node.awaitReady(admin, START_TIMEOUT);
        }
    }

    /**
     * Waits until every partition of the destination (internal ones included) has all its replicas in sync: a node
     * that is ready may still be catching up, and a second node lost before it has caught up can take partitions whose
     * only in-sync replica it was offline (Kafka's rule, not a fault of the mirror). Faults come one at a time, each after
     * the previous one healed in this sense.
     */
    void awaitDestinationFullyReplicated() throws Exception {
        try (Admin admin = destinationAdmin()) {
            awaitFullyReplicated(admin, "destination");
        }
    }

    /** The same on the source, after a fault on its brokers. */
    void awaitSourceFullyReplicated() throws Exception {
        try (Admin admin = sourceAdmin()) {
            awaitFullyReplicated(admin, "source");
        }
    }

    private static void awaitFullyReplicated(Admin admin, String cluster) throws Exception {
        TestUtils.await(() -> {
            Set<String> topics = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(30, TimeUnit.SECONDS);
            return admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS).values().stream()
                .flatMap(t -> t.partitions().stream())
                .allMatch(p -> p.isr().size() == p.replicas().size());
        }, START_TIMEOUT, "every " + cluster + " partition to have all its replicas in sync");
    }

    /** The source's INTERNAL listener: what the workload and the checker use, never faulted. */
    String sourceBootstrapServers() {
        return sourceInternalPorts.values().stream().map(p -> "localhost:" + p).collect(Collectors.joining(","));
    }

    /** The source as the mirror sees it: the proxies' addresses. */
    String proxiedSourceBootstrapServers() {
        return proxies.values().stream().map(p -> "127.0.0.1:" + p.address().getPort()).collect(Collectors.joining(","));
    }

    String destinationBootstrapServers() {
        return destinationPorts.values().stream().map(p -> "localhost:" + p).collect(Collectors.joining(","));
    }

    Map<Integer, FaultProxy> proxies() {
        return proxies;
    }

    Map<Integer, LaunchedNode> sourceNodes() {
        return sourceNodes;
    }

    Map<Integer, LaunchedNode> destinationBrokers() {
        return destinationBrokers;
    }

    LaunchedNode destinationBroker(int id) {
        LaunchedNode node = destinationBrokers.get(id);
        if (node == null) {
            throw new IllegalArgumentException("no destination broker " + id + ": " + destinationBrokers.keySet());
        }
        return node;
    }

    LaunchedNode destinationController() {
        return destinationController;
    }

    static Properties clientProperties(String bootstrapServers) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        // Killed nodes stay in the bootstrap list: do not wait long for them.
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        return props;
    }

    private static Admin admin(String bootstrapServers) {
        return Admin.create(clientProperties(bootstrapServers));
    }

    Admin sourceAdmin() {
        return admin(sourceBootstrapServers());
    }

    Admin destinationAdmin() {
        return admin(destinationBootstrapServers());
    }

    /** The mirror's config: the source through the proxies, plus {@code extra} {@code mirror.*} settings. */
    Map<String, String> mirrorConfig(Map<String, String> extra) {
        Map<String, String> config = new HashMap<>(extra);
        config.put("bootstrap.servers", proxiedSourceBootstrapServers());
        return config;
    }

    /** Leader and replicas of a partition as the cluster's metadata names them now. */
    record Placement(Optional<Integer> leader, List<Integer> replicas) {
    }

    static Placement placement(Admin admin, TopicPartition tp) throws Exception {
        TopicDescription description = admin.describeTopics(Set.of(tp.topic())).allTopicNames().get(30, TimeUnit.SECONDS).get(tp.topic());
        TopicPartitionInfo info = description.partitions().get(tp.partition());
        Optional<Integer> leader = Optional.ofNullable(info.leader()).filter(l -> !l.isEmpty()).map(Node::id);
        return new Placement(leader, info.replicas().stream().map(Node::id).toList());
    }

    /** The in-sync replicas of a partition as the cluster's metadata names them now, sorted. */
    static List<Integer> isr(Admin admin, TopicPartition tp) throws Exception {
        TopicDescription description = admin.describeTopics(Set.of(tp.topic())).allTopicNames().get(30, TimeUnit.SECONDS).get(tp.topic());
        return description.partitions().get(tp.partition()).isr().stream().map(Node::id).sorted().toList();
    }

    /** Waits until metadata names a leader of {@code tp} among the running destination brokers. */
    int destinationLeader(Admin admin, TopicPartition tp) throws TimeoutException, InterruptedException {
        return TestUtils.awaitValue(() -> placement(admin, tp).leader().filter(l -> destinationBroker(l).alive()),
            START_TIMEOUT, "a leader of " + tp + " on a running destination broker");
    }

    /** Kills every node (SIGKILL: the run's data is not kept for a restart) and closes the proxies. */
    @Override
    public void close() {
        List<LaunchedNode> all = new ArrayList<>(destinationBrokers.values());
        if (destinationController != null) {
            all.add(destinationController);
        }
        all.addAll(sourceNodes.values());
        for (LaunchedNode node : all) {
            try {
                node.kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        proxies.values().forEach(FaultProxy::close);
    }
}
