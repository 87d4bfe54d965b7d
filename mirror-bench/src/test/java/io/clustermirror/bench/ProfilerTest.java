package io.clustermirror.bench;

import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The profile summary of a real Flight Recorder recording of this JVM. */
class ProfilerTest {

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
