package io.clustermirror.bench;

import io.clustermirror.testkit.KRaftConfigs;
import io.clustermirror.testkit.LaunchedNode;
import io.clustermirror.testkit.LaunchedNode.Role;
import org.apache.kafka.clients.admin.Admin;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * One KRaft node of the benchmark, a {@link LaunchedNode} started with the project's bin/ scripts
 * ({@code kafka-storage.sh format}, {@code cluster-mirror-server-start.sh}), so that its CPU time can be read from /proc.
 */
final class KafkaNode implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    final int nodeId;
    final int brokerPort; // -1 for a controller-only node
    final int controllerPort; // -1 for a broker-only node
    final Path dir;
    private final LaunchedNode node;

    KafkaNode(Path home, String cluster, String clusterId, Path dir, int nodeId, int brokerPort, int controllerPort) {
        this(home, cluster, clusterId, dir, nodeId, brokerPort, controllerPort, false);
    }

    /** The same; with {@code traceRequests} the node keeps Kafka's request log ({@link RequestTrace}). */
    KafkaNode(Path home, String cluster, String clusterId, Path dir, int nodeId, int brokerPort, int controllerPort,
              boolean traceRequests) {
        this.nodeId = nodeId;
        this.brokerPort = brokerPort;
        this.controllerPort = controllerPort;
        this.dir = dir;
        Role role = controllerPort < 0 ? Role.BROKER : brokerPort < 0 ? Role.CONTROLLER : Role.COMBINED;
        this.node = new LaunchedNode(home, cluster, clusterId, nodeId, role, dir, heap());
        String opts = System.getenv("BENCH_BROKER_OPTS"); // e.g. a JFR recording when profiling
        // Kafka's launcher turns an explicit GC into a concurrent cycle; the heap after a full GC (GcLog) needs a real one.
        String gc = GcLog.option(gcLog()) + " -XX:-ExplicitGCInvokesConcurrent";
        node.environment("KAFKA_OPTS", opts == null || opts.isBlank() ? gc : gc + " " + opts.replace("{dir}", dir.toString()));
        if (traceRequests) {
            node.environment("KAFKA_LOG4J_OPTS", RequestTrace.log4jOption(dir));
        }
    }

    /** The brokers' heap options: {@code -Dbench.broker.heap}, 1 GiB by default. */
    static String heap() {
        return System.getProperty("bench.broker.heap", "-Xmx1G -Xms1G");
    }

    String bootstrap() {
        if (brokerPort < 0) {
            throw new IllegalStateException("node " + nodeId + " is a controller only: it has no broker listener");
        }
        return "localhost:" + brokerPort;
    }

    boolean broker() {
        return brokerPort > 0;
    }

    /**
     * A client listener besides PLAINTEXT, e.g. one reached through a proxy.
     *
     * @param advertisedPort the port of localhost that clients are told to connect to: the listener's own or a proxy's
     */
    record Listener(String name, String protocol, int port, int advertisedPort) {
    }

    /** Writes server.properties, formats the log dir and starts the JVM (see {@link #awaitReady}). */
    void start(int quorumPort, Map<String, String> extra) {
        start(quorumPort, extra, List.of());
    }

    /** The same with more client listeners. */
    void start(int quorumPort, Map<String, String> extra, List<Listener> more) {
        boolean controller = controllerPort > 0;
        List<String> listeners = new ArrayList<>();
        List<String> advertised = new ArrayList<>();
        StringBuilder protocols = new StringBuilder("CONTROLLER:PLAINTEXT");
        if (broker()) {
            listeners.add("PLAINTEXT://localhost:" + brokerPort);
            advertised.add("PLAINTEXT://localhost:" + brokerPort);
            protocols.append(",PLAINTEXT:PLAINTEXT");
        }
        for (Listener l : more) {
            listeners.add(l.name() + "://localhost:" + l.port());
            advertised.add(l.name() + "://localhost:" + l.advertisedPort());
            protocols.append(',').append(l.name()).append(':').append(l.protocol());
        }
        if (controller) {
            listeners.add("CONTROLLER://localhost:" + controllerPort);
            advertised.add("CONTROLLER://localhost:" + controllerPort);
        }
        Map<String, String> config = new LinkedHashMap<>();
        config.put("controller.quorum.bootstrap.servers", "localhost:" + quorumPort);
        config.put("listeners", String.join(",", listeners));
        config.put("advertised.listeners", String.join(",", advertised));
        config.put("listener.security.protocol.map", protocols.toString());
        if (broker()) {
            config.put("inter.broker.listener.name", "PLAINTEXT");
        }
        config.put("controller.listener.names", "CONTROLLER");
        config.put("num.partitions", "1");
        // Internal topics on one replica: the benchmark measures the mirrored topics' replication only.
        config.putAll(KRaftConfigs.internalTopics(1));
        config.putAll(extra);
        try {
            node.writeProperties("Written by the benchmark harness.", config);
            node.format(controller ? List.of("--standalone") : List.of());
            node.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting " + node, e);
        }
    }

    /** Waits until the node is ready ({@link LaunchedNode#awaitReady}); fails with its output's end if it exits or times out. */
    void awaitReady(Admin admin) {
        try {
            node.awaitReady(admin, START_TIMEOUT);
        } catch (TimeoutException e) {
            throw new IllegalStateException(e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + node, e);
        }
    }

    /** The JVM's GC log ({@link GcLog}). */
    Path gcLog() {
        return dir.resolve("gc.log");
    }

    /** The end of the node's output, for an error message. */
    String tail() {
        return LaunchedNode.tail(node.output(), 15);
    }

    boolean alive() {
        return node.alive();
    }

    long pid() {
        return node.pid();
    }

    /** Stops ({@code pause}) or continues the process with SIGSTOP / SIGCONT: its sockets stay open, it runs nothing. */
    void pause(boolean pause) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", pause ? "-STOP" : "-CONT", String.valueOf(node.pid()))
            .redirectErrorStream(true).start();
        String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (kill.waitFor() != 0) {
            throw new IOException("kill " + (pause ? "-STOP " : "-CONT ") + node.pid() + " failed: " + out);
        }
    }

    /** CPU seconds (user + system) of the JVM so far. */
    double cpuSeconds() {
        return ProcCpu.cpuSeconds(node.pid());
    }

    @Override
    public void close() {
        try {
            node.terminate();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
