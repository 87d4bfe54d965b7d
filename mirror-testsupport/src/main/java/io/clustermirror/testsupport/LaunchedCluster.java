package io.clustermirror.testsupport;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The launched back end of a {@link ClusterTopology}: each node a {@link LaunchedNode} (its own JVM) in
 * {@code <baseDir>/node-<id>}, its listeners on {@link ListenerPorts}, its server properties from
 * {@link KRaftConfigs#serverProperties}, run by the checkout's {@code bin/} scripts ({@code LAUNCHER}; a subclass
 * runs nodes another way by overriding {@link #formatCommand}, {@link #startCommand} and {@link #runsMirror}). A node
 * can be killed with SIGKILL (an unclean crash), stopped with SIGTERM and started again on the same log dirs and
 * ports. Used by mirror-it's launched-process tests, the chaos run and the benchmark; needs only Kafka's clients in
 * this JVM.
 *
 * <p>Lifecycle: {@link #create} lays the cluster out (ports chosen, nothing written); a caller may then
 * {@link ListenerPorts#advertise} a listener behind a proxy or set a node's environment; {@link #start} writes every
 * node's properties, formats every log dir and starts every node, and returns once all are ready; {@link #close} kills
 * every node.
 */
public class LaunchedCluster implements TestCluster, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LaunchedCluster.class);
    /** How long a node may take to be ready: formatting and starting JVMs on a busy 2-core machine takes a while. */
    public static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    private final ClusterTopology topology;
    private final Path checkout;
    private final Path baseDir;
    private final String clusterId = Uuid.randomUuid().toString();
    private final ListenerPorts ports;
    private final boolean deleteOnClose;
    private final Map<Integer, LaunchedNode> nodes = new TreeMap<>();
    private Duration readyTimeout = START_TIMEOUT;
    // Guarded by this.
    private ClusterTopology grown;
    private boolean closed;

    /**
     * A launched cluster of {@code topology} (whose launch mode the caller checked is a launched one), its nodes run
     * from {@code checkout}'s {@code bin/}, in {@code baseDir}, which {@link #close} deletes if {@code deleteOnClose}.
     */
    protected LaunchedCluster(ClusterTopology topology, Path checkout, Path baseDir, boolean deleteOnClose) {
        this.topology = topology;
        this.grown = topology;
        this.checkout = checkout;
        this.baseDir = baseDir;
        this.deleteOnClose = deleteOnClose;
        this.ports = ListenerPorts.allocate(topology);
        topology.nodes().forEach(this::addNode);
    }

    /** Lays out (not yet starts) {@code topology} with the {@code bin/} scripts of {@code checkout} in {@code baseDir}, kept on close. */
    public static LaunchedCluster create(ClusterTopology topology, Path checkout, Path baseDir) {
        if (topology.launchMode() != ClusterTopology.LaunchMode.LAUNCHER) {
            throw new IllegalArgumentException(topology.name() + " is not a cluster of the launcher: " + topology.launchMode());
        }
        return new LaunchedCluster(topology, checkout, baseDir, false);
    }

    private LaunchedNode addNode(ClusterTopology.Node spec) {
        LaunchedNode node = new LaunchedNode(checkout, topology.name(), clusterId, spec.id(), spec.role(),
            baseDir.resolve("node-" + spec.id()), topology.heap(spec.role()));
        if (!topology.jvmOptions().isEmpty()) {
            node.environment("KAFKA_OPTS", topology.jvmOptions());
        }
        nodes.put(spec.id(), node);
        return node;
    }

    /** Formats and starts every node, and returns once all are ready ({@link #awaitReady}); kills them all if that fails. */
    public LaunchedCluster start() throws Exception {
        try {
            formatAndLaunch();
            // Brokers first: a controller-only node reads the mirror state through them.
            for (int id : brokerIds()) {
                awaitReady(id);
            }
            for (int id : controllerOnlyIds()) {
                awaitReady(id);
            }
            log.info("Launched cluster {} started: nodes {} at {}, in {}", name(), nodes.keySet(), bootstrapServers(), baseDir);
            return this;
        } catch (Exception | AssertionError e) {
            close();
            throw e;
        }
    }

    /**
     * Writes every node's properties, formats every log dir and starts every node, and returns at once: for a caller that
     * waits for the cluster its own way ({@link #start} waits until every node is ready).
     */
    public void formatAndLaunch() throws IOException, InterruptedException {
        writePropertiesAndFormat();
        for (int id : nodeIds()) {
            launch(id);
        }
    }

    /** Writes every node's server properties, then formats every log dir with the cluster id, all at once. */
    public void writePropertiesAndFormat() throws IOException, InterruptedException {
        Map<LaunchedNode, Process> formats = new TreeMap<>(Comparator.comparingInt(LaunchedNode::id));
        for (LaunchedNode node : nodes.values()) {
            formats.put(node, writePropertiesAndStartFormat(node));
        }
        for (Map.Entry<LaunchedNode, Process> e : formats.entrySet()) {
            e.getKey().awaitFormat(e.getValue());
        }
    }

    private Process writePropertiesAndStartFormat(LaunchedNode node) throws IOException {
        node.writeProperties("Written for " + topology.name() + " (" + topology.launchMode() + ", " + topology.nodes().size()
            + " nodes) by the test support's LaunchedCluster.", KRaftConfigs.serverProperties(current(), current().node(node.id()), ports));
        boolean standalone = topology.quorum() == ClusterTopology.Quorum.STANDALONE && node.role().controller();
        return node.startFormat(formatCommand(node, standalone ? List.of("--standalone") : List.of()));
    }

    /** The topology with the brokers added since the start ({@link #addBroker}). */
    private synchronized ClusterTopology current() {
        return grown;
    }

    /**
     * Adds a broker-only node to the running cluster (the next unused id: a removed broker's id stays registered with the
     * controller for a while): its ports, properties and formatted log dir. Returns it before it starts, so that the
     * caller may set its environment; {@link #launch} starts it.
     */
    public synchronized LaunchedNode addBroker() throws IOException, InterruptedException {
        int id = grown.nodes().stream().mapToInt(ClusterTopology.Node::id).max().orElse(0) + 1;
        grown = grown.toBuilder().node(id, NodeRole.BROKER).build();
        ClusterTopology.Node spec = grown.node(id);
        ports.allocate(grown, spec);
        LaunchedNode node = addNode(spec);
        node.awaitFormat(writePropertiesAndStartFormat(node));
        return node;
    }

    /** Stops a node with SIGTERM and forgets it (a broker leaving the cluster); its directory stays. */
    public synchronized void removeNode(int id) throws InterruptedException {
        node(id).terminate();
        nodes.remove(id);
    }

    /** The command that formats the node's log dir with {@code args} ({@code --standalone} or none): {@code bin/kafka-storage.sh}. */
    protected ProcessBuilder formatCommand(LaunchedNode node, List<String> args) {
        return node.formatCommand(args);
    }

    /**
     * The command that runs the node, which must exec the node's JVM, with server properties {@code overrides}:
     * {@code bin/cluster-mirror-server-start.sh}.
     */
    protected ProcessBuilder startCommand(LaunchedNode node, Map<String, String> overrides) {
        return node.launcherCommand(overrides);
    }

    /**
     * Whether the node runs the Cluster Mirror extension, so that being ready includes its extension having loaded the
     * mirror state: true for the launcher; a stock node is ready once its broker is registered.
     */
    protected boolean runsMirror(LaunchedNode node) {
        return true;
    }

    /** Starts the node's process and returns at once (see {@link #awaitReady}). */
    public void launch(int id) throws IOException {
        launch(id, Map.of());
    }

    /** Starts the node's process with server properties overridden ({@code --override}) and returns at once. */
    public void launch(int id, Map<String, String> overrides) throws IOException {
        LaunchedNode node = node(id);
        node.start(startCommand(node, overrides));
    }

    /**
     * Waits until the node is ready ({@link LaunchedNode#awaitReady}: its broker registered and unfenced, its extension
     * attached and the mirror state loaded); a node without Cluster Mirror once its broker is registered, or at once for
     * a controller-only one.
     *
     * @throws TimeoutException if it is not ready within {@link #readyTimeout}, with the end of its output
     * @throws IllegalStateException if it exited, with the end of its output
     */
    public void awaitReady(int id) throws TimeoutException, InterruptedException {
        LaunchedNode node = node(id);
        try (Admin admin = admin()) {
            if (runsMirror(node)) {
                node.awaitReady(admin, readyTimeout);
            } else if (node.role().broker()) {
                node.awaitRegistered(admin, readyTimeout);
            }
        }
    }

    /** How long {@link #awaitReady} waits for a node ({@link #START_TIMEOUT} unless set); returns this cluster. */
    public LaunchedCluster readyTimeout(Duration timeout) {
        this.readyTimeout = timeout;
        return this;
    }

    public ClusterTopology topology() {
        return topology;
    }

    /** The ports of every node's listeners; advertise one behind a proxy before {@link #start}. */
    public ListenerPorts ports() {
        return ports;
    }

    /** The checkout whose {@code bin/} runs the nodes. */
    public Path checkout() {
        return checkout;
    }

    public Path baseDir() {
        return baseDir;
    }

    /** The node {@code id}; fails if there is none. */
    public synchronized LaunchedNode node(int id) {
        LaunchedNode node = nodes.get(id);
        if (node == null) {
            throw new IllegalArgumentException("no node " + id + " in " + name() + ": " + nodes.keySet());
        }
        return node;
    }

    /** Every node, by id. */
    public synchronized Map<Integer, LaunchedNode> nodes() {
        return Collections.unmodifiableMap(new TreeMap<>(nodes));
    }

    public synchronized Set<Integer> nodeIds() {
        return new TreeSet<>(nodes.keySet());
    }

    /** The nodes with the broker role. */
    public synchronized Set<Integer> brokerIds() {
        return nodes.values().stream().filter(n -> n.role().broker()).map(LaunchedNode::id).collect(Collectors.toCollection(TreeSet::new));
    }

    /** The controller-only nodes. */
    public synchronized Set<Integer> controllerOnlyIds() {
        return nodes.values().stream().filter(n -> n.role() == NodeRole.CONTROLLER).map(LaunchedNode::id)
            .collect(Collectors.toCollection(TreeSet::new));
    }

    /** The nodes whose process is running. */
    public synchronized Set<Integer> runningNodes() {
        return nodes.values().stream().filter(LaunchedNode::alive).map(LaunchedNode::id).collect(Collectors.toUnmodifiableSet());
    }

    @Override
    public String name() {
        return topology.name();
    }

    /** Every broker's address on the topology's client listener, stopped ones included. */
    @Override
    public String bootstrapServers() {
        return bootstrapServers(topology.clientListener());
    }

    /** Every broker's advertised address on {@code listener}, stopped ones included. */
    public synchronized String bootstrapServers(String listener) {
        String host = topology.listeners().stream().filter(l -> l.name().equals(listener)).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("no listener " + listener + " in " + name())).host();
        return brokerIds().stream().map(id -> host + ":" + ports.advertisedPort(id, listener)).collect(Collectors.joining(","));
    }

    /** Client properties for this cluster; killed nodes stay in the bootstrap list, so requests do not wait long for them. */
    @Override
    public Properties clientProperties() {
        Properties props = TestCluster.super.clientProperties();
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        return props;
    }

    /** SIGKILL: the node's JVM dies at once, without shutdown hooks (an unclean crash). Returns once it is gone. */
    public void kill(int id) throws InterruptedException {
        node(id).kill();
    }

    /** SIGTERM: a clean shutdown. Returns true once the process exited, false if it was killed after a minute. */
    public boolean terminate(int id) throws InterruptedException {
        return node(id).terminate();
    }

    /** Starts a stopped or killed node again on the same log dirs and ports, and waits until it is ready. */
    public void restart(int id) throws IOException, TimeoutException, InterruptedException {
        launch(id);
        awaitReady(id);
        log.info("Launched cluster {}: node {} started again", name(), id);
    }

    /** The node's replica directory of a partition, once it exists (for byte-level checks). */
    @Override
    public Path partitionDir(int nodeId, TopicPartition partition) throws InterruptedException {
        Path dir = node(nodeId).partitionDir(partition);
        return TestUtils.waitForValue(() -> Files.isDirectory(dir) ? Optional.of(dir) : Optional.empty(),
            TestUtils.DEFAULT_TIMEOUT, "a replica of " + partition + " on node " + nodeId + " of " + name());
    }

    /** The current leader of a partition, waiting until metadata names one on a running node. */
    @Override
    public int leaderOf(TopicPartition partition) throws InterruptedException {
        try (Admin admin = admin()) {
            return TestUtils.waitForValue(() -> leader(admin, partition).filter(runningNodes()::contains),
                TestUtils.DEFAULT_TIMEOUT, "a leader for " + partition + " on a running node of " + name());
        }
    }

    /** The leader metadata names right now, if any (it may still name a node that just died). */
    public static Optional<Integer> leader(Admin admin, TopicPartition partition) throws Exception {
        TopicDescription description = admin.describeTopics(Set.of(partition.topic())).allTopicNames().get(30, TimeUnit.SECONDS)
            .get(partition.topic());
        return description.partitions().stream()
            .filter(p -> p.partition() == partition.partition())
            .map(TopicPartitionInfo::leader)
            .filter(l -> l != null && !l.isEmpty())
            .map(org.apache.kafka.common.Node::id)
            .findFirst();
    }

    /** Kills every node (the brokers first), and deletes the cluster's directories if it was made to. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (int id : brokerIds()) {
                nodes.get(id).kill();
            }
            for (LaunchedNode node : nodes.values()) {
                node.kill();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (deleteOnClose) {
            deleteTree(baseDir);
        }
        log.info("Launched cluster {} closed", name());
    }

    /** Deletes a directory and everything in it, as far as possible (a test's leftovers must not fail it). */
    public static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> {
                try {
                    Files.deleteIfExists(f);
                } catch (IOException e) {
                    log.warn("Could not delete {}", f, e);
                }
            });
        } catch (IOException e) {
            log.warn("Could not delete {}", dir, e);
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(" + name() + ", " + topology.launchMode() + ", nodes=" + nodeIds() + ", dir=" + baseDir + ")";
    }
}
