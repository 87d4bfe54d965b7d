package io.clustermirror.broker.node;

import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Metrics;
import org.slf4j.Logger;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The health of one long-lived thread of the extension (control plane, metadata sync, fetchers), in the broker's metrics registry (so it shows in JMX), group
 * {@code cluster-mirror}, tag {@code thread}: {@code thread-healthy} (1, or 0 from a failure until the thread works
 * again) and {@code thread-failures-total}. Each failure is logged with what the thread retries and when; the recovery
 * once. It also keeps the thread's retry backoff: doubled by each failure up to a maximum, reset by the recovery.
 * Used by the thread it tracks (a replaced fetcher and its successor may overlap for a moment, which at worst skews
 * one backoff); the gauges are read by others.
 */
public final class ThreadHealth implements AutoCloseable {
    private static final String GROUP = "cluster-mirror";
    static final long MIN_BACKOFF_MS = 1_000;
    static final long MAX_BACKOFF_MS = 30_000;
    /** Consecutive retriable failures logged as WARN before they count as an ERROR: 1 + 2 + 4 + 8 + 16 s of backoff. */
    static final int TRANSIENT_FAILURES = 5;

    private final Metrics metrics;
    private final Logger log;
    private final String thread;
    private final List<MetricName> names;
    private volatile boolean healthy = true;
    private final AtomicLong failures = new AtomicLong();
    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    private volatile long backoffMs = MIN_BACKOFF_MS;
    private final long maxBackoffMs;

    /** @param thread the thread's role and node, e.g. {@code image-tailer-1}: the metrics' tag */
    public ThreadHealth(Metrics metrics, Logger log, String thread) {
        this(metrics, log, thread, MAX_BACKOFF_MS);
    }

    /** @param maxBackoffMs the longest wait between retries, for a thread whose retries others wait on */
    public ThreadHealth(Metrics metrics, Logger log, String thread, long maxBackoffMs) {
        this.maxBackoffMs = maxBackoffMs;
        this.metrics = metrics;
        this.log = log;
        this.thread = thread;
        Map<String, String> tags = Map.of("thread", thread);
        this.names = List.of(
            metrics.metricName("thread-healthy", GROUP, "1 while this Cluster Mirror thread works, 0 from a failure until it "
                + "works again (it retries with backoff; the broker log says why)", tags),
            metrics.metricName("thread-failures-total", GROUP, "failures this Cluster Mirror thread retried", tags));
        names.forEach(metrics::removeMetric);
        metrics.addMetric(names.get(0), (Gauge<Integer>) (config, now) -> healthy ? 1 : 0);
        metrics.addMetric(names.get(1), (Gauge<Long>) (config, now) -> failures.get());
    }

    /**
     * Records a failure, logs it, and returns how long to wait before retrying.
     *
     * @param retrying what the thread does again after the backoff, for the log ("tailing the internal topics")
     */
    public long failed(String retrying, Throwable cause) {
        healthy = false;
        failures.incrementAndGet();
        int consecutive = consecutiveFailures.incrementAndGet();
        long wait = backoffMs;
        backoffMs = Math.min(maxBackoffMs, backoffMs * 2);
        String message = "Cluster Mirror thread {} failed ({} in a row); retrying {} in {} ms (its metric thread-healthy, group "
            + "cluster-mirror, tag thread={}, is 0 until it works)";
        if (isTransient(cause, consecutive)) {
            log.warn(message, thread, consecutive, retrying, wait, thread, cause);
        } else {
            log.error(message, thread, consecutive, retrying, wait, thread, cause);
        }
        return wait;
    }

    /**
     * Whether the {@code consecutive}-th failure in a row, with this cause, is one a healthy cluster goes through: Kafka
     * marks the cause (or one it wraps) retriable, and it has not lasted beyond {@link #TRANSIENT_FAILURES} tries.
     */
    static boolean isTransient(Throwable cause, int consecutive) {
        if (consecutive > TRANSIENT_FAILURES) {
            return false;
        }
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof RetriableException) {
                return true;
            }
        }
        return false;
    }

    /** The thread works (again): logs the recovery after a failure. */
    public void working() {
        backoffMs = MIN_BACKOFF_MS;
        consecutiveFailures.set(0);
        if (!healthy) {
            healthy = true;
            log.info("Cluster Mirror thread {} works again after {} failure(s)", thread, failures.get());
        }
    }

    @Override
    public void close() {
        names.forEach(metrics::removeMetric);
    }
}
