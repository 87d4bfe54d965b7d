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
        try (Recording recording = new Recording()) {
            recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
            recording.start();
            long sum = 0;
            long until = System.nanoTime() + Duration.ofMillis(500).toNanos();
            while (System.nanoTime() < until) {
                sum += busy(sum);
            }
            recording.stop();
            recording.dump(file);
            assertTrue(sum != 42, "keeps the loop");
        }
        Map<String, Object> summary = Profiler.summarise(file);
        assertTrue(((Number) summary.get("samples")).longValue() > 0, "samples: " + summary);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> owners = (List<Map<String, Object>>) summary.get("first_kafka_or_mirror_frames");
        assertTrue(owners.stream().anyMatch(row -> row.get("method").equals(ProfilerTest.class.getName() + ".busy")
            || row.get("method").equals(ProfilerTest.class.getName() + ".samplesAreCountedByTopFrameAndByTheFirstOwnFrame")),
            "the busy loop is this project's code: " + owners);
        double percent = owners.stream().mapToDouble(row -> ((Number) row.get("percent")).doubleValue()).sum();
        assertTrue(percent > 99 && percent < 101, "the shares add up: " + percent);
    }

    private static long busy(long seed) {
        long x = seed;
        for (int i = 0; i < 10_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }
}
