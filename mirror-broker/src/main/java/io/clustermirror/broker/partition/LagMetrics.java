package io.clustermirror.broker.partition;

import io.clustermirror.broker.fetch.UnmirroredRecords;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The lag in milliseconds of the mirror partitions this broker leads, in the broker's registry (so they show in JMX),
 * group {@code cluster-mirror}: per partition ({@code mirror, topic, partition}) {@code lag-ms}, the age of the oldest
 * source record the destination does not have yet (0 when caught up; it grows while the partition is paused and the
 * source takes records), and per mirror ({@code mirror}) {@code lag-ms-max}, the largest of them.
 *
 * <p>Threads: the partition manager's event thread changes the partitions; any thread reads the gauges.
 */
final class LagMetrics implements AutoCloseable {
    private static final String GROUP = "cluster-mirror";

    private record Tracked(String mirror, long oldestUnmirroredTimestamp) {
    }

    private final Metrics metrics;
    private final Time time;
    private final Map<TopicPartition, Tracked> partitions = new ConcurrentHashMap<>();

    LagMetrics(Metrics metrics, Time time) {
        this.metrics = metrics;
        this.time = time;
    }

    /** Shows a partition this broker leads, with the source timestamp of its oldest unmirrored record (or -1: none). */
    void track(String mirror, TopicPartition tp, long oldestUnmirroredTimestamp) {
        Tracked before = partitions.put(tp, new Tracked(mirror, oldestUnmirroredTimestamp));
        if (before != null && before.mirror().equals(mirror)) {
            return;
        }
        if (before != null) {
            removeGauges(before.mirror(), tp);
        }
        metrics.addMetricIfAbsent(partitionMetric(mirror, tp), null, (Gauge<Long>) (config, now) -> lagMs(tp));
        metrics.addMetricIfAbsent(maxMetric(mirror), null, (Gauge<Long>) (config, now) -> maxLagMs(mirror));
    }

    /** The partition is no longer led here, or no longer mirrored. */
    void untrack(TopicPartition tp) {
        Tracked before = partitions.remove(tp);
        if (before != null) {
            removeGauges(before.mirror(), tp);
        }
    }

    long lagMs(TopicPartition tp) {
        Tracked t = partitions.get(tp);
        return t == null ? 0 : UnmirroredRecords.lagMs(t.oldestUnmirroredTimestamp(), time.milliseconds());
    }

    private long maxLagMs(String mirror) {
        long now = time.milliseconds();
        return partitions.values().stream().filter(t -> t.mirror().equals(mirror))
            .mapToLong(t -> UnmirroredRecords.lagMs(t.oldestUnmirroredTimestamp(), now)).max().orElse(0L);
    }

    private void removeGauges(String mirror, TopicPartition tp) {
        metrics.removeMetric(partitionMetric(mirror, tp));
        if (partitions.values().stream().noneMatch(t -> t.mirror().equals(mirror))) {
            metrics.removeMetric(maxMetric(mirror));
        }
    }

    private MetricName partitionMetric(String mirror, TopicPartition tp) {
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("mirror", mirror);
        tags.put("topic", tp.topic());
        tags.put("partition", String.valueOf(tp.partition()));
        return metrics.metricName("lag-ms", GROUP, "age in ms of the oldest source record not mirrored yet, 0 when caught up", tags);
    }

    private MetricName maxMetric(String mirror) {
        return metrics.metricName("lag-ms-max", GROUP, "max over this broker's mirror partitions of lag-ms", Map.of("mirror", mirror));
    }

    @Override
    public void close() {
        partitions.keySet().forEach(this::untrack);
    }
}
