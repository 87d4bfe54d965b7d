package io.clustermirror.broker;

import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.Metrics;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class ThreadHealthTest {
    private final Metrics metrics = new Metrics();

    private Object metric(String name) {
        MetricName key = metrics.metricName(name, "cluster-mirror", "", Map.of("thread", "sync-dr"));
        return metrics.metric(key) == null ? null : metrics.metric(key).metricValue();
    }

    @Test
    void failuresShowInTheMetricsAndBackOffUntilTheThreadWorksAgain() {
        try (ThreadHealth health = new ThreadHealth(metrics, LoggerFactory.getLogger(ThreadHealthTest.class), "sync-dr")) {
            assertEquals(1, metric("thread-healthy"));
            RuntimeException cause = new IllegalStateException("source unreachable");
            assertEquals(ThreadHealth.MIN_BACKOFF_MS, health.failed("the next round", cause));
            assertEquals(0, metric("thread-healthy"));
            long backoff = 0;
            for (int i = 0; i < 10; i++) {
                backoff = health.failed("the next round", cause);
            }
            assertEquals(ThreadHealth.MAX_BACKOFF_MS, backoff, "the backoff doubles up to its maximum");
            assertEquals(11L, metric("thread-failures-total"));
            health.working();
            assertEquals(1, metric("thread-healthy"));
            assertEquals(ThreadHealth.MIN_BACKOFF_MS, health.failed("the next round", cause), "a recovery resets the backoff");
        }
        assertNull(metric("thread-healthy"), "closing removes the metrics");
    }
}
