package io.clustermirror.bench;

import io.clustermirror.testsupport.LaunchedNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * One KRaft node of the benchmark: a {@link LaunchedNode} of a {@link BenchCluster} (started with the project's bin/
 * scripts), with what the benchmark measures of it: its CPU time from /proc, its GC log, and pausing it.
 */
final class KafkaNode implements AutoCloseable {
    final int nodeId;
    final Path dir;
    private final LaunchedNode node;

    /**
     * The benchmark's view of {@code node}, which must not have started yet: its JVM gets a GC log and
     * {@code BENCH_BROKER_OPTS}, and with {@code traceRequests} keeps Kafka's request log ({@link RequestTrace}).
     */
    KafkaNode(LaunchedNode node, boolean traceRequests) {
        this.nodeId = node.id();
        this.dir = node.dir();
        this.node = node;
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

    /** Whether the node has the broker role (a combined node included). */
    boolean broker() {
        return node.role().broker();
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

    /** SIGTERM: the node's clean shutdown. */
    @Override
    public void close() {
        try {
            node.terminate();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
