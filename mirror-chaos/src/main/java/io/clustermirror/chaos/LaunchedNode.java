package io.clustermirror.chaos;

import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * One KRaft node (broker, controller or combined) running as its own JVM, started with the checkout's {@code bin/}
 * scripts on its own directory: {@code server.properties}, {@code data/} (log dirs), {@code logs/} ({@code LOG_DIR})
 * and {@code server.out} (console output, appended across restarts).
 *
 * <p>Every node runs with the Cluster Mirror launcher ({@code cluster-mirror-server-start.sh}: stock Kafka with the
 * extension attached), which execs the JVM, so the {@link Process} is the node itself: {@link #kill()} is a
 * {@code kill -9} (no shutdown hook, no clean shutdown marker) and {@link #terminate()} a SIGTERM (clean shutdown).
 */
final class LaunchedNode {
    private static final Logger log = LoggerFactory.getLogger(LaunchedNode.class);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

    private final Path home;
    private final String cluster;
    private final int id;
    private final Path dir;
    private final String heap;
    /** Extra JVM options ({@code KAFKA_OPTS}): the test-only system properties of a run, else empty. */
    private final String jvmOptions;
    private Process process;

    LaunchedNode(Path home, String cluster, int id, Path dir, String heap, String jvmOptions) {
        this.home = home;
        this.cluster = cluster;
        this.id = id;
        this.dir = dir;
        this.heap = heap;
        this.jvmOptions = jvmOptions;
    }

    int id() {
        return id;
    }

    Path dir() {
        return dir;
    }

    Path output() {
        return dir.resolve("server.out");
    }

    /** The directory of this node's replica of {@code partition} (it may not exist yet). */
    Path partitionDir(TopicPartition partition) {
        return dir.resolve("data").resolve(partition.toString());
    }

    /** Writes {@code server.properties} (with {@code node.id} and {@code log.dirs} added) and formats the log dir. */
    void format(String clusterId, Map<String, String> config, List<String> formatArgs) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        String properties = "# Written by the chaos runner for node " + id + " of the " + cluster + " cluster.\n"
            + "node.id=" + id + "\n"
            + "log.dirs=" + dir.resolve("data") + "\n"
            + config.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining("\n")) + "\n";
        Path file = dir.resolve("server.properties");
        Files.writeString(file, properties, StandardCharsets.UTF_8);
        List<String> command = new ArrayList<>(List.of(home.resolve("bin/kafka-storage.sh").toString(), "format",
            "-t", clusterId, "-c", file.toString()));
        command.addAll(formatArgs);
        Path out = dir.resolve("format.out");
        Process format = environment(new ProcessBuilder(command)).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!format.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            format.destroyForcibly();
            throw new IOException("formatting node " + id + " of " + cluster + " timed out");
        }
        if (format.exitValue() != 0) {
            throw new IOException("formatting node " + id + " of " + cluster + " failed: " + Files.readString(out, StandardCharsets.UTF_8));
        }
    }

    private ProcessBuilder environment(ProcessBuilder pb) {
        pb.directory(dir.toFile());
        pb.environment().put("KAFKA_HEAP_OPTS", heap);
        pb.environment().put("KAFKA_OPTS", jvmOptions);
        pb.environment().put("LOG_DIR", dir.resolve("logs").toString());
        // What the launcher does without KAFKA_LOG4J_OPTS, spelled out: server.log, cluster-mirror.log, ... in LOG_DIR.
        pb.environment().put("KAFKA_LOG4J_OPTS", "-Dlog4j2.configurationFile=" + home.resolve("config/log4j2.yaml"));
        return pb;
    }

    /** Starts the node's JVM and returns at once; readiness is for the cluster to judge. */
    synchronized void start() throws IOException {
        if (alive()) {
            throw new IllegalStateException(this + " is running (pid " + process.pid() + ")");
        }
        Files.writeString(output(), "\n=== start of node " + id + " ===\n", StandardCharsets.UTF_8,
            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        List<String> command = List.of(home.resolve("bin/cluster-mirror-server-start.sh").toString(), dir.resolve("server.properties").toString());
        process = environment(new ProcessBuilder(command)).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(output().toFile())).start();
        log.info("{} starting (pid {})", this, process.pid());
    }

    synchronized boolean alive() {
        return process != null && process.isAlive();
    }

    /** kill -9: the JVM dies at once, as in a power cut of the process. Returns once it is gone. */
    void kill() throws InterruptedException {
        stop(true);
    }

    /** SIGTERM: Kafka's clean shutdown (the launcher closes the extension first). Returns once the process exited. */
    void terminate() throws InterruptedException {
        stop(false);
    }

    private void stop(boolean force) throws InterruptedException {
        Process p;
        synchronized (this) {
            p = process;
        }
        if (p == null || !p.isAlive()) {
            return;
        }
        if (force) {
            p.destroyForcibly();
        } else {
            p.destroy();
        }
        if (!p.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            log.warn("{} did not exit within {} of {}: killing it", this, STOP_TIMEOUT, force ? "SIGKILL" : "SIGTERM");
            p.destroyForcibly().waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
        log.info("{} {} (exit {})", this, force ? "killed with SIGKILL" : "stopped with SIGTERM", p.exitValue());
    }

    /** Lines of the node's console output that contain {@code marker}, across restarts. */
    long countOutputLines(String marker) throws IOException {
        if (!Files.exists(output())) {
            return 0;
        }
        try (var lines = Files.lines(output(), StandardCharsets.UTF_8)) {
            return lines.filter(l -> l.contains(marker)).count();
        }
    }

    @Override
    public String toString() {
        return cluster + " node " + id;
    }
}
