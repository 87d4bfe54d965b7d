package io.clustermirror.broker.node;

import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.metrics.Metrics;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

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

    @Test
    void aRetriableFailureIsAWarningUntilItLastsThenAnError() {
        List<String> levels = new ArrayList<>();
        // A rolling restart: the thread's requests time out while the brokers it needs are down.
        Throwable timeout = new ExecutionException(new TimeoutException("Timeout expired while fetching topic metadata"));
        try (ThreadHealth health = new ThreadHealth(metrics, recordingLevels(levels), "sync-dr")) {
            for (int i = 0; i < ThreadHealth.TRANSIENT_FAILURES + 1; i++) {
                health.failed("the next round", timeout);
            }
            List<String> expected = new ArrayList<>(Collections.nCopies(ThreadHealth.TRANSIENT_FAILURES, "warn"));
            expected.add("error");
            assertEquals(expected, levels, "WARN while it may be a restart, ERROR once it lasts");

            levels.clear();
            health.working();
            health.failed("the next round", timeout);
            assertEquals(List.of("warn"), levels, "working again starts the count anew");

            levels.clear();
            health.failed("the next round", new IllegalStateException("a bug"));
            assertEquals(List.of("error"), levels, "a failure Kafka does not call retriable is an ERROR at once");
        }
    }

    /** A logger that records the level of each WARN or ERROR line ("warn", "error") and drops the rest. */
    private static Logger recordingLevels(List<String> levels) {
        return (Logger) Proxy.newProxyInstance(ThreadHealthTest.class.getClassLoader(), new Class<?>[] {Logger.class},
            (proxy, method, args) -> {
                if (method.getName().equals("warn") || method.getName().equals("error")) {
                    levels.add(method.getName());
                }
                return method.getReturnType() == boolean.class ? Boolean.TRUE : null;
            });
    }
}
