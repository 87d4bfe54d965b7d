package io.clustermirror.bench;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.admin.MirrorTopicsOptions;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The scale part's outage catch-up ({@code scale.parts=outage}): a source outage while producers keep writing to the
 * source, then the link returns, against a Kafka follower that catches up the same backlog.
 *
 * <ul>
 *   <li>Mirror, once per {@code scale.outage.throttle.mb} setting (0: no link throttle): a fresh destination broker
 *   mirrors every partition of the layout through the {@link LinkFlap}'s proxies until caught up; a client's produce
 *   latency on the destination ({@code acks=all}, a topic of its own) with no catch-up running; then the proxies go
 *   silent while a producer writes {@code scale.outage.backlog.mb} MiB to the source, spread over every partition; then
 *   the link returns and, while the mirror catches up, the same client's produce latency again. Describe, polled every
 *   second, gives each partition's lag in milliseconds (the age of its oldest record not yet on the destination) and
 *   the time until every partition's is zero (RPO zero). The next run's mirror copies the earlier backlogs as it starts,
 *   before its own windows: deleting them instead leaves a new mirror with nothing to fetch, and its partitions at
 *   destination end 0 below the source's log start until a record arrives.</li>
 *   <li>Follower: a fresh cluster of two brokers, every partition on node 2 holding the same backlog, then reassigned to
 *   nodes 2 and 1: node 1 catches up as Kafka's follower, and the same client measures on node 1 meanwhile. Done when
 *   no reassignment is left (each new replica joined its ISR).</li>
 * </ul>
 * The client's window starts when the link returns (or the reassignment starts); it lies inside the catch-up only if
 * the catch-up lasts longer than the window, which the result states ({@code probe_inside_catch_up}).
 */
final class OutageCatchUp {
    private static final long POLL_MS = 1_000;
    /** How long the probe JVMs take to start before their schedule, about (in {@link #probeInside}). */
    private static final int PROBE_START_S = 2;

    private final Path home;
    private final String classpath;
    private final String codec;
    private final long timeoutMs;
    private final long backlogMiB;
    private final List<Integer> throttlesMBps = new ArrayList<>();
    private final double probeRate;
    private final int probeWarmup;
    private final int probeMeasure;

    /** The part with its options ({@code scale.outage.*}, and the scale part's produce rate, codec and timeout). */
    OutageCatchUp(Path home, String classpath, String codec, long timeoutMs, double probeRate, Map<String, String> o) {
        this.home = home;
        this.classpath = classpath;
        this.codec = codec;
        this.timeoutMs = timeoutMs;
        this.probeRate = probeRate;
        backlogMiB = Long.parseLong(o.getOrDefault("scale.outage.backlog.mb", "4096"));
        for (String t : o.getOrDefault("scale.outage.throttle.mb", "0").split(",")) {
            if (!t.isBlank()) {
                throttlesMBps.add(Integer.parseInt(t.trim()));
            }
        }
        probeWarmup = Integer.parseInt(o.getOrDefault("scale.outage.probe.warmup.s", "2"));
        probeMeasure = Integer.parseInt(o.getOrDefault("scale.outage.probe.measure.s", "10"));
        if (backlogMiB < 1 || throttlesMBps.isEmpty() || throttlesMBps.stream().anyMatch(t -> t < 0)) {
            throw new IllegalArgumentException("scale.outage.backlog.mb must be at least 1 and scale.outage.throttle.mb a list of "
                + "MB/s of at least 0 (0: no throttle), not " + backlogMiB + " and " + throttlesMBps);
        }
    }

    /** What the part records about its set-up. */
    Map<String, Object> setup() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("backlog_MiB", backlogMiB);
        s.put("throttles_MBps", throttlesMBps);
        s.put("probe", probeWarmup + " s warm-up, " + probeMeasure + " s window from the return");
        return s;
    }

    /** The result's key of the mirror at a throttle setting. */
    static String mirrorKey(int throttleMBps) {
        return throttleMBps == 0 ? "mirror" : "mirror_throttled_" + throttleMBps;
    }

    /** The ratios of a layout's aggregated result ({@code outage}): per throttle setting, against its own window and the follower. */
    Map<String, Object> ratios(Map<String, Object> outage) {
        Map<String, Object> ratios = new LinkedHashMap<>();
        for (int throttle : throttlesMBps) {
            String key = mirrorKey(throttle);
            ratios.put(key + "_produce_p99_during_over_before", Scale.ratio(
                Bench.get(outage, key, "produce_during_catch_up", "produce_p99_ms"),
                Bench.get(outage, key, "produce_without_catch_up", "produce_p99_ms")));
            ratios.put(key + "_catch_up_over_follower", Scale.ratio(Bench.get(outage, key, "catch_up_payload_MBps"),
                Bench.get(outage, "follower", "catch_up_payload_MBps")));
        }
        ratios.put("follower_produce_p99_during_over_before", Scale.ratio(
            Bench.get(outage, "follower", "produce_during_catch_up", "produce_p99_ms"),
            Bench.get(outage, "follower", "produce_without_catch_up", "produce_p99_ms")));
        return ratios;
    }

    /** One repeat: the mirror at each throttle setting, then the follower. */
    Map<String, Object> run(Path dir, String run, BenchCluster source, LinkFlap flap, ScaleLayout layout) throws Exception {
        Map<String, Object> res = new LinkedHashMap<>();
        for (int throttle : throttlesMBps) {
            res.put(mirrorKey(throttle), mirror(dir, run + "-t" + throttle, source, flap, layout, throttle));
        }
        res.put("follower", follower(dir, run + "-follower", layout));
        return res;
    }

    private long backlogRecords() {
        return backlogMiB * 1048576 / Payloads.RECORD_SIZE;
    }

    private Map<String, Object> mirror(Path dir, String run, BenchCluster source, LinkFlap flap, ScaleLayout layout, int throttleMBps)
            throws Exception {
        String at = "[outage " + layout + "] " + run + ": ";
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("throttle_MBps", throttleMBps);
        try (BenchCluster dest = BenchCluster.start(home, dir, run, 1, Scale.BROKER_CONFIG);
             ClusterMirrorAdmin cm = ClusterMirrorAdmin.create(dest.clientProps())) {
            Map<String, String> config = new HashMap<>();
            config.put("bootstrap.servers", flap.bootstrap());
            if (throttleMBps > 0) {
                config.put("mirror.fetch.rate.limit.bytes.per.sec", String.valueOf(throttleMBps * 1_000_000L));
            }
            cm.createClusterMirror(Scale.MIRROR, config).all().get(60, TimeUnit.SECONDS);
            dest.admin().createTopics(List.of(new NewTopic(Scale.PROBE_TOPIC, 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
            cm.startMirrorTopics(Scale.MIRROR, layout.topicNames(), List.of(), new MirrorTopicsOptions().timeoutMs((int) timeoutMs))
                .all().get(timeoutMs, TimeUnit.MILLISECONDS);
            awaitRpoZero(cm, layout, Scale.endOffsets(source.admin(), layout), null);
            Bench.log(at + "mirroring; produce latency without a catch-up");
            res.put("produce_without_catch_up", probe(dir.resolve(run).resolve("probe-before"), dest));

            Bench.log(at + "the source silent; writing " + backlogMiB + " MiB to it");
            flap.silence();
            long writing = System.nanoTime();
            Bench.preload(source.bootstrap(), codec, layout.topicPartitions(), backlogRecords());
            Map<TopicPartition, Long> targets = Scale.endOffsets(source.admin(), layout);
            res.put("outage_s", seconds(writing));
            res.put("backlog_write_MBps", Bench.round(backlogMiB / seconds(writing)));

            flap.restore();
            long back = System.nanoTime();
            Bench.log(at + "the source is back after " + res.get("outage_s") + " s; catching up");
            CompletableFuture<Map<String, Object>> during = CompletableFuture.supplyAsync(
                () -> probe(dir.resolve(run).resolve("probe-during"), dest));
            List<Map<String, Object>> series = new ArrayList<>();
            awaitRpoZero(cm, layout, targets, series);
            res.put("lag_ms_at_return", series.isEmpty() ? null : series.get(0));
            res.put("rpo_series", series);
            caughtUp(at + "RPO zero", "seconds_to_rpo_zero", seconds(back), during, res);
        }
        Bench.discardWork(dir.resolve(run));
        return res;
    }

    private Map<String, Object> follower(Path dir, String run, ScaleLayout layout) throws Exception {
        String at = "[outage " + layout + "] " + run + ": ";
        Map<String, Object> res = new LinkedHashMap<>();
        try (BenchCluster c = BenchCluster.start(home, dir, run, 2, Scale.BROKER_CONFIG)) {
            Scale.createTopics(c.admin(), layout, p -> List.of(2));
            Scale.awaitLogs(c, layout, System.nanoTime(), timeoutMs);
            c.admin().createTopics(List.of(new NewTopic(Scale.PROBE_TOPIC, Map.of(0, List.of(1))))).all().get(60, TimeUnit.SECONDS);
            Bench.log(at + "produce latency on node 1 before it follows anything");
            res.put("produce_without_catch_up", probe(dir.resolve(run).resolve("probe-before"), c));
            Bench.log(at + "writing " + backlogMiB + " MiB to node 2");
            Bench.preload(c.bootstrap(), codec, layout.topicPartitions(), backlogRecords());
            Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
            layout.topicPartitions().forEach(tp -> moves.put(tp, Optional.of(new NewPartitionReassignment(List.of(2, 1)))));
            long start = System.nanoTime();
            c.admin().alterPartitionReassignments(moves).all().get(120, TimeUnit.SECONDS);
            Bench.log(at + "node 1 follows every partition; catching up");
            CompletableFuture<Map<String, Object>> during = CompletableFuture.supplyAsync(
                () -> probe(dir.resolve(run).resolve("probe-during"), c));
            Bench.awaitNoReassignments(c.admin(), timeoutMs);
            caughtUp(at + "in sync", "seconds_to_in_sync", seconds(start), during, res);
        }
        Bench.discardWork(dir.resolve(run));
        return res;
    }

    /**
     * Records a catch-up of the backlog that took {@code seconds} (under {@code key}), its rate, and the client's window
     * that ran meanwhile, and logs them after {@code what}.
     */
    private void caughtUp(String what, String key, double seconds, CompletableFuture<Map<String, Object>> during,
                          Map<String, Object> res) throws Exception {
        res.put(key, seconds);
        res.put("catch_up_payload_MBps", Bench.round(backlogMiB / seconds));
        res.put("produce_during_catch_up", during.get(timeoutMs, TimeUnit.MILLISECONDS));
        res.put("probe_inside_catch_up", probeInside(seconds));
        Bench.log(String.format("%s %.1f s after the catch-up began (%.0f MiB/s); produce p99 %s ms during, %s ms before", what,
            seconds, Bench.get(res, "catch_up_payload_MBps"), Bench.get(res, "produce_during_catch_up", "produce_p99_ms"),
            Bench.get(res, "produce_without_catch_up", "produce_p99_ms")));
    }

    /** Whether the client's window (after its JVMs start) ended before the catch-up did. */
    private boolean probeInside(double catchUpSeconds) {
        return PROBE_START_S + probeWarmup + probeMeasure <= catchUpSeconds;
    }

    private Map<String, Object> probe(Path dir, BenchCluster cluster) {
        try {
            return LagProbe.run(dir, classpath, cluster.bootstrap(), cluster.bootstrap(), Scale.PROBE_TOPIC, 1, codec, "all",
                probeRate, probeWarmup, probeMeasure, 30);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during a produce window", e);
        }
    }

    /**
     * Polls describe every second until every partition is MIRRORING with no error, at its target and with a lag of 0 ms;
     * with a {@code series}, adds per poll the seconds since the first, the partitions at RPO zero and the lag in ms
     * (median and max over the partitions).
     */
    private void awaitRpoZero(ClusterMirrorAdmin cm, ScaleLayout layout, Map<TopicPartition, Long> targets,
                              List<Map<String, Object>> series) throws Exception {
        long start = System.nanoTime();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            ClusterMirrorDescription d;
            try {
                d = cm.describeClusterMirrors(List.of(Scale.MIRROR)).all().get(60, TimeUnit.SECONDS).get(Scale.MIRROR);
            } catch (ExecutionException | TimeoutException e) {
                d = null; // ask again
            }
            if (d != null) {
                Map<String, Object> point = rpoPoint(d, targets, seconds(start));
                if (series != null) {
                    series.add(point);
                }
                if ((int) point.get("at_rpo_zero") >= layout.partitions()) {
                    return;
                }
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException(layout + ": not every partition at RPO zero after " + timeoutMs / 1000 + " s");
            }
            Bench.sleep(POLL_MS);
        }
    }

    /** One poll: the partitions at RPO zero, and the lag in ms over the partitions that report one. */
    static Map<String, Object> rpoPoint(ClusterMirrorDescription d, Map<TopicPartition, Long> targets, double atSeconds) {
        int atZero = 0;
        List<Long> lags = new ArrayList<>();
        for (MirrorTopicDescription t : d.topics()) {
            for (MirrorPartitionDescription p : t.partitions()) {
                Long target = targets.get(new TopicPartition(t.topic(), p.partition()));
                LinkFlap.Counts one = LinkFlap.Counts.of(p, target);
                if (p.lagMs() != MirrorPartitionDescription.UNKNOWN) {
                    lags.add(p.lagMs());
                }
                if (one.healthy() == 1 && p.lagMs() == 0) {
                    atZero++;
                }
            }
        }
        Map<String, Object> point = new LinkedHashMap<>();
        point.put("s", atSeconds);
        point.put("at_rpo_zero", atZero);
        long[] sorted = lags.stream().mapToLong(Long::longValue).sorted().toArray();
        point.put("lag_ms_median", sorted.length == 0 ? null : sorted[sorted.length / 2]);
        point.put("lag_ms_max", sorted.length == 0 ? null : sorted[sorted.length - 1]);
        return point;
    }

    private static double seconds(long startNanos) {
        return Bench.round((System.nanoTime() - startNanos) / 1e9);
    }
}
