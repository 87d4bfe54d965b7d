package io.clustermirror.broker.controller;

import org.apache.kafka.common.metrics.Metrics;

/** Reads a thread's health metrics ({@code io.clustermirror.broker.node.ThreadHealth}) from a metrics registry. */
final class HealthMetrics {
    private HealthMetrics() {
    }

    /** The value of the metric {@code name} (e.g. {@code thread-healthy}) of the thread tagged {@code thread}. */
    static double value(Metrics metrics, String thread, String name) {
        return metrics.metrics().entrySet().stream()
            .filter(e -> e.getKey().name().equals(name) && thread.equals(e.getKey().tags().get("thread")))
            .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).findFirst().orElseThrow();
    }
}
