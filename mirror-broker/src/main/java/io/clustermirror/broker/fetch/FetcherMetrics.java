package io.clustermirror.broker.fetch;

import io.clustermirror.common.MirrorConfig;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.CumulativeCount;
import org.apache.kafka.common.metrics.stats.CumulativeSum;
import org.apache.kafka.common.metrics.stats.Rate;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The data plane's metrics in the broker's registry (so they show in JMX), group {@code cluster-mirror}:
 * per mirror ({@code mirror} tag) bytes fetched, time held back by the link throttle, batches/records appended, failed
 * partitions, source records skipped
 * (deleted on the source before they were mirrored) and the ranges they were in, partitions with the source
 * unavailable, max lag;
 * per source broker ({@code mirror, source-broker}) bytes fetched and fetch requests; per partition
 * ({@code mirror, topic, partition}) lag and last mirrored offset. Everything is removed on close.
 */
final class FetcherMetrics implements AutoCloseable {
    static final String GROUP = "cluster-mirror";

    private final Metrics metrics;
    private final String mirror;
    private final String prefix;
    private final List<String> sensors = new ArrayList<>();
    private final List<MetricName> gauges = new ArrayList<>();

    final Sensor bytesFetched;
    final Sensor recordsAppended;
    final Sensor batchesAppended;
    final Sensor failedPartitions;
    final Sensor sourceRecordsSkipped;
    final Sensor fetchThrottleTime;

    FetcherMetrics(Metrics metrics, String mirror, int localNodeId, Supplier<Collection<PartitionFetchState>> partitions) {
        this.metrics = metrics;
        this.mirror = mirror;
        this.prefix = "cluster-mirror." + mirror + "." + localNodeId + ".";
        Map<String, String> tags = Map.of("mirror", mirror);
        bytesFetched = rateAndTotal("bytes-fetched", tags, "bytes of source batches fetched");
        recordsAppended = rateAndTotal("records-appended", tags, "source records appended on destination leaders");
        batchesAppended = rateAndTotal("batches-appended", tags, "source batches appended on destination leaders");
        failedPartitions = sensor("partitions-failed");
        failedPartitions.add(metrics.metricName("partitions-failed-total", GROUP,
            "mirror partitions that failed (bad batch, source topic changed, ...)", tags), new CumulativeSum());
        sourceRecordsSkipped = sensor("source-records-skipped");
        sourceRecordsSkipped.add(metrics.metricName("source-records-skipped-total", GROUP,
            "source offsets skipped because the source deleted them before they were mirrored (retention or deleteRecords)",
            tags), new CumulativeSum());
        sourceRecordsSkipped.add(metrics.metricName("source-ranges-skipped-total", GROUP,
            "offset ranges skipped because the source deleted them before they were mirrored", tags), new CumulativeCount());
        fetchThrottleTime = sensor("fetch-throttle-time");
        fetchThrottleTime.add(metrics.metricName("fetch-throttle-time-ms-total", GROUP,
            "milliseconds the fetchers of the mirror waited for " + MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC
                + " (summed over fetchers)", tags), new CumulativeSum());
        gauge(metrics.metricName("records-lag-max", GROUP,
            "max over this broker's mirror partitions of source end offset minus mirrored offset", tags),
            () -> partitions.get().stream().mapToLong(PartitionFetchState::lag).max().orElse(0L));
        gauge(metrics.metricName("partitions", GROUP, "mirror partitions fetched by this broker", tags),
            () -> (long) partitions.get().size());
        gauge(metrics.metricName("partitions-source-unavailable", GROUP,
            "mirror partitions of this broker reported SOURCE_UNAVAILABLE: no fetch from the source succeeded for a while", tags),
            () -> partitions.get().stream().filter(st -> st.unavailableReported).count());
        gauge(metrics.metricName("partitions-log-start-held", GROUP,
            "mirror partitions of this broker whose destination holds back a move of the source's log start "
                + "(" + MirrorConfig.SOURCE_DESTRUCTIVE_POLICY + ")", tags),
            () -> partitions.get().stream().filter(st -> !st.heldLogStarts.isEmpty()).count());
    }

    /** Per source broker: bytes fetched (also counted in the mirror total). */
    Sensor brokerBytesSensor(int sourceBroker) {
        String name = prefix + "bytes-fetched.broker-" + sourceBroker;
        Sensor existing = metrics.getSensor(name);
        if (existing != null) {
            return existing;
        }
        Sensor s = metrics.sensor(name, bytesFetched);
        sensors.add(name);
        // Ordered: JMX names (and the exporter rules in config/monitoring) follow the tags' order.
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("mirror", mirror);
        tags.put("source-broker", String.valueOf(sourceBroker));
        s.add(metrics.metricName("bytes-fetched-rate", GROUP, "bytes per second fetched from this source broker", tags),
            new Rate());
        s.add(metrics.metricName("bytes-fetched-total", GROUP, "bytes fetched from this source broker", tags),
            new CumulativeSum());
        return s;
    }

    void addPartition(PartitionFetchState st) {
        for (MetricName n : partitionMetricNames(st.tp)) {
            metrics.removeMetric(n);
        }
        List<MetricName> names = partitionMetricNames(st.tp);
        metrics.addMetric(names.get(0), (Gauge<Long>) (c, now) -> st.lag());
        metrics.addMetric(names.get(1), (Gauge<Long>) (c, now) -> st.fetchOffset - 1);
    }

    void removePartition(TopicPartition tp) {
        for (MetricName n : partitionMetricNames(tp)) {
            metrics.removeMetric(n);
        }
    }

    private List<MetricName> partitionMetricNames(TopicPartition tp) {
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("mirror", mirror);
        tags.put("topic", tp.topic());
        tags.put("partition", String.valueOf(tp.partition()));
        return List.of(
            metrics.metricName("records-lag", GROUP, "source end offset minus mirrored offset", tags),
            metrics.metricName("last-mirrored-offset", GROUP, "last source offset appended on the destination", tags));
    }

    private Sensor rateAndTotal(String name, Map<String, String> tags, String doc) {
        Sensor s = sensor(name);
        s.add(metrics.metricName(name + "-rate", GROUP, doc + " per second", tags), new Rate());
        s.add(metrics.metricName(name + "-total", GROUP, doc, tags), new CumulativeSum());
        return s;
    }

    private Sensor sensor(String name) {
        String full = prefix + name;
        sensors.add(full);
        return metrics.sensor(full);
    }

    private void gauge(MetricName name, Supplier<Long> value) {
        metrics.removeMetric(name);
        metrics.addMetric(name, (Gauge<Long>) (c, now) -> value.get());
        gauges.add(name);
    }

    @Override
    public void close() {
        for (MetricName n : gauges) {
            metrics.removeMetric(n);
        }
        // Child sensors first (removing a parent removes its children too, which is fine either way).
        for (int i = sensors.size() - 1; i >= 0; i--) {
            metrics.removeSensor(sensors.get(i));
        }
    }
}
