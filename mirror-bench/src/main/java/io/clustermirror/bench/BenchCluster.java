package io.clustermirror.bench;

import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.testsupport.KRaftConfigs;
import io.clustermirror.testsupport.LaunchedCluster;
import io.clustermirror.testsupport.LaunchedNode;
import io.clustermirror.testsupport.NodeRole;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.security.auth.SecurityProtocol;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * A KRaft cluster of separate JVMs, the {@link LaunchedCluster} of a {@link #topology}: node 1 is combined (controller +
 * broker) or a dedicated controller, further nodes are brokers; a dynamic quorum, node 1 its one voter.
 */
final class BenchCluster implements AutoCloseable {
    private static final String PLAINTEXT = "PLAINTEXT";

    final String name;
    private final LaunchedCluster cluster;
    /** Whether the brokers keep Kafka's request log ({@link RequestTrace}). */
    private final boolean traceRequests;
    private final Map<Integer, KafkaNode> nodes = new TreeMap<>();
    private Admin admin;

    /**
     * A client listener of one broker besides PLAINTEXT, e.g. one reached through a proxy. Every broker of a cluster has
     * each listener name; a broker none of these names gets a free port for it, advertised as is.
     *
     * @param nodeId the broker's node id
     * @param port the port it binds, chosen by whoever put something in front of it
     * @param advertisedPort the port of localhost that clients are told to connect to: the listener's own or a proxy's
     */
    record Listener(int nodeId, String name, String protocol, int port, int advertisedPort) {
    }

    private BenchCluster(String name, LaunchedCluster cluster, boolean traceRequests) {
        this.name = name;
        this.cluster = cluster;
        this.traceRequests = traceRequests;
    }

    static BenchCluster start(Path home, Path workDir, String name, int brokers, Map<String, String> extra) {
        return start(home, workDir, name, brokers, extra, List.of());
    }

    /** The same, brokers with more client listeners. */
    static BenchCluster start(Path home, Path workDir, String name, int brokers, Map<String, String> extra,
                              List<Listener> listeners) {
        return start(home, workDir, name, extra, true, brokers, listeners, false);
    }

    /**
     * A cluster of a dedicated controller (node 1) and {@code brokers} broker-only nodes, as production runs them: the
     * brokers' CPU ({@link #brokerCpuSeconds}) then holds no controller work, as a follower added to a cluster holds none.
     */
    static BenchCluster startWithController(Path home, Path workDir, String name, int brokers, Map<String, String> extra) {
        return startWithController(home, workDir, name, brokers, extra, false);
    }

    /** The same; with {@code traceRequests} the brokers keep Kafka's request log ({@link #requestLogs}). */
    static BenchCluster startWithController(Path home, Path workDir, String name, int brokers, Map<String, String> extra,
                                            boolean traceRequests) {
        return start(home, workDir, name, extra, false, brokers, List.of(), traceRequests);
    }

    /**
     * The benchmark's cluster: node 1 combined (or a controller only), then broker-only nodes up to {@code brokers}
     * brokers in all, {@code listeners} besides PLAINTEXT (bound and advertised at their ports), {@code extra} server
     * properties. Internal topics on one replica: the benchmark measures the mirrored topics' replication only.
     */
    static ClusterTopology topology(String name, boolean combined, int brokers, Map<String, String> extra, List<Listener> listeners) {
        ClusterTopology.Builder topology = ClusterTopology.builder(name)
            .node(1, combined ? NodeRole.COMBINED : NodeRole.CONTROLLER)
            .nodes(NodeRole.BROKER, 2, combined ? brokers - 1 : brokers)
            .quorum(ClusterTopology.Quorum.STANDALONE)
            .listener(PLAINTEXT, SecurityProtocol.PLAINTEXT)
            .heap(KafkaNode.heap())
            .serverProperties(KRaftConfigs.internalTopics(1))
            .serverProperty("default.replication.factor", 1);
        listeners.forEach(l -> topology.listener(l.name(), SecurityProtocol.forName(l.protocol()))
            .fixedPort(l.nodeId(), l.name(), l.port(), l.advertisedPort()));
        return topology.serverProperties(extra).build();
    }

    private static BenchCluster start(Path home, Path workDir, String name, Map<String, String> extra, boolean combined,
                                      int brokers, List<Listener> listeners, boolean traceRequests) {
        LaunchedCluster cluster = LaunchedCluster.create(topology(name, combined, brokers, extra, listeners), home,
            workDir.resolve(name));
        BenchCluster c = new BenchCluster(name, cluster, traceRequests);
        cluster.nodes().values().forEach(node -> c.nodes.put(node.id(), new KafkaNode(node, traceRequests && node.role().broker())));
        try {
            // The benchmark waits for its brokers to be live, not for each node to be ready as the tests do, so that its
            // runs time what they always timed.
            cluster.formatAndLaunch();
            c.awaitBrokers(brokers);
            return c;
        } catch (IOException e) {
            c.close();
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            c.close();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the " + name + " cluster", e);
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** Starts one more broker-only node and returns it (without waiting for it). */
    KafkaNode addBroker() {
        try {
            LaunchedNode node = cluster.addBroker();
            KafkaNode n = new KafkaNode(node, traceRequests);
            nodes.put(n.nodeId, n);
            cluster.launch(n.nodeId);
            return n;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while adding a broker to the " + name + " cluster", e);
        }
    }

    /** The first broker's address. */
    String bootstrap() {
        return "localhost:" + cluster.ports().advertisedPort(firstBroker().nodeId, PLAINTEXT);
    }

    /** The broker-only or combined node of the lowest id. */
    KafkaNode firstBroker() {
        return nodes.values().stream().filter(KafkaNode::broker).findFirst()
            .orElseThrow(() -> new IllegalStateException("the " + name + " cluster has no broker"));
    }

    /** The nodes that are brokers (a dedicated controller left out), by id. */
    List<KafkaNode> brokers() {
        return nodes.values().stream().filter(KafkaNode::broker).toList();
    }

    /** The request logs of the brokers ({@link RequestTrace}; none unless the cluster was started to trace). */
    List<Path> requestLogs() {
        return nodes.values().stream().filter(KafkaNode::broker).map(n -> RequestTrace.log(n.dir)).toList();
    }

    /** CPU seconds of the nodes that are brokers (a dedicated controller left out). */
    double brokerCpuSeconds() {
        return nodes.values().stream().filter(KafkaNode::broker).mapToDouble(KafkaNode::cpuSeconds).sum();
    }

    KafkaNode node(int id) {
        KafkaNode node = nodes.get(id);
        if (node == null) {
            throw new IllegalArgumentException("no node " + id + " in the " + name + " cluster");
        }
        return node;
    }

    /** Stops a broker added by {@link #addBroker} and deletes its data (unless the work is kept). */
    void removeBroker(KafkaNode broker) throws IOException {
        try {
            cluster.removeNode(broker.nodeId);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        nodes.remove(broker.nodeId);
        Bench.discardWork(broker.dir);
    }

    /** The GC logs of the cluster's JVMs, named {@code <prefix>-node<id>}. */
    Map<String, Path> gcLogs(String prefix) {
        Map<String, Path> logs = new java.util.LinkedHashMap<>();
        nodes.values().forEach(n -> logs.put(prefix + "-node" + n.nodeId, n.gcLog()));
        return logs;
    }

    Properties clientProps() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        return p;
    }

    synchronized Admin admin() {
        if (admin == null) {
            admin = Admin.create(clientProps());
        }
        return admin;
    }

    /** Waits until the cluster has {@code n} live brokers; fails early if a node died. */
    void awaitBrokers(int n) {
        awaitLive(live -> live.size() >= n, n + " brokers");
    }

    /**
     * Waits until broker {@code id} is live: a count is not enough once a broker was removed, as the controller
     * may still list the removed one.
     */
    void awaitBroker(int id) {
        awaitLive(live -> live.stream().anyMatch(node -> node.id() == id), "broker " + id);
    }

    private void awaitLive(Predicate<Collection<Node>> done, String what) {
        long deadline = System.currentTimeMillis() + 120_000;
        while (true) {
            for (KafkaNode node : nodes.values()) {
                if (!node.alive()) {
                    throw new IllegalStateException("node " + node.nodeId + " of the " + name + " cluster exited:\n"
                        + node.tail());
                }
            }
            try {
                if (done.test(admin().describeCluster().nodes().get(5, TimeUnit.SECONDS))) {
                    return;
                }
            } catch (ExecutionException | TimeoutException e) {
                // not up yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the " + name + " cluster", e);
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the " + name + " cluster did not come up with " + what);
            }
            Bench.sleep(250);
        }
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close(java.time.Duration.ofSeconds(5));
            admin = null;
        }
        // Brokers first, the controller last (a broker without its controller waits for it on shutdown).
        List<KafkaNode> byIdDescending = new ArrayList<>(nodes.values());
        Collections.reverse(byIdDescending);
        byIdDescending.forEach(KafkaNode::close);
        cluster.close();
    }
}
