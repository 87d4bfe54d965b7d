package io.clustermirror.testsupport;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One KRaft node (broker, controller or both) running as its own JVM, started with a checkout's {@code bin/} scripts
 * (or any command that execs a JVM) on its own directory: {@code server.properties}, {@code data/} (its log dirs),
 * {@code logs/} ({@code LOG_DIR}), {@code format.out} and {@code server.out} (console output, appended across restarts,
 * each start behind a marker line). The launcher ({@code bin/cluster-mirror-server-start.sh}) execs the JVM, so the
 * {@link Process} is the node itself: {@link #kill()} is a {@code kill -9} (no shutdown hook, no clean shutdown
 * marker) and {@link #terminate()} a SIGTERM (Kafka's clean shutdown). A shutdown hook kills every node still running
 * when the JVM exits. Used by the launched-process tests, the chaos runner and the benchmark.
 */
public final class LaunchedNode {
    private static final Logger log = LoggerFactory.getLogger(LaunchedNode.class);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);
    /** Formatting starts a JVM too, several at once for a cluster: on a busy 2-core machine that takes a while. */
    private static final Duration FORMAT_TIMEOUT = Duration.ofSeconds(120);
    private static final String START_MARKER = "=== start of node ";
    private static final String IMAGE_LOADED = "Mirror image loaded: ";
    /** Every node process started and not yet seen to exit: killed if the JVM exits first. */
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly), "launched-node-reaper"));
    }

    private final Path checkout;
    private final String cluster;
    private final String clusterId;
    private final int id;
    private final NodeRole role;
    private final Path dir;
    private final Map<String, String> environment = new LinkedHashMap<>();
    // Guarded by this.
    private Process process;

    /**
     * A node of {@code cluster} (a name for logs) whose KRaft cluster id is {@code clusterId}, in {@code dir}, run from
     * {@code checkout}'s {@code bin/} with {@code heap} as {@code KAFKA_HEAP_OPTS}.
     */
    public LaunchedNode(Path checkout, String cluster, String clusterId, int id, NodeRole role, Path dir, String heap) {
        this.checkout = checkout;
        this.cluster = cluster;
        this.clusterId = clusterId;
        this.id = id;
        this.role = role;
        this.dir = dir;
        environment.put("KAFKA_HEAP_OPTS", heap);
        environment.put("LOG_DIR", dir.resolve("logs").toString());
    }

    /** Kills {@code process} (a node's, or a helper's such as a MirrorMaker JVM) if this JVM exits while it runs. */
    public static void killOnExit(Process process) {
        LIVE.add(process);
        process.onExit().thenAccept(LIVE::remove);
    }

    /**
     * The checkout holding {@code bin/} and the built {@code mirror-server/target/lib}: the working directory or a parent
     * (a test runs in its module's directory).
     */
    public static Path findCheckout() {
        Path start = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        for (Path d = start; d != null; d = d.getParent()) {
            if (Files.isExecutable(d.resolve("bin/cluster-mirror-server-start.sh"))) {
                if (!Files.isDirectory(d.resolve("mirror-server/target/lib"))) {
                    throw new IllegalStateException("Cluster Mirror is not built in " + d + ": run 'mvn -B install -DskipTests' first");
                }
                return d;
            }
        }
        throw new IllegalStateException("No Cluster Mirror checkout (bin/cluster-mirror-server-start.sh) in " + start + " or its parents");
    }

    public int id() {
        return id;
    }

    public NodeRole role() {
        return role;
    }

    public Path dir() {
        return dir;
    }

    public Path properties() {
        return dir.resolve("server.properties");
    }

    public Path output() {
        return dir.resolve("server.out");
    }

    public Path dataDir() {
        return dir.resolve("data");
    }

    /** The directory of this node's replica of {@code partition} (it may not exist yet). */
    public Path partitionDir(TopicPartition partition) {
        return dataDir().resolve(partition.toString());
    }

    /** An environment variable for every process of this node started from now on, e.g. {@code KAFKA_OPTS}. */
    public synchronized LaunchedNode environment(String name, String value) {
        environment.put(name, value);
        return this;
    }

    /**
     * Creates the node's directory and writes {@code server.properties}: {@code process.roles}, {@code node.id} and
     * {@code log.dirs} from this node, then {@code config} in its order (which may override them).
     */
    public void writeProperties(String header, Map<String, String> config) throws IOException {
        Files.createDirectories(dir);
        Map<String, String> all = new LinkedHashMap<>();
        all.put("process.roles", role.processRoles());
        all.put("node.id", String.valueOf(id));
        all.put("log.dirs", dataDir().toString());
        all.putAll(config);
        Files.writeString(properties(), all.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining("\n", "# " + header + "\n", "\n")), StandardCharsets.UTF_8);
    }

    /** A {@code bin/} script with its arguments, to run in the node's directory with its environment. */
    public synchronized ProcessBuilder script(String script, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(checkout.resolve("bin").resolve(script).toString());
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile());
        builder.environment().putAll(environment);
        return builder;
    }

    /** {@code bin/kafka-storage.sh format} of the node's log dir with the cluster id, plus {@code args}. */
    public ProcessBuilder formatCommand(List<String> args) {
        List<String> all = new ArrayList<>(List.of("format", "-t", clusterId, "-c", properties().toString()));
        all.addAll(args);
        return script("kafka-storage.sh", all);
    }

    /** {@code bin/cluster-mirror-server-start.sh} on the node's properties, each of {@code overrides} as an {@code --override}. */
    public ProcessBuilder launcherCommand(Map<String, String> overrides) {
        List<String> args = new ArrayList<>(List.of(properties().toString()));
        overrides.forEach((k, v) -> args.addAll(List.of("--override", k + "=" + v)));
        return script("cluster-mirror-server-start.sh", args);
    }

    /** Formats the node's log dir ({@link #formatCommand}) and returns once that is done. */
    public void format(List<String> args) throws IOException, InterruptedException {
        awaitFormat(startFormat(formatCommand(args)));
    }

    /** Starts a format command with its output in {@code format.out}; {@link #awaitFormat} waits for it. */
    public Process startFormat(ProcessBuilder format) throws IOException {
        Files.createDirectories(dir);
        return format.redirectErrorStream(true).redirectOutput(dir.resolve("format.out").toFile()).start();
    }

    /** Waits until a format command exited, failing with its output if it did not succeed in time. */
    public void awaitFormat(Process format) throws IOException, InterruptedException {
        Path out = dir.resolve("format.out");
        if (!format.waitFor(FORMAT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            format.destroyForcibly();
            throw new IOException("formatting " + this + " timed out:\n" + tail(out, 20));
        }
        if (format.exitValue() != 0) {
            throw new IOException("formatting " + this + " failed (exit " + format.exitValue() + "):\n" + tail(out, 20));
        }
    }

    /** Starts the node with the launcher ({@link #launcherCommand} without overrides) and returns at once. */
    public void start() throws IOException {
        start(launcherCommand(Map.of()));
    }

    /**
     * Starts the node with {@code command} (which must exec the node's JVM), its output appended to {@code server.out}
     * behind a start marker, and returns at once (see {@link #awaitReady}).
     */
    public synchronized void start(ProcessBuilder command) throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(this + " is running (pid " + process.pid() + ")");
        }
        Files.createDirectories(dir);
        Files.writeString(output(), "\n" + START_MARKER + id + " ===\n", StandardCharsets.UTF_8,
            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        process = command.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(output().toFile())).start();
        killOnExit(process);
        log.info("{} starting (pid {})", this, process.pid());
    }

    /** Whether the node has been started at least once. */
    public synchronized boolean started() {
        return process != null;
    }

    public synchronized boolean alive() {
        return process != null && process.isAlive();
    }

    /** The process id of the node's last start. */
    public synchronized long pid() {
        return lastProcess().pid();
    }

    /** The exit status of the node's last start, which has exited. */
    public synchronized int exitValue() {
        return lastProcess().exitValue();
    }

    /** Waits up to {@code timeout} for the node's process to exit; true if it did. */
    public boolean waitForExit(Duration timeout) throws InterruptedException {
        Process p;
        synchronized (this) {
            p = lastProcess();
        }
        return p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private Process lastProcess() {
        if (process == null) {
            throw new IllegalStateException(this + " was never started");
        }
        return process;
    }

    /** SIGKILL: the JVM dies at once, as in a power cut of the process. Returns once it is gone; nothing if not running. */
    public void kill() throws InterruptedException {
        Process p = running();
        if (p == null) {
            return;
        }
        p.destroyForcibly();
        if (!p.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            throw new IllegalStateException(this + " (pid " + p.pid() + ") did not die on SIGKILL within " + STOP_TIMEOUT);
        }
        log.info("{} killed with SIGKILL (pid {}, exit {})", this, p.pid(), p.exitValue());
    }

    /**
     * SIGTERM: Kafka's clean shutdown (the launcher closes the extension first). Returns true once the process exited,
     * or false if it did not within a minute and was killed; true at once if it is not running.
     */
    public boolean terminate() throws InterruptedException {
        Process p = running();
        if (p == null) {
            return true;
        }
        p.destroy();
        if (!p.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            log.warn("{} did not exit within {} of SIGTERM: killing it", this, STOP_TIMEOUT);
            p.destroyForcibly().waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            return false;
        }
        log.info("{} stopped with SIGTERM (exit {})", this, p.exitValue());
        return true;
    }

    private synchronized Process running() {
        return process != null && process.isAlive() ? process : null;
    }

    /**
     * Waits until the node is ready, and fails early if it exits: its extension attached (a broker) or reading the
     * mirror state through the brokers (a controller-only node), the mirror image loaded (until then the node refuses
     * client writes, failing closed), each once per start; and a broker registered and unfenced, as {@code admin} sees.
     *
     * @throws TimeoutException if it is not ready within {@code timeout}, with the end of its output
     * @throws IllegalStateException if it exited, with the end of its output
     */
    public void awaitReady(Admin admin, Duration timeout) throws TimeoutException, InterruptedException {
        String attached = role.broker() ? "Cluster Mirror extension attached to broker " + id + " of cluster"
            : "Controller " + id + " of cluster " + clusterId + " reads the mirror state";
        try {
            TestUtils.await(() -> {
                if (!alive()) {
                    return true;
                }
                long starts = countOutputLines(START_MARKER);
                return countOutputLines(attached) == starts && countOutputLines(IMAGE_LOADED) == starts
                    && (!role.broker() || admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream().anyMatch(n -> n.id() == id));
            }, timeout, this + " to be ready");
        } catch (TimeoutException e) {
            throw new TimeoutException(e.getMessage() + "\n" + outputEnd());
        }
        if (!alive()) {
            throw new IllegalStateException(this + " exited during startup with status " + exitValue() + "\n" + outputEnd());
        }
    }

    /**
     * Waits until the node's broker is registered and unfenced, as {@code admin} sees, for a node without Cluster Mirror
     * (a stock Kafka of another release); fails early if it exits.
     *
     * @throws TimeoutException if it is not registered within {@code timeout}, with the end of its output
     * @throws IllegalStateException if it exited, with the end of its output
     */
    public void awaitRegistered(Admin admin, Duration timeout) throws TimeoutException, InterruptedException {
        try {
            TestUtils.await(() -> !alive()
                || admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream().anyMatch(n -> n.id() == id), timeout, this + " to register");
        } catch (TimeoutException e) {
            throw new TimeoutException(e.getMessage() + "\n" + outputEnd());
        }
        if (!alive()) {
            throw new IllegalStateException(this + " exited during startup with status " + exitValue() + "\n" + outputEnd());
        }
    }

    private String outputEnd() {
        return "--- last lines of " + this + "'s output (" + output() + ") ---\n" + tail(output(), 30);
    }

    /** How many lines of the node's output contain {@code marker}, across restarts. */
    public long countOutputLines(String marker) throws IOException {
        if (!Files.exists(output())) {
            return 0;
        }
        try (Stream<String> lines = Files.lines(output(), StandardCharsets.UTF_8)) {
            return lines.filter(l -> l.contains(marker)).count();
        }
    }

    /** What the node printed (its log, at INFO) since it was last started. */
    public String outputSinceLastStart() throws IOException {
        String all = Files.readString(output(), StandardCharsets.UTF_8);
        return all.substring(Math.max(0, all.lastIndexOf(START_MARKER)));
    }

    /** A console output's error lines (the launcher's one-line {@code ERROR:} and logged errors), then its last lines. */
    public static String tail(Path file, int lines) {
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

    @Override
    public String toString() {
        return cluster + " node " + id;
    }
}
