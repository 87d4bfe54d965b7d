package io.clustermirror.admin.cli;

import io.clustermirror.admin.OperationProgress;

import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProgressReporterTest {
    private final MockTime time = new MockTime();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private ProgressReporter reporter(ProgressReporter.Mode mode) {
        return new ProgressReporter(mode, new PrintStream(err, true, StandardCharsets.UTF_8), time, "Catching up", "behind");
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theModeFollowsTheTerminalAndJsonWins() {
        assertEquals(ProgressReporter.Mode.IN_PLACE, ProgressReporter.Mode.of(false, true));
        assertEquals(ProgressReporter.Mode.PERIODIC_LINES, ProgressReporter.Mode.of(false, false));
        assertEquals(ProgressReporter.Mode.SILENT, ProgressReporter.Mode.of(true, true), "a JSON document never gets progress");
        assertEquals(ProgressReporter.Mode.SILENT, ProgressReporter.Mode.of(true, false));
    }

    @Test
    void onATerminalTheLineIsRedrawnAFewTimesASecondAtMostAndClearedAtTheEnd() {
        try (ProgressReporter reporter = reporter(ProgressReporter.Mode.IN_PLACE)) {
            reporter.onProgress(new OperationProgress(0, 4, 1_000));
            time.sleep(100);
            reporter.onProgress(new OperationProgress(0, 4, 990));
            assertEquals("\rCatching up: 0/4 partitions, 1,000 offsets behind, ETA unknown, elapsed 0s", err(),
                "a report sooner than " + ProgressReporter.REDRAW_INTERVAL_MS + " ms after the last drawn is skipped");
            time.sleep(ProgressReporter.REDRAW_INTERVAL_MS);
            reporter.onProgress(new OperationProgress(4, 4, 0));
        }
        String drawn = "Catching up: 0/4 partitions, 1,000 offsets behind, ETA unknown, elapsed 0s";
        String last = "Catching up: 4/4 partitions, 0 offsets behind, ETA 0s, elapsed 1s";
        assertEquals("\r" + drawn + "\r" + last + " ".repeat(drawn.length() - last.length()) + "\r" + " ".repeat(drawn.length())
            + "\r", err());
    }

    @Test
    void throughAPipeALineEveryTenSecondsAtMostAndNoCarriageReturn() {
        try (ProgressReporter reporter = reporter(ProgressReporter.Mode.PERIODIC_LINES)) {
            for (int second = 0; second <= 25; second++) {
                reporter.onProgress(new OperationProgress(0, 1, 2_600 - second * 100L));
                time.sleep(1_000);
            }
        }
        assertEquals("Catching up: 0/1 partitions, 1,600 offsets behind, ETA 16s, elapsed 10s\n"
            + "Catching up: 0/1 partitions, 600 offsets behind, ETA 6s, elapsed 20s\n", err());
        assertFalse(err().contains("\r"));
    }

    @Test
    void silentPrintsNothing() {
        try (ProgressReporter reporter = reporter(ProgressReporter.Mode.SILENT)) {
            reporter.onProgress(new OperationProgress(0, 1, 100));
            time.sleep(60_000);
            reporter.onProgress(new OperationProgress(1, 1, 0));
        }
        assertEquals("", err());
    }

    @Test
    void theTimeLeftLooksBackThirtySecondsOnly() {
        try (ProgressReporter reporter = reporter(ProgressReporter.Mode.IN_PLACE)) {
            // Fast at first (1,000 a second for 10 s), then 10 a second for 40 s: the estimate follows the new pace.
            reporter.onProgress(new OperationProgress(0, 1, 20_000));
            time.sleep(10_000);
            reporter.onProgress(new OperationProgress(0, 1, 10_000));
            for (int second = 1; second <= 40; second++) {
                time.sleep(1_000);
                reporter.onProgress(new OperationProgress(0, 1, 10_000 - 10L * second));
            }
            err.reset();
            time.sleep(1_000);
            reporter.onProgress(new OperationProgress(0, 1, 9_590));
        }
        // 300 offsets in the last 30 s.
        assertTrue(err().startsWith("\rCatching up: 0/1 partitions, 9,590 offsets behind, ETA 15m59s, elapsed 51s"), err());
    }
}
