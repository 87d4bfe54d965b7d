package io.clustermirror.it;

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

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A destination cluster whose nodes are separate JVMs, so that a node can be killed with SIGKILL (an unclean crash: no
 * shutdown hook, no extension close, no producer state snapshot, no clean shutdown marker) and started again on the
 * same log dirs. A {@link LaunchMode} says how nodes are started: with the checkout's own scripts
 * ({@code bin/kafka-storage.sh format}, {@code bin/cluster-mirror-server-start.sh}), or the drop-in way, as Kafka's
 * scripts start stock Kafka with the README's install lines ({@link DropInInstall}).
 *
 * <p>Every node is a combined broker + controller of a static N-voter KRaft quorum ({@link #start}), or the cluster has
 * dedicated nodes: N controller-only voters and M broker-only nodes ({@link #startDedicated}); on free ports, each with its
 * data, logs ({@code LOG_DIR}) and console output ({@code server.out}) in its own directory under a temp dir. The
 * scripts need {@code mirror-server/target/lib}, the drop-in way the one jar and {@code target/kafka-libs} next to it,
 * which {@code mvn install} builds before this module's tests.
 */
final class ProcessCluster implements TestCluster, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProcessCluster.class);
    /**
     * The JUnit tag of test classes that launch processes (this class or {@link OldKafkaSource}): the slowest ones, left
     * out of the default build and run as their own step ({@code -Dgroups=process}).
     */
    static final String TAG = "process";
    static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);
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
        /** Stock {@code kafka.Kafka} as Kafka's scripts run it, with the README's drop-in {@code CLASSPATH} and {@code KAFKA_OPTS}. */
        DROP_IN
    }

    private final String name;
    private final LaunchMode mode;
    private final Path checkout;
    /** The drop-in install (DROP_IN only), and the KAFKA_OPTS its nodes get (the README's, or a part of them). */
    private final DropInInstall dropIn;
    private final List<String> kafkaOpts;
    /** Server properties on top of the cluster's own, for misconfigured nodes. */
    private final Map<String, String> extraProperties;
    private final Path baseDir;
    private final String clusterId = Uuid.randomUuid().toString();
    private final Map<Integer, Node> nodes = new TreeMap<>();
    /** The port of each node's {@code CLIENT} listener ({@link ListenerLayout#SEPARATE_CLIENT}); empty with one listener. */
    private final Map<Integer, Integer> clientPorts = new TreeMap<>();
    // Guarded by this.
    private final Map<Integer, Process> processes = new TreeMap<>();
    private final Thread shutdownHook;
    private boolean closed;

    /** The roles of a node ({@code process.roles}). */
    enum Role {
        COMBINED("broker,controller"), CONTROLLER("controller"), BROKER("broker");

        private final String processRoles;

        Role(String processRoles) {
            this.processRoles = processRoles;
        }

        boolean broker() {
            return this != CONTROLLER;
        }

        boolean controller() {
            return this != BROKER;
        }
    }

    private record Node(int id, Role role, int brokerPort, int controllerPort, Path dir) {
        Path properties() {
            return dir.resolve("server.properties");
        }

        Path output() {
            return dir.resolve("server.out");
        }

        Path dataDir() {
            return dir.resolve("data");
        }
    }

    /**
     * Nodes 1..{@code controllers} controller-only and the next {@code size - controllers} broker-only; all combined if 0.
     * The brokers' listeners are as {@code layout} says.
     */
    private ProcessCluster(String name, int size, int controllers, LaunchMode mode, ListenerLayout layout, boolean agent,
                           Map<String, String> extraProperties) throws IOException {
        this.name = name;
        this.mode = mode;
        this.checkout = findCheckout();
        this.dropIn = mode == LaunchMode.DROP_IN ? DropInInstall.fromReadme(checkout) : null;
        this.kafkaOpts = dropIn == null ? List.of()
            : dropIn.kafkaOpts().stream().filter(o -> agent || !o.startsWith("-javaagent:")).toList();
        this.extraProperties = Map.copyOf(extraProperties);
        this.baseDir = Files.createTempDirectory("process-cluster-" + name + "-");
        Set<Integer> ports = new HashSet<>();
        for (int id = 1; id <= size; id++) {
            Path dir = Files.createDirectories(baseDir.resolve("node-" + id));
            Role role = controllers == 0 ? Role.COMBINED : id <= controllers ? Role.CONTROLLER : Role.BROKER;
            nodes.put(id, new Node(id, role, freePort(ports), freePort(ports), dir));
            if (layout == ListenerLayout.SEPARATE_CLIENT && role.broker()) {
                clientPorts.put(id, freePort(ports));
            }
        }
        this.shutdownHook = new Thread(this::killAll, "process-cluster-" + name + "-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
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

    private static ProcessCluster start(ProcessCluster cluster) throws Exception {
        String name = cluster.name;
        try {
            for (Node node : cluster.nodes.values()) {
                cluster.writeProperties(node);
            }
            cluster.format();
            for (int id : cluster.nodes.keySet()) {
                cluster.launch(id);
            }
            // Brokers first: a controller-only node reads the mirror state through them.
            for (int id : cluster.brokerIds()) {
                cluster.awaitReady(id);
            }
            for (int id : cluster.controllerOnlyIds()) {
                cluster.awaitReady(id);
            }
            log.info("Process cluster {} started: nodes {} at {}, in {}", name, cluster.nodes.keySet(), cluster.bootstrapServers(), cluster.baseDir);
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
        try (ProcessCluster cluster = new ProcessCluster(name, 1, 0, LaunchMode.DROP_IN, ListenerLayout.SHARED, agent, extraProperties)) {
            Node node = cluster.nodes.get(1);
            cluster.writeProperties(node);
            cluster.format();
            cluster.launch(1);
            Process p = cluster.process(1);
            if (!p.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("half-installed node " + name + " did not exit within " + START_TIMEOUT + "\n"
                    + tail(node.output(), 30));
            }
            String output = Files.readString(node.output(), StandardCharsets.UTF_8);
            if (p.exitValue() == 0) {
                throw new AssertionError("half-installed node " + name + " exited with status 0\n" + tail(node.output(), 30));
            }
            return output;
        }
    }

    /** The checkout holding {@code bin/} and the built {@code mirror-server/target/lib}: the working directory or a parent. */
    static Path findCheckout() {
        Path start = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            if (Files.isExecutable(dir.resolve("bin/cluster-mirror-server-start.sh"))) {
                if (!Files.isDirectory(dir.resolve("mirror-server/target/lib"))) {
                    throw new IllegalStateException("Cluster Mirror is not built in " + dir + ": run 'mvn -B install -DskipTests' first");
                }
                return dir;
            }
        }
        throw new IllegalStateException("No Cluster Mirror checkout (bin/cluster-mirror-server-start.sh) in " + start + " or its parents");
    }

    static int freePort(Set<Integer> taken) throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            try (ServerSocket socket = new ServerSocket(0)) {
                int port = socket.getLocalPort();
                if (taken.add(port)) {
                    return port;
                }
            }
        }
        throw new IOException("no free port found");
    }

    private void writeProperties(Node node) throws IOException {
        String voters = nodes.values().stream().filter(n -> n.role().controller())
            .map(n -> n.id() + "@localhost:" + n.controllerPort()).collect(Collectors.joining(","));
        int rf = Math.min(3, brokerIds().size());
        String minIsr = rf >= 3 ? "2" : "1";
        String props = String.join("\n",
            "# Written by ProcessCluster (mirror-it tests, " + mode + "), like config/destination.properties for " + nodes.size() + " nodes.",
            "process.roles=" + node.role().processRoles,
            "node.id=" + node.id(),
            "controller.quorum.voters=" + voters,
            listenerProperties(node),
            "controller.listener.names=CONTROLLER",
            "log.dirs=" + node.dataDir(),
            // No authorizer line: the launcher installs the read-only authorizer (ACLs off), as for an operator who sets none.
            "num.partitions=1",
            "default.replication.factor=" + rf,
            "offsets.topic.replication.factor=" + rf,
            "transaction.state.log.replication.factor=" + rf,
            "transaction.state.log.min.isr=" + minIsr,
            "share.coordinator.state.topic.replication.factor=" + rf,
            "share.coordinator.state.topic.min.isr=" + minIsr,
            "group.initial.rebalance.delay.ms=0",
            // A killed broker is fenced (and its partitions get new leaders) after the session timeout; a restarted one
            // registers again only once its previous registration expired. Shorter than the default 9 s, still safe.
            "broker.session.timeout.ms=6000",
            "broker.heartbeat.interval.ms=1000",
            // The tests move leadership themselves.
            "auto.leader.rebalance.enable=false",
            "");
        for (Map.Entry<String, String> e : extraProperties.entrySet()) {
            props += e.getKey() + "=" + e.getValue() + "\n";
        }
        Files.writeString(node.properties(), props, StandardCharsets.UTF_8);
    }

    /**
     * The listener lines of the node's server properties: a controller's {@code CONTROLLER} listener, and a broker's
     * listeners as {@link ListenerLayout} says. A controller-only node reads the mirror state on the brokers' inter-broker
     * listener (PLAINTEXT by default; INTERNAL named with separate client listeners, which starting brokers hold).
     */
    private String listenerProperties(Node node) {
        String controller = node.role().controller() ? "CONTROLLER://localhost:" + node.controllerPort() : "";
        if (!node.role().broker()) {
            if (clientPorts.isEmpty()) {
                return String.join("\n", "listeners=" + controller,
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
            }
            return String.join("\n", "listeners=" + controller,
                "listener.security.protocol.map=INTERNAL:PLAINTEXT,CLIENT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name=INTERNAL");
        }
        String withController = controller.isEmpty() ? "" : "," + controller;
        Integer clientPort = clientPorts.get(node.id());
        if (clientPort == null) {
            return String.join("\n",
                "listeners=PLAINTEXT://localhost:" + node.brokerPort() + withController,
                "advertised.listeners=PLAINTEXT://localhost:" + node.brokerPort(),
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name=PLAINTEXT");
        }
        return String.join("\n",
            "listeners=INTERNAL://localhost:" + node.brokerPort() + ",CLIENT://localhost:" + clientPort + withController,
            "advertised.listeners=INTERNAL://localhost:" + node.brokerPort() + ",CLIENT://localhost:" + clientPort,
            "listener.security.protocol.map=INTERNAL:PLAINTEXT,CLIENT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name=INTERNAL");
    }

    /** Formats every node's log dir with the same cluster id (static quorum: no --standalone), all at once. */
    private void format() throws IOException, InterruptedException {
        Map<Node, Process> formats = new TreeMap<>(Comparator.comparingInt(Node::id));
        for (Node node : nodes.values()) {
            List<String> args = List.of("format", "-t", clusterId, "-c", node.properties().toString());
            ProcessBuilder format = mode == LaunchMode.LAUNCHER ? script("kafka-storage.sh", args, node)
                : dropIn(node, "tools-log4j2.yaml", "kafka.tools.StorageTool", args);
            formats.put(node, format
                .redirectOutput(node.dir().resolve("format.out").toFile())
                .start());
        }
        for (Map.Entry<Node, Process> e : formats.entrySet()) {
            Node node = e.getKey();
            Process p = e.getValue();
            Path out = node.dir().resolve("format.out");
            if (!p.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                formats.values().forEach(Process::destroyForcibly);
                throw new AssertionError("formatting node " + node.id() + " of " + name + " timed out:\n" + tail(out, 20));
            }
            if (p.exitValue() != 0) {
                throw new AssertionError("formatting node " + node.id() + " of " + name + " failed (exit " + p.exitValue() + "):\n" + tail(out, 20));
            }
        }
    }

    private ProcessBuilder script(String script, List<String> args, Node node) {
        List<String> command = new ArrayList<>();
        command.add(checkout.resolve("bin").resolve(script).toString());
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command).directory(node.dir().toFile()).redirectErrorStream(true);
        pb.environment().put("KAFKA_HEAP_OPTS", HEAP_OPTS);
        pb.environment().put("LOG_DIR", node.dir().resolve("logs").toString());
        return pb;
    }

    /**
     * A stock Kafka main class run as Kafka's {@code kafka-run-class.sh} runs it, with the drop-in install's classpath
     * and {@code KAFKA_OPTS}: the JVM is the process itself.
     */
    private ProcessBuilder dropIn(Node node, String log4jConfig, String mainClass, List<String> args) {
        List<String> jvmOptions = new ArrayList<>(List.of(HEAP_OPTS.split(" ")));
        jvmOptions.addAll(List.of(JVM_PERFORMANCE_OPTS.split(" ")));
        jvmOptions.add("-Dkafka.logs.dir=" + node.dir().resolve("logs"));
        jvmOptions.add("-Dlog4j2.configurationFile=" + checkout.resolve("config").resolve(log4jConfig));
        return new ProcessBuilder(dropIn.command(jvmOptions, kafkaOpts, mainClass, args.toArray(String[]::new)))
            .directory(node.dir().toFile()).redirectErrorStream(true);
    }

    /** Starts the node's process and returns at once (see {@link #awaitReady}). */
    void launch(int id) throws IOException {
        launch(id, Map.of());
    }

    /** Starts the node's process with server properties overridden ({@code --override}) and returns at once. */
    synchronized void launch(int id, Map<String, String> overrides) throws IOException {
        Node node = node(id);
        Process running = processes.get(id);
        if (running != null && running.isAlive()) {
            throw new IllegalStateException("node " + id + " of " + name + " is running (pid " + running.pid() + ")");
        }
        Files.writeString(node.output(), "\n=== start of node " + id + " ===\n", StandardCharsets.UTF_8,
            java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        // The script execs java: the process is the JVM itself, so destroy()/destroyForcibly() signal the broker.
        List<String> args = new ArrayList<>(List.of(node.properties().toString()));
        overrides.forEach((k, v) -> args.addAll(List.of("--override", k + "=" + v)));
        ProcessBuilder start = mode == LaunchMode.LAUNCHER ? script("cluster-mirror-server-start.sh", args, node)
            : dropIn(node, "log4j2.yaml", "kafka.Kafka", args);
        Process p = start
            .redirectOutput(ProcessBuilder.Redirect.appendTo(node.output().toFile()))
            .start();
        processes.put(id, p);
        log.info("Process cluster {}: node {} starting (pid {})", name, id, p.pid());
    }

    /**
     * Waits until the node's broker is visible to clients (registered and unfenced), its extension is attached (the
     * launcher logs that after the broker started) and has loaded the mirror state (until then the node refuses client
     * writes, failing closed: a rolling restart moves on to the next node only then, as an operator's does); fails with
     * the end of the node's output if it exits.
     */
    void awaitReady(int id) throws Exception {
        Node node = node(id);
        String attached = node.role().broker() ? "Cluster Mirror extension attached to broker " + id + " of cluster"
            : "Controller " + id + " of cluster " + clusterId + " reads the mirror state";
        String loaded = "Mirror image loaded: ";
        try (Admin admin = admin()) {
            TestUtils.waitFor(() -> {
                Process p = process(id);
                if (!p.isAlive()) {
                    throw new AssertionError("node " + id + " of " + name + " exited during startup with status " + p.exitValue());
                }
                long starts = startCount(node.output(), "=== start of node ");
                return startCount(node.output(), attached) == starts && startCount(node.output(), loaded) == starts
                    && (!node.role().broker()
                        || admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream().anyMatch(n -> n.id() == id));
            }, START_TIMEOUT, "node " + id + " of " + name + " to be ready");
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n--- last lines of node " + id + "'s output (" + node.output() + ") ---\n"
                + tail(node.output(), 30), e);
        }
    }

    /** How many lines of the file contain {@code marker} (the output is appended across restarts). */
    private static long startCount(Path file, String marker) throws IOException {
        try (Stream<String> lines = Files.lines(file, StandardCharsets.UTF_8)) {
            return lines.filter(l -> l.contains(marker)).count();
        }
    }

    /** The output's error lines (the launcher's one-line {@code ERROR:} and logged errors), then its last lines. */
    static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            List<String> errors = all.stream().filter(l -> l.startsWith("ERROR: ") || l.contains("] ERROR ") || l.contains("] FATAL "))
                .limit(10).toList();
            return (errors.isEmpty() ? "" : "--- errors ---\n" + String.join("\n", errors) + "\n--- last lines ---\n")
                + String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }

    private Node node(int id) {
        Node node = nodes.get(id);
        if (node == null) {
            throw new IllegalArgumentException("no node " + id + " in " + name + ": " + nodes.keySet());
        }
        return node;
    }

    private synchronized Process process(int id) {
        Process p = processes.get(id);
        if (p == null) {
            throw new IllegalStateException("node " + id + " of " + name + " was never started");
        }
        return p;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String bootstrapServers() {
        return nodes.values().stream().filter(n -> n.role().broker())
            .map(n -> "localhost:" + clientPorts.getOrDefault(n.id(), n.brokerPort()))
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
        return nodes.values().stream().filter(n -> n.role().broker()).map(Node::id).collect(Collectors.toCollection(java.util.TreeSet::new));
    }

    /** The controller-only nodes. */
    Set<Integer> controllerOnlyIds() {
        return nodes.values().stream().filter(n -> n.role() == Role.CONTROLLER).map(Node::id)
            .collect(Collectors.toCollection(java.util.TreeSet::new));
    }

    /** The port of a broker's PLAINTEXT listener. */
    int brokerPort(int id) {
        return node(id).brokerPort();
    }

    synchronized Set<Integer> runningNodes() {
        return processes.entrySet().stream().filter(e -> e.getValue().isAlive()).map(Map.Entry::getKey)
            .collect(Collectors.toUnmodifiableSet());
    }

    /** SIGKILL: the node's JVM dies at once, without shutdown hooks (an unclean crash). Returns once it is gone. */
    void kill(int id) throws InterruptedException {
        Process p = process(id);
        p.destroyForcibly();
        if (!p.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            throw new AssertionError("node " + id + " of " + name + " (pid " + p.pid() + ") did not die on SIGKILL");
        }
        log.info("Process cluster {}: node {} killed (SIGKILL, pid {}, exit {})", name, id, p.pid(), p.exitValue());
    }

    /** SIGTERM: a clean shutdown through the launcher's shutdown hook. Returns once the process exited. */
    void stop(int id) throws InterruptedException {
        Process p = process(id);
        p.destroy();
        if (!p.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError("node " + id + " of " + name + " did not shut down within " + STOP_TIMEOUT
                + " of SIGTERM; killed it\n" + tail(node(id).output(), 30));
        }
        log.info("Process cluster {}: node {} stopped (SIGTERM, exit {})", name, id, p.exitValue());
    }

    /** Starts a stopped or killed node again on the same log dirs and ports, and waits until it is ready. */
    void start(int id) throws Exception {
        launch(id);
        awaitReady(id);
        log.info("Process cluster {}: node {} started again", name, id);
    }

    /** What the node printed (its log, at INFO) since it was last started. */
    String outputSinceLastStart(int id) throws IOException {
        String all = Files.readString(node(id).output(), StandardCharsets.UTF_8);
        return all.substring(Math.max(0, all.lastIndexOf("=== start of node ")));
    }

    /** The node's replica directory of a partition (it exists once the replica was created), for byte-level checks. */
    @Override
    public Path partitionDir(int nodeId, TopicPartition partition) throws InterruptedException {
        Path dir = node(nodeId).dataDir().resolve(partition.toString());
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

    private synchronized void killAll() {
        for (Process p : processes.values()) {
            p.destroyForcibly();
        }
        for (Process p : processes.values()) {
            try {
                p.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Kills every node and deletes the cluster's directories. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        killAll();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs anyway
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
