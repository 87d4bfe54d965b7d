package io.clustermirror.it;

import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.testsupport.ClusterTopology.LaunchMode;
import io.clustermirror.testsupport.FreePorts;
import io.clustermirror.testsupport.KRaftConfigs;
import io.clustermirror.testsupport.LaunchedCluster;
import io.clustermirror.testsupport.LaunchedNode;
import org.apache.kafka.common.security.auth.SecurityProtocol;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeoutException;

/**
 * A destination cluster whose nodes are separate JVMs ({@link LaunchedCluster} of a {@link ClusterTopology}), so that a
 * node can be killed with SIGKILL (an unclean crash: no shutdown hook, no extension close, no producer state snapshot,
 * no clean shutdown marker) and started again on the same log dirs. The topology's launch mode says how nodes are
 * started: with the checkout's own scripts ({@code bin/kafka-storage.sh format}, {@code bin/cluster-mirror-server-start.sh}),
 * or the drop-in way, as Kafka's scripts start stock Kafka with the install lines of docs/operations.md
 * ({@link DropInInstall}); its Kafka release, which installation they run on.
 *
 * <p>The scripts need {@code mirror-server/target/lib}, the drop-in way the one jar and {@code target/kafka-libs} next to
 * it, which {@code mvn install} builds before this module's tests. {@link #close} kills every node and deletes the
 * cluster's directories.
 */
final class ProcessCluster extends LaunchedCluster {
    /**
     * The JUnit tag of test classes that launch processes (this class or {@link ReleaseSource}): the slowest ones, left
     * out of the default build and run as their own step ({@code -Dgroups=process}).
     */
    static final String TAG = "process";
    /** The JVM options Kafka's kafka-run-class.sh (and ours) use when KAFKA_JVM_PERFORMANCE_OPTS is unset. */
    private static final String JVM_PERFORMANCE_OPTS = "-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 "
        + "-XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true";
    /** The listeners of {@link #separateClientListener}: brokers (and the extension's own clients) on one, clients on the other. */
    static final String INTERNAL = "INTERNAL";
    static final String CLIENT = "CLIENT";

    /** The drop-in install (DROP_IN only), and the KAFKA_OPTS its nodes get (the guide's, or a part of them). */
    private final DropInInstall dropIn;
    private final List<String> kafkaOpts;
    /** The installs of nodes moved to another Kafka release ({@link #upgrade}); the others run {@link #dropIn}. */
    private final Map<Integer, DropInInstall> upgradedInstalls = new TreeMap<>();
    /** Drop-in nodes that run without the agent (and so on stock Kafka: no authorizer is configured) until {@link #installAgent}. */
    private final Set<Integer> withoutAgent = new TreeSet<>();
    /** The JMX port of each node that opens one ({@link #jmxAttribute}). */
    private final Map<Integer, Integer> jmxPorts = new TreeMap<>();

    /**
     * The nodes of {@code topology}, launched as its launch mode says ({@code LAUNCHER} or {@code DROP_IN}), on the Kafka
     * release it names (the build's if none: a drop-in node's installation, or what a launcher runs on instead of the Kafka
     * it ships, {@code KAFKA_LIBS}); drop-in nodes with the guide's agent line only if {@code agent}.
     */
    private ProcessCluster(ClusterTopology topology, boolean agent) throws IOException {
        super(topology, LaunchedNode.findCheckout(), Files.createTempDirectory("process-cluster-" + topology.name() + "-"), true);
        LaunchMode mode = topology.launchMode();
        if (mode != LaunchMode.LAUNCHER && mode != LaunchMode.DROP_IN) {
            throw new IllegalArgumentException("A process cluster runs Cluster Mirror with the launcher or the drop-in way, not " + mode);
        }
        Path kafkaLibs = topology.kafkaRelease().map(KafkaReleases::libsOf).orElse(null);
        DropInInstall install = mode == LaunchMode.DROP_IN ? DropInInstall.fromGuide(checkout()) : null;
        this.dropIn = install != null && kafkaLibs != null ? install.on(kafkaLibs) : install;
        this.kafkaOpts = dropIn == null ? List.of()
            : dropIn.kafkaOpts().stream().filter(o -> agent || !o.startsWith("-javaagent:")).toList();
        if (mode == LaunchMode.LAUNCHER && kafkaLibs != null) {
            nodes().values().forEach(node -> node.environment("KAFKA_LIBS", kafkaLibs.toString()));
        }
    }

    /**
     * The description of a process cluster named {@code name}, started with the launcher unless told otherwise: a static
     * quorum, one {@code PLAINTEXT} listener, and what the process tests need of it (a killed broker fenced soon, and
     * leadership moved only by the tests). Add nodes with {@code combined} or {@code dedicated}.
     */
    static ClusterTopology.Builder topology(String name) {
        return ClusterTopology.builder(name)
            .launchMode(LaunchMode.LAUNCHER)
            // No authorizer line: the launcher installs the read-only authorizer (ACLs off), as for an operator who sets none.
            .serverProperties(KRaftConfigs.fastFencing())
            // The tests move leadership themselves.
            .serverProperty("auto.leader.rebalance.enable", "false");
    }

    /**
     * Clients on {@code CLIENT}, brokers (and the extension's own clients) on {@code INTERNAL}: a starting broker holds
     * {@code CLIENT} until its extension has loaded the mirror image. A controller-only node reads the mirror state on
     * {@code INTERNAL}.
     */
    static ClusterTopology.Builder separateClientListener(ClusterTopology.Builder topology) {
        return topology.listener(INTERNAL, SecurityProtocol.PLAINTEXT).listener(CLIENT, SecurityProtocol.PLAINTEXT)
            .interBrokerListener(INTERNAL).clientListener(CLIENT);
    }

    /** Formats and starts the cluster {@code topology} describes, and waits until every node is ready. */
    static ProcessCluster start(ClusterTopology topology) throws Exception {
        return new ProcessCluster(topology, true).start();
    }

    /** Formats and starts {@code size} combined nodes with the launcher, and waits until all brokers are ready. */
    static ProcessCluster start(String name, int size) throws Exception {
        return start(topology(name).combined(size).build());
    }

    /**
     * Formats and starts, the drop-in way, {@code controllers} controller-only nodes without the agent, stock Kafka with no
     * authorizer (an install that left the controllers out), and {@code brokers} complete broker-only nodes that open JMX
     * ({@link #jmxAttribute}); waits until every broker is ready.
     */
    static ProcessCluster startDedicatedWithBareControllers(String name, int controllers, int brokers) throws Exception {
        ProcessCluster cluster = new ProcessCluster(topology(name).launchMode(LaunchMode.DROP_IN).dedicated(controllers, brokers).build(), true);
        cluster.withoutAgent.addAll(cluster.controllerOnlyIds());
        cluster.brokerIds().forEach(id -> cluster.jmxPorts.put(id, FreePorts.next()));
        return cluster.start();
    }

    /**
     * Formats and starts the one node of {@code topology} the drop-in way, half installed (without the agent unless
     * {@code agent}, or with the topology's extra server properties), which must refuse to start: returns its output once
     * it exited with a non-zero status.
     */
    static String startRefused(ClusterTopology topology, boolean agent) throws Exception {
        try (ProcessCluster cluster = new ProcessCluster(topology.toBuilder().launchMode(LaunchMode.DROP_IN).build(), agent)) {
            int id = topology.nodes().get(0).id();
            LaunchedNode node = cluster.node(id);
            cluster.writePropertiesAndFormat();
            cluster.launch(id);
            if (!node.waitForExit(START_TIMEOUT)) {
                throw new AssertionError("half-installed node " + topology.name() + " did not exit within " + START_TIMEOUT + "\n"
                    + LaunchedNode.tail(node.output(), 30));
            }
            if (node.exitValue() == 0) {
                throw new AssertionError("half-installed node " + topology.name() + " exited with status 0\n"
                    + LaunchedNode.tail(node.output(), 30));
            }
            return node.outputSinceLastStart();
        }
    }

    @Override
    public ProcessCluster start() throws Exception {
        super.start();
        return this;
    }

    @Override
    protected ProcessBuilder formatCommand(LaunchedNode node, List<String> args) {
        ProcessBuilder script = super.formatCommand(node, args);
        return dropIn == null ? script : dropIn(node, "tools-log4j2.yaml", "kafka.tools.StorageTool", script.command());
    }

    @Override
    protected ProcessBuilder startCommand(LaunchedNode node, Map<String, String> overrides) {
        ProcessBuilder launcher = super.startCommand(node, overrides);
        return dropIn == null ? launcher : dropIn(node, "log4j2.yaml", "kafka.Kafka", launcher.command());
    }

    /** A node without the agent never reads the mirror state: it is ready once started (a controller) or registered. */
    @Override
    protected boolean runsMirror(LaunchedNode node) {
        return !withoutAgent.contains(node.id());
    }

    /**
     * A stock Kafka main class run as Kafka's {@code kafka-run-class.sh} runs it, with the drop-in install's classpath
     * and {@code KAFKA_OPTS}: the JVM is the process itself. {@code scriptCommand} is the equivalent script's command
     * line, whose arguments it takes.
     */
    private ProcessBuilder dropIn(LaunchedNode node, String log4jConfig, String mainClass, List<String> scriptCommand) {
        List<String> jvmOptions = new ArrayList<>(List.of(topology().heap(node.role()).split(" ")));
        jvmOptions.addAll(List.of(JVM_PERFORMANCE_OPTS.split(" ")));
        jvmOptions.add("-Dkafka.logs.dir=" + node.dir().resolve("logs"));
        jvmOptions.add("-Dlog4j2.configurationFile=" + checkout().resolve("config").resolve(log4jConfig));
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

    /**
     * Waits until the node's broker is visible to clients (registered and unfenced), its extension is attached (the
     * launcher logs that after the broker started) and has loaded the mirror state (until then the node refuses client
     * writes, failing closed: a rolling restart moves on to the next node only then, as an operator's does); fails with
     * the end of the node's output if it exits.
     */
    @Override
    public void awaitReady(int id) throws InterruptedException {
        try {
            super.awaitReady(id);
        } catch (TimeoutException | IllegalStateException e) {
            throw new AssertionError(name() + ": " + e.getMessage(), e);
        }
    }

    /** The port of a broker's inter-broker listener ({@code PLAINTEXT}, or {@code INTERNAL} with a separate client listener). */
    int brokerPort(int id) {
        return ports().port(id, topology().interBrokerListener());
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
        restart(id);
    }

    /**
     * An operator's upgrade of one drop-in node: SIGTERM, its Kafka swapped for the installation whose {@code libs/} is
     * {@code kafkaLibs} (same jar, same agent line, same log dirs and ports), started again; returns once it is ready.
     */
    void upgrade(int id, Path kafkaLibs) throws Exception {
        if (dropIn == null) {
            throw new IllegalStateException("only a drop-in node runs on a Kafka installation of its own");
        }
        stop(id);
        upgradedInstalls.put(id, DropInInstall.fromGuide(checkout()).on(kafkaLibs));
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
            throw new IllegalArgumentException("node " + id + " of " + name() + " opens no JMX port");
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
}
