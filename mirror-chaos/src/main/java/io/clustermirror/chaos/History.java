package io.clustermirror.chaos;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What happened during a run, in order: faults applied and healed, operator commands and their results, checks and
 * their violations. Times are milliseconds since the clock's zero, the fault plan's zero: the moment every mirror
 * topic was started. Thread-safe.
 */
final class History {
    private static final Logger log = LoggerFactory.getLogger(History.class);

    /** One entry: {@code kind} is a short word ({@code fault}, {@code heal}, {@code operator}, {@code violation}, ...). */
    record Event(long atMs, String kind, String detail) {
    }

    /** A broken invariant: which check found it, where (a partition, a node) and the evidence. */
    record Violation(long atMs, String check, String where, String detail) {
        @Override
        public String toString() {
            return check + " at " + where + " (t=" + atMs / 1000.0 + " s): " + detail;
        }
    }

    // Guarded by this.
    private long startNanos = System.nanoTime();
    // Guarded by this.
    private final List<Event> events = new ArrayList<>();
    private final List<Violation> violations = new ArrayList<>();
    // What was already reported: a periodic check that finds the same difference again adds nothing.
    private final Set<List<String>> reported = new HashSet<>();

    synchronized long nowMs() {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /** Sets the clock's zero to now (the fault plan's zero): what was recorded before gets negative times. */
    synchronized void startClock() {
        long shiftMs = nowMs();
        startNanos = System.nanoTime();
        events.replaceAll(e -> new Event(e.atMs() - shiftMs, e.kind(), e.detail()));
        violations.replaceAll(v -> new Violation(v.atMs() - shiftMs, v.check(), v.where(), v.detail()));
    }

    synchronized void event(String kind, String detail) {
        Event event = new Event(nowMs(), kind, detail);
        events.add(event);
        log.info("[t={} s] {}: {}", event.atMs() / 1000.0, kind, detail);
    }

    /** Records a violation, once: the same check, place and evidence found again later is not recorded again. */
    synchronized void violation(String check, String where, String detail) {
        if (!reported.add(List.of(check, where, detail))) {
            return;
        }
        Violation violation = new Violation(nowMs(), check, where, detail);
        violations.add(violation);
        events.add(new Event(violation.atMs(), "violation", violation.toString()));
        log.error("[t={} s] VIOLATION {}", violation.atMs() / 1000.0, violation);
    }

    synchronized List<Event> events() {
        return List.copyOf(events);
    }

    synchronized List<Violation> violations() {
        return List.copyOf(violations);
    }
}
