package io.clustermirror.it;

import io.clustermirror.testkit.FreePorts;
import io.clustermirror.testkit.KRaftConfigs;
import io.clustermirror.testkit.LaunchedNode;
import io.clustermirror.testkit.LaunchedNode.Role;
import io.clustermirror.testkit.TestCluster;
import io.clustermirror.testkit.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
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
 * A destination cluster whose nodes are separate JVMs, so that a node can be killed with SIGKILL (an unclean crash: no
 * shutdown hook, no extension close, no producer state snapshot, no clean shutdown marker) and started again on the
 * same log dirs. A {@link LaunchMode} says how nodes are started: with the checkout's own scripts
 * ({@code bin/kafka-storage.sh format}, {@code bin/cluster-mirror-server-start.sh}), or the drop-in way, as Kafka's
 * scripts start stock Kafka with the install lines of docs/operations.md ({@link DropInInstall}).
 *
 * <p>Every node is a combined broker + controller of a static N-voter KRaft quorum ({@link #start}), or the cluster has
 * dedicated nodes: N controller-only voters and M broker-only nodes ({@link #startDedicated}); on {@link FreePorts}, each
 * a {@link LaunchedNode} in its own directory under a temp dir. The
 * scripts need {@code mirror-server/target/lib}, the drop-in way the one jar and {@code target/kafka-libs} next to it,
 * which {@code mvn install} builds before this module's tests.
 */
final class ProcessCluster implements TestCluster, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProcessCluster.class);
    /**
     * The JUnit tag of test classes that launch processes (this class or {@link ReleaseSource}): the slowest ones, left
     * out of the default build and run as their own step ({@code -Dgroups=process}).
     */
    static final String TAG = "process";
    static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final String HEAP_OPTS = "-Xmx512m -Xms64m";
    /** The JVM options Kafka's kafka-run-class.sh (and ours) use when KAFKA_JVM_PERFORMANCE_OPTS is unset. */
    private static final String JVM_PERFORMANCE_OPTS = "-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 "
        + "-XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true";

    /** Which listeners a node's broker has. */
    enum ListenerLayout {
        /** One listener, {@code PLAINTEXT}, for clients and other brokers (as the quickstart's). */
        SHARED,
        /**
         * Clients on {@code CLIENT}, brokers (and the extension's own clients) on {@code INTERNAL}: a starting broker holds
         * {@code CLIENT} until its extension has loaded the mirror image.
         */
        SEPARATE_CLIENT
    }

    /** How a node is started. */
    enum LaunchMode {
        /** {@code bin/cluster-mirror-server-start.sh}: the launcher. */
        LAUNCHER,
        /** Stock {@code kafka.Kafka} as Kafka's scripts run it, with the guide's drop-in {@code CLASSPATH} and {@code KAFKA_OPTS}. */
        DROP_IN
    }

    private final String name;
    private final LaunchMode mode;
    private final Path checkout;
    /** The drop-in install (DROP_IN only), and the KAFKA_OPTS its nodes get (the guide's, or a part of them). */
    private final DropInInstall dropIn;
    private final List<String> kafkaOpts;
    /** The installs of nodes moved to another Kafka release ({@link #upgrade}); the others run {@link #dropIn}. */
    private final Map<Integer, DropInInstall> upgradedInstalls = new TreeMap<>();
    /** Server properties on top of the cluster's own, for misconfigured nodes. */
    private final Map<String, String> extraProperties;
    private final Path baseDir;
    private final Map<Integer, LaunchedNode> nodes = new TreeMap<>();
    private final Map<Integer, Integer> brokerPorts = new TreeMap<>();
    private final Map<Integer, Integer> controllerPorts = new TreeMap<>();
    /** The port of each node's {@code CLIENT} listener ({@link ListenerLayout#SEPARATE_CLIENT}); empty with one listener. */
    private final Map<Integer, Integer> clientPorts = new TreeMap<>();
    /** Drop-in nodes that run without the agent (and so on stock Kafka: no authorizer is configured) until {@link #installAgent}. */
    private final Set<Integer> withoutAgent = new TreeSet<>();
    /** The JMX port of each node that opens one ({@link #jmxAttribute}). */
    private final Map<Integer, Integer> jmxPorts = new TreeMap<>();
    // Guarded by this.
    private boolean closed;

    /**
     * Nodes 1..{@code controllers} controller-only and the next {@code size - controllers} broker-only; all combined if 0.
     * The brokers' listeners are as {@code layout} says.
     */
    private ProcessCluster(String name, int size, int controllers, LaunchMode mode, ListenerLayout layout, boolean agent,
                           Map<String, String> extraProperties) throws IOException {
        this(name, size, controllers, mode, layout, agent, extraProperties, null);
    }

    /**
     * As above; {@code kafkaLibs} is the {@code libs/} of the stock Kafka a node runs on (null: the build's): a drop-in
     * node's installation, or what a launcher runs on instead of the Kafka it ships ({@code KAFKA_LIBS}).
     */
    private ProcessCluster(String name, int size, int controllers, LaunchMode mode, ListenerLayout layout, boolean agent,
                           Map<String, String> extraProperties, Path kafkaLibs) throws IOException {
        this.name = name;
        this.mode = mode;
        this.checkout = LaunchedNode.findCheckout();
        DropInInstall install = mode == LaunchMode.DROP_IN ? DropInInstall.fromGuide(checkout) : null;
        this.dropIn = install != null && kafkaLibs != null ? install.on(kafkaLibs) : install;
        this.kafkaOpts = dropIn == null ? List.of()
            : dropIn.kafkaOpts().stream().filter(o -> agent || !o.startsWith("-javaagent:")).toList();
        this.extraProperties = Map.copyOf(extraProperties);
        this.baseDir = Files.createTempDirectory("process-cluster-" + name + "-");
        String clusterId = Uuid.randomUuid().toString();
        for (int id = 1; id <= size; id++) {
            Role role = controllers == 0 ? Role.COMBINED : id <= controllers ? Role.CONTROLLER : Role.BROKER;
            nodes.put(id, new LaunchedNode(checkout, name, clusterId, id, role, baseDir.resolve("node-" + id), HEAP_OPTS));
            if (mode == LaunchMode.LAUNCHER && kafkaLibs != null) {
                nodes.get(id).environment("KAFKA_LIBS", kafkaLibs.toString());
            }
            brokerPorts.put(id, FreePorts.next());
            controllerPorts.put(id, FreePorts.next());
            if (layout == ListenerLayout.SEPARATE_CLIENT && role.broker()) {
                clientPorts.put(id, FreePorts.next());
            }
        }
    }

    /** Formats and starts {@code size} combined nodes with the launcher, and waits until all brokers are ready. */
    static ProcessCluster start(String name, int size) throws Exception {
        return start(name, size, LaunchMode.LAUNCHER);
    }

    /** Formats and starts {@code size} combined nodes the given way, and waits until all brokers are ready. */
    static ProcessCluster start(String name, int size, LaunchMode mode) throws Exception {
        return start(name, size, mode, ListenerLayout.SHARED);
    }

    /** Formats and starts {@code size} combined nodes the given way with the given listeners, and waits until all are ready. */
    static ProcessCluster start(String name, int size, LaunchMode mode, ListenerLayout layout) throws Exception {
        return start(new ProcessCluster(name, size, 0, mode, layout, true, Map.of()));
    }

    /**
     * Formats and starts {@code size} combined nodes with the launcher, with server properties on top of the cluster's own
     * and JVM system properties (test-only switches, in {@code KAFKA_OPTS}) on every node, and waits until all are ready.
     */
    static ProcessCluster start(String name, int size, Map<String, String> extraProperties, Map<String, String> systemProperties)
            throws Exception {
        ProcessCluster cluster = new ProcessCluster(name, size, 0, LaunchMode.LAUNCHER, ListenerLayout.SHARED, true, extraProperties);
        String options = systemProperties.entrySet().stream().map(e -> "-D" + e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining(" "));
        cluster.nodes.values().forEach(node -> node.environment("KAFKA_OPTS", options));
        return start(cluster);
    }

    /**
     * Formats and starts {@code controllers} controller-only nodes (ids 1..controllers, the static quorum) and {@code brokers}
     * broker-only nodes the given way, and waits until every broker is ready and every controller has loaded the mirror
     * state.
     */
    static ProcessCluster startDedicated(String name, int controllers, int brokers, LaunchMode mode) throws Exception {
        return startDedicated(name, controllers, brokers, mode, ListenerLayout.SHARED);
    }

    /** As {@link #startDedicated(String, int, int, LaunchMode)}, with the brokers' listeners as {@code layout} says. */
    static ProcessCluster startDedicated(String name, int controllers, int brokers, LaunchMode mode, ListenerLayout layout)
        throws Exception {
        return start(new ProcessCluster(name, controllers + brokers, controllers, mode, layout, true, Map.of()));
    }

    /**
     * Formats and starts, the drop-in way, {@code controllers} controller-only nodes without the agent, stock Kafka with no
     * authorizer (an install that left the controllers out), and {@code brokers} complete broker-only nodes that open JMX
     * ({@link #jmxAttribute}); waits until every broker is ready.
     */
    static ProcessCluster startDedicatedWithBareControllers(String name, int controllers, int brokers) throws Exception {
        ProcessCluster cluster = new ProcessCluster(name, controllers + brokers, controllers, LaunchMode.DROP_IN, ListenerLayout.SHARED,
            true, Map.of());
        cluster.withoutAgent.addAll(cluster.controllerOnlyIds());
        cluster.brokerIds().forEach(id -> cluster.jmxPorts.put(id, FreePorts.next()));
        return start(cluster);
    }

    /**
     * As {@link #startDedicated(String, int, int, LaunchMode)} with the launcher, with server properties on top of the
     * cluster's own on every node (e.g. an authorizer line and {@code super.users}).
     */
    static ProcessCluster startDedicated(String name, int controllers, int brokers, Map<String, String> extraProperties) throws Exception {
        return start(new ProcessCluster(name, controllers + brokers, controllers, LaunchMode.LAUNCHER, ListenerLayout.SHARED, true,
            extraProperties));
    }

    private static ProcessCluster start(ProcessCluster cluster) throws Exception {
        try {
            cluster.writePropertiesAndFormat();
            for (int id : cluster.nodes.keySet()) {
                cluster.launch(id);
            }
            // Brokers first: a controller-only node reads the mirror state through them.
            for (int id : cluster.brokerIds()) {
                cluster.awaitReady(id);
            }
            for (int id : cluster.controllerOnlyIds()) {
                if (!cluster.withoutAgent.contains(id)) {
                    cluster.awaitReady(id); // one without the agent never reads the mirror state
                }
            }
            log.info("Process cluster {} started: nodes {} at {}, in {}", cluster.name, cluster.nodes.keySet(), cluster.bootstrapServers(),
                cluster.baseDir);
            return cluster;
        } catch (Exception | AssertionError e) {
            cluster.close();
            throw e;
        }
    }

    /**
     * Formats and starts one combined node the drop-in way, half installed (without the agent, or with extra server
     * properties), which must refuse to start: returns its output once it exited with a non-zero status.
     */
    static String startRefused(String name, boolean agent, Map<String, String> extraProperties) throws Exception {
        return startRefused(new ProcessCluster(name, 1, 0, LaunchMode.DROP_IN, ListenerLayout.SHARED, agent, extraProperties));
    }

    /**
     * Formats and starts one controller-only node the drop-in way, half installed as {@link #startRefused(String, boolean,
     * Map)} says, which must refuse to start: returns its output once it exited with a non-zero status.
     */
    static String startRefusedController(String name, boolean agent, Map<String, String> extraProperties) throws Exception {
        return startRefused(new ProcessCluster(name, 1, 1, LaunchMode.DROP_IN, ListenerLayout.SHARED, agent, extraProperties));
    }

    /**
     * Formats and starts one combined node the drop-in way on the stock Kafka installation whose {@code libs/} is
     * {@code kafkaLibs}, which must refuse to start: returns its output once it exited with a non-zero status.
     */
    static String startRefusedOn(String name, Path kafkaLibs) throws Exception {
        return startRefused(new ProcessCluster(name, 1, 0, LaunchMode.DROP_IN, ListenerLayout.SHARED, true, Map.of(), kafkaLibs));
    }

    /** Formats and starts {@code size} combined nodes the drop-in way on the Kafka whose {@code libs/} is {@code kafkaLibs}. */
    static ProcessCluster startDropInOn(String name, int size, Path kafkaLibs) throws Exception {
        return startOn(name, size, LaunchMode.DROP_IN, kafkaLibs);
    }

    /**
     * Formats and starts {@code size} combined nodes the given way on the Kafka whose {@code libs/} is {@code kafkaLibs}:
     * the drop-in way into that installation, or with the launcher told to run on it.
     */
    static ProcessCluster startOn(String name, int size, LaunchMode mode, Path kafkaLibs) throws Exception {
        return start(new ProcessCluster(name, size, 0, mode, ListenerLayout.SHARED, true, Map.of(), kafkaLibs));
    }

    /**
     * Formats and starts {@code controllers} controller-only and {@code brokers} broker-only nodes the drop-in way on the
     * Kafka whose {@code libs/} is {@code kafkaLibs}, as {@link #startDedicated(String, int, int, LaunchMode)} does.
     */
    static ProcessCluster startDedicatedDropInOn(String name, int controllers, int brokers, Path kafkaLibs) throws Exception {
        return start(new ProcessCluster(name, controllers + brokers, controllers, LaunchMode.DROP_IN, ListenerLayout.SHARED, true,
            Map.of(), kafkaLibs));
    }

    private static String startRefused(ProcessCluster refused) throws Exception {
        String name = refused.name;
        try (ProcessCluster cluster = refused) {
            LaunchedNode node = cluster.node(1);
            cluster.writePropertiesAndFormat();
            cluster.launch(1);
            if (!node.waitForExit(START_TIMEOUT)) {
                throw new AssertionError("half-installed node " + name + " did not exit within " + START_TIMEOUT + "\n"
                    + LaunchedNode.tail(node.output(), 30));
            }
            if (node.exitValue() == 0) {
                throw new AssertionError("half-installed node " + name + " exited with status 0\n" + LaunchedNode.tail(node.output(), 30));
            }
            return node.outputSinceLastStart();
        }
    }

    /** Writes every node's server properties, then formats every log dir with the same cluster id (static quorum: no --standalone), all at once. */
    private void writePropertiesAndFormat() throws IOException, InterruptedException {
        String voters = nodes.values().stream().filter(n -> n.role().controller())
            .map(n -> n.id() + "@localhost:" + controllerPorts.get(n.id())).collect(Collectors.joining(","));
        int brokers = brokerIds().size();
        Map<LaunchedNode, Process> formats = new TreeMap<>(Comparator.comparingInt(LaunchedNode::id));
        for (LaunchedNode node : nodes.values()) {
            Map<String, String> config = new LinkedHashMap<>();
            config.put("controller.quorum.voters", voters);
            config.putAll(listenerProperties(node));
            config.put("controller.listener.names", "CONTROLLER");
            // No authorizer line: the launcher installs the read-only authorizer (ACLs off), as for an operator who sets none.
            config.put("num.partitions", "1");
            config.put("default.replication.factor", String.valueOf(KRaftConfigs.replicationFactor(brokers)));
            config.putAll(KRaftConfigs.internalTopics(brokers));
            // A killed broker is fenced (and its partitions get new leaders) after the session timeout; a restarted one
            // registers again only once its previous registration expired. Shorter than the default 9 s, still safe.
            config.put("broker.session.timeout.ms", "6000");
            config.put("broker.heartbeat.interval.ms", "1000");
            // The tests move leadership themselves.
            config.put("auto.leader.rebalance.enable", "false");
            config.putAll(extraProperties);
            node.writeProperties("Written by ProcessCluster (mirror-it tests, " + mode + "), like config/destination.properties for "
                + nodes.size() + " nodes.", config);
            formats.put(node, node.startFormat(mode == LaunchMode.LAUNCHER ? node.formatCommand(List.of())
                : dropIn(node, "tools-log4j2.yaml", "kafka.tools.StorageTool", node.formatCommand(List.of()).command())));
        }
        for (Map.Entry<LaunchedNode, Process> e : formats.entrySet()) {
            e.getKey().awaitFormat(e.getValue());
        }
    }

    /**
     * The listener lines of the node's server properties: a controller's {@code CONTROLLER} listener, and a broker's
     * listeners as {@link ListenerLayout} says. A controller-only node reads the mirror state on the brokers' inter-broker
     * listener (PLAINTEXT by default; INTERNAL named with separate client listeners, which starting brokers hold).
     */
    private Map<String, String> listenerProperties(LaunchedNode node) {
        Map<String, String> config = new LinkedHashMap<>();
        String controller = node.role().controller() ? "CONTROLLER://localhost:" + controllerPorts.get(node.id()) : "";
        String protocols = clientPorts.isEmpty() ? "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
            : "INTERNAL:PLAINTEXT,CLIENT:PLAINTEXT,CONTROLLER:PLAINTEXT";
        if (!node.role().broker()) {
            config.put("listeners", controller);
            config.put("listener.security.protocol.map", protocols);
            if (!clientPorts.isEmpty()) {
                config.put("inter.broker.listener.name", "INTERNAL");
            }
            return config;
        }
        String withController = controller.isEmpty() ? "" : "," + controller;
        int brokerPort = brokerPorts.get(node.id());
        Integer clientPort = clientPorts.get(node.id());
        String advertised = clientPort == null ? "PLAINTEXT://localhost:" + brokerPort
            : "INTERNAL://localhost:" + brokerPort + ",CLIENT://localhost:" + clientPort;
        config.put("listeners", advertised + withController);
        config.put("advertised.listeners", advertised);
        config.put("listener.security.protocol.map", protocols);
        config.put("inter.broker.listener.name", clientPort == null ? "PLAINTEXT" : "INTERNAL");
        return config;
    }

    /**
     * A stock Kafka main class run as Kafka's {@code kafka-run-class.sh} runs it, with the drop-in install's classpath
     * and {@code KAFKA_OPTS}: the JVM is the process itself. {@code scriptCommand} is the equivalent script's command
     * line, whose arguments it takes.
     */
    private ProcessBuilder dropIn(LaunchedNode node, String log4jConfig, String mainClass, List<String> scriptCommand) {
        List<String> jvmOptions = new ArrayList<>(List.of(HEAP_OPTS.split(" ")));
        jvmOptions.addAll(List.of(JVM_PERFORMANCE_OPTS.split(" ")));
        jvmOptions.add("-Dkafka.logs.dir=" + node.dir().resolve("logs"));
        jvmOptions.add("-Dlog4j2.configurationFile=" + checkout.resolve("config").resolve(log4jConfig));
        Integer jmxPort = jmxPorts.get(node.id());
        if (jmxPort != null && mainClass.equals("kafka.Kafka")) {
            jvmOptions.addAll(List.of("-Dcom.sun.management.jmxremote.port=" + jmxPort, "-Dcom.sun.management.jmxremote.rmi.port=" + jmxPort,
                "-Dcom.sun.management.jmxremote.authenticate=false", "-Dcom.sun.management.jmxremote.ssl=false",
                "-Dcom.sun.management.jmxremote.host=localhost", "-Djava.rmi.server.hostname=localhost"));
        }
        String[] args = scriptCommand.subList(1, scriptCommand.size()).toArray(String[]::new);
        DropInInstall install = upgradedInstalls.getOrDefault(node.id(), dropIn);
        List<String> options = withoutAgent.contains(node.id())
            ? kafkaOpts.stream().filter(o -> !o.startsWith("-javaagent:")).toList() : kafkaOpts;
        return new ProcessBuilder(install.command(jvmOptions, options, mainClass, args)).directory(node.dir().toFile());
    }

    /** Starts the node's process and returns at once (see {@link #awaitReady}). */
    void launch(int id) throws IOException {
        launch(id, Map.of());
    }

    /** Starts the node's process with server properties overridden ({@code --override}) and returns at once. */
    void launch(int id, Map<String, String> overrides) throws IOException {
        LaunchedNode node = node(id);
        ProcessBuilder launcher = node.launcherCommand(overrides);
        node.start(mode == LaunchMode.LAUNCHER ? launcher : dropIn(node, "log4j2.yaml", "kafka.Kafka", launcher.command()));
    }

    /**
     * Waits until the node's broker is visible to clients (registered and unfenced), its extension is attached (the
     * launcher logs that after the broker started) and has loaded the mirror state (until then the node refuses client
     * writes, failing closed: a rolling restart moves on to the next node only then, as an operator's does); fails with
     * the end of the node's output if it exits.
     */
    void awaitReady(int id) throws Exception {
        try (Admin admin = admin()) {
            node(id).awaitReady(admin, START_TIMEOUT);
        } catch (TimeoutException | IllegalStateException e) {
            throw new AssertionError(name + ": " + e.getMessage(), e);
        }
    }

    private LaunchedNode node(int id) {
        LaunchedNode node = nodes.get(id);
        if (node == null) {
            throw new IllegalArgumentException("no node " + id + " in " + name + ": " + nodes.keySet());
        }
        return node;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String bootstrapServers() {
        return nodes.values().stream().filter(n -> n.role().broker())
            .map(n -> "localhost:" + clientPorts.getOrDefault(n.id(), brokerPorts.get(n.id())))
            .collect(Collectors.joining(","));
    }

    @Override
    public Admin admin() {
        Properties props = clientProperties();
        // Killed nodes stay in the bootstrap list: do not wait long for them.
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        return Admin.create(props);
    }

    Set<Integer> nodeIds() {
        return Set.copyOf(nodes.keySet());
    }

    /** The nodes with the broker role. */
    Set<Integer> brokerIds() {
        return nodes.values().stream().filter(n -> n.role().broker()).map(LaunchedNode::id).collect(Collectors.toCollection(TreeSet::new));
    }

    /** The controller-only nodes. */
    Set<Integer> controllerOnlyIds() {
        return nodes.values().stream().filter(n -> n.role() == Role.CONTROLLER).map(LaunchedNode::id)
            .collect(Collectors.toCollection(TreeSet::new));
    }

    /** The port of a broker's PLAINTEXT listener. */
    int brokerPort(int id) {
        node(id);
        return brokerPorts.get(id);
    }

    Set<Integer> runningNodes() {
        return nodes.values().stream().filter(LaunchedNode::alive).map(LaunchedNode::id).collect(Collectors.toUnmodifiableSet());
    }

    /** SIGKILL: the node's JVM dies at once, without shutdown hooks (an unclean crash). Returns once it is gone. */
    void kill(int id) throws InterruptedException {
        node(id).kill();
    }

    /** SIGTERM: a clean shutdown through the launcher's shutdown hook. Returns once the process exited. */
    void stop(int id) throws InterruptedException {
        LaunchedNode node = node(id);
        if (!node.terminate()) {
            throw new AssertionError(node + " did not shut down within a minute of SIGTERM; killed it\n" + LaunchedNode.tail(node.output(), 30));
        }
    }

    /** Starts a stopped or killed node again on the same log dirs and ports, and waits until it is ready. */
    void start(int id) throws Exception {
        launch(id);
        awaitReady(id);
        log.info("Process cluster {}: node {} started again", name, id);
    }

    /**
     * An operator's upgrade of one drop-in node: SIGTERM, its Kafka swapped for the installation whose {@code libs/} is
     * {@code kafkaLibs} (same jar, same agent line, same log dirs and ports), started again; returns once it is ready.
     */
    void upgrade(int id, Path kafkaLibs) throws Exception {
        if (mode != LaunchMode.DROP_IN) {
            throw new IllegalStateException("only a drop-in node runs on a Kafka installation of its own");
        }
        stop(id);
        upgradedInstalls.put(id, DropInInstall.fromGuide(checkout).on(kafkaLibs));
        start(id);
    }

    /** An operator's fix of a node started without the agent: from its next start it runs with the guide's agent line. */
    void installAgent(int id) {
        node(id);
        withoutAgent.remove(id);
    }

    /**
     * An attribute of an MBean of a node that opens JMX ({@link #startDedicatedWithBareControllers}), e.g. a gauge of the
     * broker's metrics ({@code kafka.server:type=cluster-mirror}); empty while the MBean does not exist.
     */
    Optional<Object> jmxAttribute(int id, String objectName, String attribute) throws Exception {
        Integer port = jmxPorts.get(id);
        if (port == null) {
            throw new IllegalArgumentException("node " + id + " of " + name + " opens no JMX port");
        }
        JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://localhost:" + port + "/jmxrmi");
        try (JMXConnector connector = JMXConnectorFactory.connect(url)) {
            MBeanServerConnection server = connector.getMBeanServerConnection();
            ObjectName mbean = new ObjectName(objectName);
            return server.isRegistered(mbean) ? Optional.of(server.getAttribute(mbean, attribute)) : Optional.empty();
        } catch (javax.management.AttributeNotFoundException e) {
            return Optional.empty();
        }
    }

    /** What the node printed (its log, at INFO) since it was last started. */
    String outputSinceLastStart(int id) throws IOException {
        return node(id).outputSinceLastStart();
    }

    /** The node's replica directory of a partition (it exists once the replica was created), for byte-level checks. */
    @Override
    public Path partitionDir(int nodeId, TopicPartition partition) throws InterruptedException {
        Path dir = node(nodeId).partitionDir(partition);
        return TestUtils.waitForValue(() -> Files.isDirectory(dir) ? Optional.of(dir) : Optional.empty(),
            TestUtils.DEFAULT_TIMEOUT, "a replica of " + partition + " on node " + nodeId + " of " + name);
    }

    /** The current leader of a partition, waiting until metadata names one on a running node. */
    @Override
    public int leaderOf(TopicPartition partition) throws InterruptedException {
        try (Admin admin = admin()) {
            return TestUtils.waitForValue(() -> leader(admin, partition).filter(runningNodes()::contains),
                TestUtils.DEFAULT_TIMEOUT, "a leader for " + partition + " on a running node of " + name);
        }
    }

    /** The leader metadata names right now, if any (it may still name a node that just died). */
    static Optional<Integer> leader(Admin admin, TopicPartition partition) throws Exception {
        TopicDescription description = admin.describeTopics(Set.of(partition.topic())).allTopicNames().get(30, TimeUnit.SECONDS)
            .get(partition.topic());
        return description.partitions().stream()
            .filter(p -> p.partition() == partition.partition())
            .map(TopicPartitionInfo::leader)
            .filter(l -> l != null && !l.isEmpty())
            .map(org.apache.kafka.common.Node::id)
            .findFirst();
    }

    /** Kills every node and deletes the cluster's directories. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (LaunchedNode node : nodes.values()) {
                node.kill();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        deleteTree(baseDir);
        log.info("Process cluster {} closed", name);
    }

    /** Deletes a directory and everything in it, as far as possible (a test's leftovers must not fail it). */
    static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            log.warn("Could not delete {}", dir, e);
        }
    }

    @Override
    public String toString() {
        return "ProcessCluster(" + name + ", " + mode + ", nodes=" + nodes.keySet() + ", dir=" + baseDir + ")";
    }
}
