package io.clustermirror.admin.cli;

import io.clustermirror.admin.OperationProgress;

import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;

/**
 * The text of one progress report (pure): partitions done of total, offsets to go, the time left and the time spent, as in
 * {@code Catching up: 3/8 partitions, 12,345 offsets behind, ETA 1m05s, elapsed 12s}. The time left is estimated from
 * how fast the offsets to go went down over the recent readings, and is "unknown" while they do not.
 */
final class ProgressLine {
    private ProgressLine() {
    }

    /** How many offsets remained at a moment. */
    record Reading(long atMs, long remainingOffsets) {
    }

    /**
     * The line for a report.
     *
     * @param activity      what the operation does, first on the line ("Catching up")
     * @param remainingWhat what the offsets to go are ("behind", "to compare")
     * @param readings      the recent readings, oldest first, the report's own last
     */
    static String render(String activity, String remainingWhat, OperationProgress progress, long elapsedMs,
                         List<Reading> readings) {
        OptionalLong eta = etaMs(readings);
        return String.format(Locale.ROOT, "%s: %d/%d partitions, %,d offsets %s, ETA %s, elapsed %s", activity,
            progress.partitionsDone(), progress.partitionsTotal(), progress.remainingOffsets(), remainingWhat,
            eta.isPresent() ? duration(eta.getAsLong()) : "unknown", duration(elapsedMs));
    }

    /**
     * The time left if the offsets to go keep going down at the rate they did from the oldest reading to the newest; empty
     * with fewer than two readings, or when they did not go down (a source written faster than it is mirrored).
     */
    static OptionalLong etaMs(List<Reading> readings) {
        if (readings.size() < 2) {
            return OptionalLong.empty();
        }
        Reading oldest = readings.get(0);
        Reading newest = readings.get(readings.size() - 1);
        long reduced = oldest.remainingOffsets() - newest.remainingOffsets();
        long spanMs = newest.atMs() - oldest.atMs();
        if (reduced <= 0 || spanMs <= 0) {
            return OptionalLong.empty();
        }
        // Rounded up: a report never says 0s while something remains.
        return OptionalLong.of((long) Math.ceil((double) newest.remainingOffsets() * spanMs / reduced));
    }

    /** A duration as people read it: {@code 45s}, {@code 3m05s}, {@code 2h07m}. */
    static String duration(long ms) {
        long seconds = (ms + 999) / 1000;
        if (seconds < 60) {
            return seconds + "s";
        }
        if (seconds < 3600) {
            return String.format(Locale.ROOT, "%dm%02ds", seconds / 60, seconds % 60);
        }
        return String.format(Locale.ROOT, "%dh%02dm", seconds / 3600, seconds % 3600 / 60);
    }
}
