package io.clustermirror.admin.cli;

import io.clustermirror.admin.OperationProgress;
import io.clustermirror.admin.ProgressListener;

import org.apache.kafka.common.utils.Time;

import java.io.PrintStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;

/**
 * Shows a long operation's progress on stderr, as {@link Mode} says, and keeps the readings its time estimate is made from
 * ({@link ProgressLine}). The admin client reports from its own thread and the tool closes it from the main one, hence
 * the synchronization.
 */
final class ProgressReporter implements ProgressListener, AutoCloseable {
    /** How often a reading is kept for the time estimate, and the line on a terminal redrawn at most. */
    static final long REDRAW_INTERVAL_MS = 250;
    /** How often a line is printed at most when stderr is not a terminal (a log, a pipe). */
    static final long LINE_INTERVAL_MS = 10_000;
    /** How far back the time estimate looks: recent enough to follow a change of pace. */
    static final long RATE_WINDOW_MS = 30_000;

    /** How progress is shown. */
    enum Mode {
        /** One line redrawn in place (carriage return), cleared at the end: for a person at a terminal. */
        IN_PLACE,
        /** A plain line now and then, never a carriage return: for logs and pipes. */
        PERIODIC_LINES,
        /** Nothing: the output is a JSON document for a program, which progress must never get into. */
        SILENT;

        /**
         * The one place the tool decides how to show progress. {@code onTerminal} is whether the tool runs at a terminal:
         * {@code System.console() != null} on Java 17, true only when both stdin and stdout are terminals.
         */
        static Mode of(boolean json, boolean onTerminal) {
            return json ? SILENT : onTerminal ? IN_PLACE : PERIODIC_LINES;
        }
    }

    private final Mode mode;
    private final PrintStream err;
    private final Time time;
    private final String activity;
    private final String remainingWhat;
    private final long startMs;
    private final Deque<ProgressLine.Reading> readings = new ArrayDeque<>();
    private long lastShownMs;
    /** The width the line on a terminal covers: the longest drawn since the reporter began. */
    private int shownLength;

    /**
     * @param activity      what the operation does, first on the line ("Catching up")
     * @param remainingWhat what its offsets to go are ("behind")
     */
    ProgressReporter(Mode mode, PrintStream err, Time time, String activity, String remainingWhat) {
        this.mode = mode;
        this.err = err;
        this.time = time;
        this.activity = activity;
        this.remainingWhat = remainingWhat;
        this.startMs = time.milliseconds();
        this.lastShownMs = startMs;
    }

    @Override
    public synchronized void onProgress(OperationProgress progress) {
        long nowMs = time.milliseconds();
        boolean first = readings.isEmpty();
        if (!first && nowMs - readings.getLast().atMs() < REDRAW_INTERVAL_MS) {
            return;
        }
        readings.addLast(new ProgressLine.Reading(nowMs, progress.remainingOffsets()));
        while (nowMs - readings.getFirst().atMs() > RATE_WINDOW_MS) {
            readings.removeFirst();
        }
        String line = ProgressLine.render(activity, remainingWhat, progress, nowMs - startMs, new ArrayList<>(readings));
        if (mode == Mode.IN_PLACE) {
            // Padded over what the longer lines before it left, so no tail of them shows.
            err.print("\r" + line + " ".repeat(Math.max(0, shownLength - line.length())));
            err.flush();
            shownLength = Math.max(shownLength, line.length());
        } else if (mode == Mode.PERIODIC_LINES && nowMs - lastShownMs >= LINE_INTERVAL_MS) {
            err.println(line);
            lastShownMs = nowMs;
        }
    }

    /** Clears the line on a terminal, so that what the tool prints next starts on a clean one. */
    @Override
    public synchronized void close() {
        if (shownLength > 0) {
            err.print("\r" + " ".repeat(shownLength) + "\r");
            err.flush();
            shownLength = 0;
        }
    }
}
