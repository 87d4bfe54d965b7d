package io.clustermirror.bench;

import io.clustermirror.testkit.FreePorts;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/** A KRaft cluster of separate JVMs: node 1 is combined (controller + broker) or a dedicated controller, further nodes are brokers. */
final class BenchCluster implements AutoCloseable {
    final String name;
    final List<KafkaNode> nodes = new ArrayList<>();
    private final Path home;
    private final Path dir;
    private final Map<String, String> extra;
    /** Whether the brokers keep Kafka's request log ({@link RequestTrace}). */
    private final boolean traceRequests;
    private final String clusterId = Uuid.randomUuid().toString();
    /** Node ids are never reused: a removed broker's id stays registered with the controller for a while. */
    private final AtomicInteger nextId = new AtomicInteger(1);
    private Admin admin;

    private BenchCluster(Path home, Path dir, String name, Map<String, String> extra, boolean traceRequests) {
        this.home = home;
        this.dir = dir;
        this.name = name;
        this.extra = extra;
        this.traceRequests = traceRequests;
    }

    static BenchCluster start(Path home, Path workDir, String name, int brokers, Map<String, String> extra) {
        return start(home, workDir, name, brokers, extra, List.of());
    }

    /** The same, node 1 with more client listeners. */
    static BenchCluster start(Path home, Path workDir, String name, int brokers, Map<String, String> extra,
                              List<KafkaNode.Listener> firstNodeListeners) {
        return start(home, workDir, name, extra, true, brokers, firstNodeListeners, false);
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

    /** Node 1 (combined, or a controller only), then broker-only nodes up to {@code brokers} brokers in all. */
    private static BenchCluster start(Path home, Path workDir, String name, Map<String, String> extra, boolean combined,
                                      int brokers, List<KafkaNode.Listener> firstNodeListeners, boolean traceRequests) {
        BenchCluster c = new BenchCluster(home, workDir.resolve(name), name, extra, traceRequests);
        try {
            KafkaNode first = new KafkaNode(home, name, c.clusterId, c.dir.resolve("node1"), c.nextId.getAndIncrement(),
                combined ? FreePorts.next() : -1, FreePorts.next(), combined && traceRequests);
            c.nodes.add(first);
            first.start(first.controllerPort, extra, firstNodeListeners);
            for (int i = combined ? 2 : 1; i <= brokers; i++) {
                c.addBroker();
            }
            c.awaitBrokers(brokers);
            return c;
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** Starts one more broker-only node and returns it (without waiting for it). */
    KafkaNode addBroker() {
        int id = nextId.getAndIncrement();
        KafkaNode n = new KafkaNode(home, name, clusterId, dir.resolve("node" + id), id, FreePorts.next(), -1, traceRequests);
        nodes.add(n);
        n.start(nodes.get(0).controllerPort, extra);
        return n;
    }

    String bootstrap() {
        return firstBroker().bootstrap();
    }

    /** The broker-only or combined node of the lowest id. */
    KafkaNode firstBroker() {
        return nodes.stream().filter(KafkaNode::broker).findFirst()
            .orElseThrow(() -> new IllegalStateException("the " + name + " cluster has no broker"));
    }

    /** The request logs of the brokers ({@link RequestTrace}; none unless the cluster was started to trace). */
    List<Path> requestLogs() {
        return nodes.stream().filter(KafkaNode::broker).map(n -> RequestTrace.log(n.dir)).toList();
    }

    /** CPU seconds of the nodes that are brokers (a dedicated controller left out). */
    double brokerCpuSeconds() {
        return nodes.stream().filter(KafkaNode::broker).mapToDouble(KafkaNode::cpuSeconds).sum();
    }

    KafkaNode node(int id) {
        return nodes.stream().filter(n -> n.nodeId == id).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("no node " + id + " in the " + name + " cluster"));
    }

    /** Stops a broker added by {@link #addBroker} and deletes its data. */
    void removeBroker(KafkaNode broker) throws IOException {
        broker.close();
        nodes.remove(broker);
        Bench.deleteTree(broker.dir);
    }

    /** The GC logs of the cluster's JVMs, named {@code <prefix>-node<id>}. */
    Map<String, Path> gcLogs(String prefix) {
        Map<String, Path> logs = new java.util.LinkedHashMap<>();
        nodes.forEach(n -> logs.put(prefix + "-node" + n.nodeId, n.gcLog()));
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
            for (KafkaNode node : nodes) {
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
        for (int i = nodes.size() - 1; i >= 0; i--) {
            nodes.get(i).close();
        }
    }
}
