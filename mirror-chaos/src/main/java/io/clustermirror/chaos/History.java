package io.clustermirror.chaos;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * What happened during a run, in order: faults applied and healed, operator commands and their results, checks and
 * their violations. Times are milliseconds since the run's clock started (the mirror's start). Thread-safe.
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

    private final long startNanos = System.nanoTime();
    // Guarded by this.
    private final List<Event> events = new ArrayList<>();
    private final List<Violation> violations = new ArrayList<>();

    long nowMs() {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    synchronized void event(String kind, String detail) {
        Event event = new Event(nowMs(), kind, detail);
        events.add(event);
        log.info("[t={} s] {}: {}", event.atMs() / 1000.0, kind, detail);
    }

    synchronized void violation(String check, String where, String detail) {
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
