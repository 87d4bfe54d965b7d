package io.clustermirror.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One KRaft node started as its own JVM with the project's bin/ scripts ({@code kafka-storage.sh format},
 * {@code cluster-mirror-server-start.sh}), so that its CPU time can be read from /proc.
 */
final class KafkaNode implements AutoCloseable {
    /** Every JVM the harness started and has not stopped: killed by a shutdown hook if the harness exits early. */
    private static final java.util.Set<Process> LIVE = java.util.concurrent.ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly),
            "bench-process-reaper"));
    }

    /** Registers a child JVM for the shutdown hook. */
    static void track(Process p) {
        LIVE.add(p);
    }

    static void untrack(Process p) {
        LIVE.remove(p);
    }

    final int nodeId;
    final int brokerPort;
    final int controllerPort; // -1 for a broker-only node
    final Path dir;
    private final Path home;
    private Process process;

    KafkaNode(Path home, Path dir, int nodeId, int brokerPort, int controllerPort) {
        this.home = home;
        this.dir = dir;
        this.nodeId = nodeId;
        this.brokerPort = brokerPort;
        this.controllerPort = controllerPort;
    }

    String bootstrap() {
        return "localhost:" + brokerPort;
    }

    /** Writes server.properties, formats the log dir and starts the JVM (does not wait for readiness). */
    void start(String clusterId, int quorumPort, Map<String, String> extra) {
        try {
            Files.createDirectories(dir);
            boolean controller = controllerPort > 0;
            StringBuilder p = new StringBuilder();
            p.append("process.roles=").append(controller ? "broker,controller" : "broker").append('\n');
            p.append("node.id=").append(nodeId).append('\n');
            p.append("controller.quorum.bootstrap.servers=localhost:").append(quorumPort).append('\n');
            String listeners = "PLAINTEXT://localhost:" + brokerPort
                + (controller ? ",CONTROLLER://localhost:" + controllerPort : "");
            p.append("listeners=").append(listeners).append('\n');
            p.append("advertised.listeners=").append(listeners).append('\n');
            p.append("listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n");
            p.append("inter.broker.listener.name=PLAINTEXT\ncontroller.listener.names=CONTROLLER\n");
            p.append("log.dirs=").append(dir.resolve("data")).append('\n');
            p.append("num.partitions=1\noffsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n");
            p.append("transaction.state.log.min.isr=1\nshare.coordinator.state.topic.replication.factor=1\n");
            p.append("share.coordinator.state.topic.min.isr=1\ngroup.initial.rebalance.delay.ms=0\n");
            extra.forEach((k, v) -> p.append(k).append('=').append(v).append('\n'));
            Path props = dir.resolve("server.properties");
            Files.writeString(props, p.toString());

            List<String> format = new ArrayList<>(List.of(home.resolve("bin/kafka-storage.sh").toString(), "format",
                "-t", clusterId, "-c", props.toString()));
            if (controller) {
                format.add("--standalone");
            }
            run(format, dir.resolve("format.out"), 120);

            ProcessBuilder pb = new ProcessBuilder(home.resolve("bin/cluster-mirror-server-start.sh").toString(),
                props.toString());
            pb.environment().put("LOG_DIR", dir.resolve("logs").toString());
            pb.environment().put("KAFKA_HEAP_OPTS", System.getProperty("bench.broker.heap", "-Xmx1G -Xms1G"));
            String opts = System.getenv("BENCH_BROKER_OPTS"); // e.g. a JFR recording when profiling
            String gc = GcLog.option(gcLog());
            pb.environment().put("KAFKA_OPTS", opts == null || opts.isBlank() ? gc
                : gc + " " + opts.replace("{dir}", dir.toString()));
            pb.redirectErrorStream(true).redirectOutput(dir.resolve("server.out").toFile());
            process = pb.start();
            track(process);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The JVM's GC log ({@link GcLog}). */
    Path gcLog() {
        return dir.resolve("gc.log");
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    long pid() {
        return process.pid();
    }

    /** CPU seconds (user + system) of the JVM so far. */
    double cpuSeconds() {
        return ProcCpu.cpuSeconds(process.pid());
    }

    String tail() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("server.out"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException e) {
            return "(no output)";
        }
    }

    @Override
    public void close() {
        if (process == null) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        untrack(process);
        process = null;
    }

    static void run(List<String> cmd, Path out, long timeoutSec) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            if (!p.waitFor(timeoutSec, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("timed out: " + cmd);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + cmd);
        }
        if (p.exitValue() != 0) {
            throw new IOException("failed (" + p.exitValue() + "): " + cmd + ": " + Files.readString(out));
        }
    }
}
