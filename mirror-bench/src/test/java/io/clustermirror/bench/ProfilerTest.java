package io.clustermirror.bench;

import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Profile summaries of a real Flight Recorder recording of this JVM, of async-profiler's stacks and of a launched JVM. */
class ProfilerTest {

    @Test
    void collapsedStacksAreCountedByTopFrameLayerThreadAndFirstOwnFrame(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("window.collapsed");
        Files.write(file, List.of(
            "[mirror-fetcher-bench-2 tid=41];java.lang.Thread.run;io.clustermirror.broker.fetch.SourceFetcher.doWork;"
                + "org.apache.kafka.storage.internals.log.UnifiedLog.append;sun.nio.ch.FileDispatcherImpl.write0;"
                + "__libc_write;ksys_write_[k];copy_user_enhanced_fast_string_[k] 60",
            "[mirror-fetcher-bench-2 tid=41];java/lang/Thread.run;io/clustermirror/broker/fetch/SourceFetcher.doWork_[j];"
                + "org/apache/kafka/common/utils/Crc32C.compute_[i] 25",
            "[G1 Conc#0 tid=12];GangWorker::run;G1ConcurrentMark::mark_from_roots 10",
            "[data-plane-kafka-network-thread-1-ListenerName(PLAINTEXT)-PLAINTEXT-0 tid=50];java.lang.Thread.run;"
                + "sun.nio.ch.EPoll.wait;epoll_wait 5"));

        Map<String, Object> summary = Profiler.summariseCollapsed(file);

        assertEquals("native", summary.get("sampler"));
        assertEquals(100L, summary.get("samples"));
        assertEquals(Map.of("copy_user_enhanced_fast_string_[k]", 60.0, "org.apache.kafka.common.utils.Crc32C.compute", 25.0,
            "G1ConcurrentMark::mark_from_roots", 10.0, "epoll_wait", 5.0), percents(summary, "top_frames"));
        assertEquals(Map.of("kernel", 60.0, "Java", 25.0, "JVM (C++)", 10.0, "other native code (libc, JNI)", 5.0),
            percents(summary, "layers"));
        assertEquals(Map.of("mirror-fetcher-bench-N", 85.0, "GN Conc#N", 10.0,
            "data-plane-kafka-network-thread-N-ListenerName(PLAINTEXT)-PLAINTEXT-N", 5.0), percents(summary, "threads"));
        assertEquals(Map.of("org.apache.kafka.storage.internals.log.UnifiedLog.append", 60.0,
            "org.apache.kafka.common.utils.Crc32C.compute", 25.0, "(no Kafka or mirror frame: JDK, JVM or kernel only)", 15.0),
            percents(summary, "first_kafka_or_mirror_frames"));
    }

    @Test
    void anUnknownSamplerIsRefusedNamingTheValues(@TempDir Path dir) {
        assertEquals(null, Profiler.of("false", "profile", dir));
        assertEquals(Profiler.Sampler.JFR, Profiler.of("true", "profile", dir).sampler());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Profiler.of("perf", "scale.profile", dir));
        assertEquals("scale.profile takes false, true (jfr), jfr or native, not perf", e.getMessage());
    }

    /** async-profiler loaded into a launched JVM that computes and writes a file: its Java loop and its kernel time. */
    @Test
    void aLaunchedJvmIsSampledThroughJavaAndKernelFrames(@TempDir Path dir) throws Exception {
        String arch = System.getProperty("os.arch");
        assumeTrue(System.getProperty("os.name").equals("Linux") && (arch.equals("amd64") || arch.equals("aarch64")),
            "async-profiler's library is for Linux on x86-64 or arm64");
        Profiler profiler = Profiler.of("native", "profile", dir);
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process busy = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
            BusyWriter.class.getName(), dir.resolve("written").toString()).inheritIO().start();
        try {
            // The launched JVM answers the attach API once it has started: retry until it does, within a bound.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            boolean started;
            while (!(started = profiler.start(busy.pid())) && System.nanoTime() < deadline) {
                assertTrue(busy.isAlive(), () -> "the busy JVM exited: " + busy.exitValue());
                Thread.sleep(200);
            }
            assertTrue(started, "async-profiler started in the launched JVM");
            Map<String, Object> summary;
            int window = 0;
            do {
                Thread.sleep(1000); // the window sampled, not a wait for a condition
                summary = profiler.stop(busy.pid(), dir.resolve("window-" + window++));
                assertNotNull(summary, "a profile was written");
            } while (!percents(summary, "first_kafka_or_mirror_frames").containsKey(BusyWriter.class.getName() + ".main")
                && System.nanoTime() < deadline && profiler.start(busy.pid()));
            assertEquals("native", summary.get("sampler"));
            assertTrue(percents(summary, "first_kafka_or_mirror_frames").containsKey(BusyWriter.class.getName() + ".main"),
                "the busy loop is this project's code: " + summary);
            assertTrue(percents(summary, "layers").containsKey("Java"), "Java frames: " + summary);
            if (kernelFramesVisible()) {
                assertTrue(percents(summary, "layers").containsKey("kernel"), "the writes' kernel frames: " + summary);
            }
        } finally {
            busy.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** Whether perf events show this machine's kernel frames to this user: root, or a paranoia of at most 1. */
    private static boolean kernelFramesVisible() throws IOException {
        Path paranoid = Path.of("/proc/sys/kernel/perf_event_paranoid");
        return "root".equals(System.getProperty("user.name"))
            || Files.exists(paranoid) && Integer.parseInt(Files.readString(paranoid).trim()) <= 1;
    }

    /** A JVM for the native profile: computes, and writes and rewrites a file, for up to two minutes. */
    static final class BusyWriter {
        public static void main(String[] args) throws IOException {
            byte[] block = new byte[1 << 16];
            long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            long x = 0;
            while (System.nanoTime() < until) {
                try (OutputStream out = Files.newOutputStream(Path.of(args[0]), StandardOpenOption.CREATE,
                        StandardOpenOption.TRUNCATE_EXISTING)) {
                    for (int i = 0; i < 64; i++) {
                        x = busy(x);
                        block[i] = (byte) x;
                        out.write(block);
                    }
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Double> percents(Map<String, Object> summary, String table) {
        return ((List<Map<String, Object>>) summary.get(table)).stream().collect(Collectors.toMap(
            row -> (String) row.get("method"), row -> ((Number) row.get("percent")).doubleValue()));
    }

    @Test
    void samplesAreCountedByTopFrameAndByTheFirstOwnFrame(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("busy.jfr");
        Map<String, Object> summary;
        try (Recording recording = new Recording()) {
            recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
            recording.start();
            // The sampler of a JVM's first recording may take a while to start on a loaded machine: stay busy until the
            // recording holds samples of the busy loop (a running recording can be dumped), within a bound.
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            do {
                busyFor(Duration.ofMillis(500));
                recording.dump(file);
                summary = Profiler.summarise(file);
            } while (!sampledTheBusyLoop(summary) && System.nanoTime() < deadline);
        }
        assertTrue(((Number) summary.get("samples")).longValue() > 0, "samples: " + summary);
        assertTrue(sampledTheBusyLoop(summary), "the busy loop is this project's code: " + summary);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> owners = (List<Map<String, Object>>) summary.get("first_kafka_or_mirror_frames");
        double percent = owners.stream().mapToDouble(row -> ((Number) row.get("percent")).doubleValue()).sum();
        assertTrue(percent > 99 && percent < 101, "the shares add up: " + percent);
    }

    /** Whether a sample's first own frame is this test's busy loop (the summary itself runs this project's code too). */
    private static boolean sampledTheBusyLoop(Map<String, Object> summary) {
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> owners = (List<Map<String, Object>>) summary.get("first_kafka_or_mirror_frames");
        return owners.stream().anyMatch(row -> row.get("method").toString().startsWith(ProfilerTest.class.getName() + "."));
    }

    private static void busyFor(Duration duration) {
        long sum = 0;
        long until = System.nanoTime() + duration.toNanos();
        while (System.nanoTime() < until) {
            sum += busy(sum);
        }
        assertTrue(sum != 42, "keeps the loop");
    }

    private static long busy(long seed) {
        long x = seed;
        for (int i = 0; i < 10_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }
}
