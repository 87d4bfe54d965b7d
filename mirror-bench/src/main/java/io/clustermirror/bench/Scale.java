package io.clustermirror.bench;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.common.PartitionState;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.stream.IntStream;

/**
 * The scale part of the benchmark ({@code --scale=true}): for each partition layout, what a mirror of that many
 * partitions costs on one small destination broker, against Kafka's follower replication of as many partitions.
 * Per layout a source cluster of one broker holds the layout's topics with a few records per partition; then, per
 * repeat, interleaved:
 *
 * <ul>
 *   <li>{@code mirror}: a fresh destination broker and a mirror of the source. The destination broker's idle CPU
 *   and live heap (after a forced full GC) and the produce latency of a client ({@code acks=all}, fixed rate, a topic
 *   of its own on the destination, {@link LagProbe} in JVMs of its own), with no mirror partitions;
 *   {@code --start} of every topic until every partition is MIRRORING and holds the source's end offset (describe);
 *   idle CPU, heap and produce latency again, every partition mirrored and no traffic; the link flap
 *   ({@link LinkFlap}, unless {@code scale.flap.s} is 0: the mirror reads the source through its proxy throughout);
 *   {@code --stop} until every partition is STOPPED (a failover's recovery time); idle CPU, heap and produce latency
 *   once more, next to the same partitions as ordinary topics. Every produce window follows the same steps (settle, idle window, forced GC),
 *   so that the windows differ by what the broker holds, not by what ran just before them.</li>
 *   <li>{@code replication}: a fresh cluster of two brokers with the same topics at replication factor 2, leaders
 *   on the broker-only node 2, followers on node 1 (combined controller and broker, as the mirror's destination):
 *   the time until every partition exists with both replicas in sync (KRaft creates a partition with every live
 *   replica in its ISR, so this is creation time), the follower's idle CPU and live heap, measured alike, and the
 *   produce latency of the same client on node 1, next to the followers: Kafka's own figure for the mirror's.</li>
 * </ul>
 *
 * <p>Every broker of this part gets the settings an operator gives a broker of many partitions
 * ({@link #BROKER_CONFIG}); the machine's open-file and memory-map limits are checked first ({@link #limitProblems}).
 * Figures are medians over {@code scale.repeats} with min and max ({@link Stats}); a layout that fails records its
 * error and the part goes on with the next.
 */
final class Scale {
    static final String MIRROR = "scale";
    static final String PROBE_TOPIC = "probe";
    /**
     * Kafka's controller writes at most 10,000 records per request (a topic record, one per partition, its configs):
     * topics are created, and grown, in requests of at most this many partitions.
     */
    static final int PARTITIONS_PER_REQUEST = 5000;
    /**
     * Settings for brokers of many partitions, the same on every broker of this part. Each partition's active segment
     * maps an offset and a time index preallocated at {@code log.index.size.max.bytes} (10 MiB by default): 1 MiB
     * (still 131,072 entries, 512 MiB of log per segment at the default index interval) keeps 20,000 mappings small.
     * One replica fetcher thread per source broker, as the mirror has one fetcher thread per source broker, both
     * waiting up to 500 ms per fetch (Kafka's and the mirror's defaults), so that idle costs compare like for like.
     */
    static final Map<String, String> BROKER_CONFIG = Map.of(
        "log.index.size.max.bytes", "1048576",
        "num.replica.fetchers", "1",
        "replica.fetch.wait.max.ms", "500");
    /**
     * Open files a broker needs besides one per partition (jars, sockets, the internal topics): a source broker of
     * 10,000 partitions had 10,189 open here.
     */
    static final int SPARE_FILES = 1000;
    /** Memory maps a broker needs besides two per partition (offset and time index): the JVM's own. */
    static final int SPARE_MAPS = 5000;
    private static final List<String> PARTS = List.of("mirror", "replication", "outage");
    /** The parts a run has unless {@code scale.parts} says otherwise: the outage catch-up is a run of its own. */
    private static final List<String> DEFAULT_PARTS = List.of("mirror", "replication");
    /** The largest classes a heap histogram's summary keeps. */
    private static final int HISTOGRAM_CLASSES = 30;

    private final Path home;
    private final Path work;
    private final String classpath;
    private final List<ScaleLayout> layouts;
    /** Brokers of the source and of the destination ({@code scale.brokers}), each holding an equal share of the partitions. */
    private final int brokers;
    private final int repeats;
    private final int recordsPerPartition;
    private final int settleSec;
    private final int idleSec;
    private final double produceRate;
    private final int produceWarmup;
    private final int produceMeasure;
    private final long timeoutMs;
    private final String codec;
    private final boolean pauseSource;
    /** What samples the idle windows next to the mirror's and the follower's partitions ({@code scale.profile}); null: nothing. */
    private final Profiler profiler;
    /**
     * Whether the idle windows next to the mirror's and the follower's partitions end with a class histogram of the
     * copying broker's live heap ({@link HeapHistogram}, {@code scale.histogram}).
     */
    private final boolean histogram;
    /** The parts each repeat runs, in {@link #PARTS}' order ({@code scale.parts}). */
    private final List<String> parts;
    /**
     * Whether the idle and produce windows run ({@code scale.windows}): without them a repeat measures the start and the
     * stop alone, in a fraction of the time.
     */
    private final boolean windows;
    /**
     * How long the link flap keeps the source silent ({@code scale.flap.s}, 0 for none): the mirror then reads the source
     * through a proxy ({@link LinkFlap}), and the flap runs after the windows, before {@code --stop}.
     */
    private final long flapMs;
    /** The outage catch-up, if {@code scale.parts} names it. */
    private final OutageCatchUp outage;
    /** Mirror configs given as {@code scale.mirror.*} options ({@code scale.mirror.fetch.max.wait.ms=2000}); none by default. */
    private final Map<String, String> mirrorConfig = new TreeMap<>();

    /** The part with its options ({@code scale.*}); brokers run from {@code home}, probes on {@code classpath}. */
    Scale(Path home, Path work, String classpath, Map<String, String> o) {
        this.home = home;
        this.work = work;
        this.classpath = classpath;
        layouts = new ArrayList<>(ScaleLayout.parseList(o.getOrDefault("scale.partitions", "12,1000,10000")));
        layouts.addAll(ScaleLayout.parseList(o.getOrDefault("scale.layout", "topics:1000x10")));
        repeats = Integer.parseInt(o.getOrDefault("scale.repeats", "3"));
        brokers = Integer.parseInt(o.getOrDefault("scale.brokers", "1"));
        recordsPerPartition = Integer.parseInt(o.getOrDefault("scale.records.per.partition", "10"));
        settleSec = Integer.parseInt(o.getOrDefault("scale.settle.s", "10"));
        idleSec = Integer.parseInt(o.getOrDefault("scale.idle.s", "60"));
        produceRate = Double.parseDouble(o.getOrDefault("scale.produce.rate.mb", "1"));
        produceWarmup = Integer.parseInt(o.getOrDefault("scale.produce.warmup.s", "5"));
        produceMeasure = Integer.parseInt(o.getOrDefault("scale.produce.measure.s", "30"));
        timeoutMs = TimeUnit.SECONDS.toMillis(Long.parseLong(o.getOrDefault("scale.timeout.s", "1800")));
        codec = o.getOrDefault("scale.codec", "lz4");
        pauseSource = Boolean.parseBoolean(o.getOrDefault("scale.pause.source", "false"));
        profiler = Profiler.of(o.getOrDefault("scale.profile", "false"), "scale.profile", work);
        histogram = Boolean.parseBoolean(o.getOrDefault("scale.histogram", "false"));
        List<String> asked = List.of(o.getOrDefault("scale.parts", String.join(",", DEFAULT_PARTS)).split(","));
        if (asked.isEmpty() || !PARTS.containsAll(asked)) {
            throw new IllegalArgumentException("scale.parts takes some of " + PARTS + ", not " + asked);
        }
        parts = PARTS.stream().filter(asked::contains).toList();
        windows = Boolean.parseBoolean(o.getOrDefault("scale.windows", "true"));
        flapMs = TimeUnit.SECONDS.toMillis(Long.parseLong(o.getOrDefault("scale.flap.s", "60")));
        o.forEach((k, v) -> {
            if (k.startsWith("scale.mirror.")) {
                mirrorConfig.put(k.substring("scale.".length()), v);
            }
        });
        outage = parts.contains("outage") ? new OutageCatchUp(home, classpath, codec, timeoutMs, produceRate, o) : null;
        refuseInconsistentOptions();
    }

    /** Fails on options that cannot run together, naming the fix. */
    private void refuseInconsistentOptions() {
        if (layouts.isEmpty()) {
            throw new IllegalArgumentException("no scale layout: give scale.partitions and/or scale.layout");
        }
        if (brokers < 1) {
            throw new IllegalArgumentException("scale.brokers must be at least 1, not " + brokers);
        }
        if (brokers > 1 && !parts.equals(List.of("mirror"))) {
            throw new IllegalArgumentException("scale.brokers=" + brokers + " runs the mirror part only (Kafka's followers and "
                + "the outage catch-up are measured on one broker): add --scale.parts=mirror");
        }
        if (outage != null && flapMs == 0) {
            throw new IllegalArgumentException("scale.parts=outage cuts the link through the flap's proxy: leave scale.flap.s above 0");
        }
        if (repeats < 1) {
            throw new IllegalArgumentException("scale.repeats must be at least 1, not " + repeats);
        }
    }

    /**
     * What keeps a broker of {@code partitions} partitions from starting or serving here, one line each naming the
     * fix; empty if nothing does. {@code openFiles} and {@code maxMapCount} are the process's limits, -1 if unknown.
     */
    static List<String> limitProblems(int partitions, long openFiles, long maxMapCount) {
        List<String> problems = new ArrayList<>();
        long files = (long) partitions + SPARE_FILES;
        if (openFiles >= 0 && openFiles < files) {
            problems.add("open files: the limit is " + openFiles + ", a broker of " + partitions + " partitions needs"
                + " about " + files + " (one log file per partition plus sockets); raise it (ulimit -n) or drop the layout");
        }
        long maps = 2L * partitions + SPARE_MAPS;
        if (maxMapCount >= 0 && maxMapCount < maps) {
            problems.add("memory maps: vm.max_map_count is " + maxMapCount + ", a broker of " + partitions
                + " partitions needs about " + maps + " (two index maps per partition); raise it (sysctl "
                + "vm.max_map_count) or drop the layout");
        }
        return problems;
    }

    /** The ratio of two medians, rounded as the other figures, or null if either is missing or the divisor is 0. */
    static Double ratio(Double a, Double b) {
        return a == null || b == null || b == 0 ? null : Bench.round(a / b);
    }

    /**
     * How far a mirror's partitions are: how many are in {@code state} and, of those, how many hold at least their
     * target end offset (null targets: none counts as caught up).
     */
    record Progress(int inState, int caughtUp) {
        static Progress of(ClusterMirrorDescription d, PartitionState state, Map<TopicPartition, Long> targets) {
            int inState = 0;
            int caughtUp = 0;
            for (MirrorTopicDescription t : d.topics()) {
                for (MirrorPartitionDescription p : t.partitions()) {
                    if (p.state() != state) {
                        continue;
                    }
                    inState++;
                    Long target = targets == null ? null : targets.get(new TopicPartition(t.topic(), p.partition()));
                    if (target != null && p.destinationEndOffset() >= target) {
                        caughtUp++;
                    }
                }
            }
            return new Progress(inState, caughtUp);
        }
    }

    Map<String, Object> run(Map<String, Object> provenance) throws Exception {
        int most = layouts.stream().mapToInt(ScaleLayout::partitions).max().orElseThrow();
        List<String> problems = limitProblems((most + brokers - 1) / brokers, Machine.openFilesLimit(), Machine.maxMapCount());
        if (!problems.isEmpty()) {
            throw new IllegalStateException("the scale part cannot run here: " + String.join("; ", problems));
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("part", "scale");
        r.put("started_utc", ZonedDateTime.now(ZoneOffset.UTC).toString());
        r.putAll(provenance);
        r.put("machine", Machine.describe());
        Map<String, Object> setup = new LinkedHashMap<>();
        setup.put("layouts", layouts.stream().map(ScaleLayout::toString).toList());
        setup.put("brokers", brokers);
        setup.put("records_per_partition", recordsPerPartition);
        setup.put("record_bytes", Payloads.RECORD_SIZE);
        setup.put("codec", codec);
        setup.put("broker_config", new TreeMap<>(BROKER_CONFIG));
        setup.put("broker_heap", KafkaNode.heap());
        setup.put("open_files_limit", Machine.openFilesLimit());
        setup.put("vm_max_map_count", Machine.maxMapCount());
        setup.put("mirror_config", mirrorConfig.isEmpty()
            ? "defaults (one fetcher thread per source broker, mirror.fetch.max.wait.ms 500)" : mirrorConfig);
        setup.put("profile", profiler == null ? "false" : profiler.sampler().name().toLowerCase(Locale.ROOT));
        if (outage != null) {
            setup.put("outage", outage.setup());
        }
        setup.put("flap", flapMs == 0 ? "none" : "the source silent for " + flapMs / 1000 + " s (a proxy that forwards nothing, "
            + "connections kept open), the mirror reading the source through that proxy in every phase");
        setup.put("settle_s", settleSec);
        setup.put("idle_s", idleSec);
        setup.put("produce", "acks=all linger.ms=5 compression.type=" + codec + ", " + produceRate + " MB/s of 1 KiB "
            + "records to a 1-partition topic (RF 1: all is the leader) on the destination, " + produceWarmup + " s warm-up, " + produceMeasure
            + " s window; latency from each record's due time to its acknowledgement");
        r.put("setup", setup);
        Map<String, Object> method = new LinkedHashMap<>();
        method.put("repeats", repeats);
        method.put("order_per_repeat", parts);
        method.put("windows", windows);
        method.put("statistic", "median over the repeats; spread.min/max per figure");
        r.put("method", method);
        long t0 = System.nanoTime();
        List<Map<String, Object>> results = new ArrayList<>();
        for (ScaleLayout layout : layouts) {
            results.add(layout(layout));
        }
        r.put("layouts", results);
        r.put("total_s", Bench.round((System.nanoTime() - t0) / 1e9));
        r.put("loadavg_end", Machine.loadavg());
        return r;
    }

    /** One layout: its source cluster, then the repeats; a failure ends the layout with its error. */
    private Map<String, Object> layout(ScaleLayout layout) throws IOException {
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("layout", layout.toString());
        res.put("topics", layout.topics());
        res.put("partitions", layout.partitions());
        Path dir = work.resolve("scale-" + layout);
        Bench.deleteTree(dir);
        Files.createDirectories(dir);
        Map<String, List<Map<String, Object>>> runs = new LinkedHashMap<>();
        for (String part : PARTS) {
            runs.put(part, new ArrayList<>());
        }
        String at = "[scale " + layout + "] ";
        try (LinkFlap flap = flapMs > 0 ? LinkFlap.create(brokers) : null;
             BenchCluster source = BenchCluster.start(home, dir, "source", brokers, BROKER_CONFIG,
                 flap == null ? List.of() : flap.listeners())) {
            Bench.log(at + "creating " + layout.topics() + " topic(s), " + layout.partitions() + " partitions, on the source");
            // Partition p on broker p mod brokers: an equal share each.
            createTopics(source.admin(), layout, p -> List.of(p % brokers + 1));
            // The brokers create the logs after the controller answered: a write to a log not there yet waits, and at
            // 50,000 partitions longer than a producer's delivery timeout.
            Bench.log(String.format("%severy source log created after %.1f s", at, awaitLogs(source, layout, System.nanoTime(), timeoutMs)));
            long records = (long) recordsPerPartition * layout.partitions();
            Bench.preload(source.bootstrap(), codec, layout.topicPartitions(), records);
            Map<TopicPartition, Long> targets = endOffsets(source.admin(), layout);
            res.put("source_records", records);
            for (int rep = 1; rep <= repeats; rep++) {
                for (String part : parts) {
                    Bench.log(at + "repeat " + rep + " of " + repeats + ": " + part);
                    runs.get(part).add(switch (part) {
                        case "mirror" -> mirror(dir, "mirror-r" + rep, source, flap, layout, targets);
                        case "replication" -> replication(dir, "replication-r" + rep, layout);
                        default -> outage.run(dir, "outage-r" + rep, source, flap, layout);
                    });
                }
            }
        } catch (Exception e) {
            Bench.log(at + "failed: " + e);
            res.put("error", String.valueOf(e));
        }
        runs.forEach((part, list) -> {
            if (!list.isEmpty()) {
                Map<String, Object> agg = Stats.aggregate(list);
                agg.put("repeats", list.size());
                agg.put("runs", list);
                res.put(part, agg);
            }
        });
        Map<String, Object> ratios = new LinkedHashMap<>();
        ratios.put("idle_cpu_mirror_over_follower", ratio(Bench.get(res, "mirror", "idle", "millicores"),
            Bench.get(res, "replication", "idle", "millicores")));
        ratios.put("heap_mirror_over_follower", ratio(Bench.get(res, "mirror", "idle", "heap_after_full_gc_MiB"),
            Bench.get(res, "replication", "idle", "heap_after_full_gc_MiB")));
        Double without = Bench.get(res, "mirror", "produce_without_mirror", "produce_p99_ms");
        ratios.put("produce_p99_with_over_without_mirror", ratio(
            Bench.get(res, "mirror", "produce_with_mirror", "produce_p99_ms"), without));
        ratios.put("produce_p99_after_stop_over_without_mirror", ratio(
            Bench.get(res, "mirror", "produce_after_stop", "produce_p99_ms"), without));
        ratios.put("produce_p99_next_to_followers_over_without_mirror", ratio(
            Bench.get(res, "replication", "produce_next_to_followers", "produce_p99_ms"), without));
        if (outage != null && res.get("outage") instanceof Map<?, ?> o) {
            @SuppressWarnings("unchecked")
            Map<String, Object> aggregated = (Map<String, Object>) o;
            ratios.put("outage", outage.ratios(aggregated));
        }
        res.put("ratios", ratios);
        Bench.discardWork(dir);
        return res;
    }

    private Map<String, Object> mirror(Path dir, String run, BenchCluster source, LinkFlap flap, ScaleLayout layout,
                                       Map<TopicPartition, Long> targets) throws Exception {
        Map<String, Object> res = new LinkedHashMap<>();
        String at = "[scale " + layout + "] " + run + ": ";
        String clusterName = run + "-dest";
        try (BenchCluster dest = BenchCluster.start(home, dir, clusterName, brokers, BROKER_CONFIG);
             ClusterMirrorAdmin cm = ClusterMirrorAdmin.create(dest.clientProps())) {
            Map<String, String> config = new HashMap<>(mirrorConfig);
            config.put("bootstrap.servers", flap == null ? source.bootstrap() : flap.bootstrap());
            cm.createClusterMirror(MIRROR, config).all()
                .get(60, TimeUnit.SECONDS);
            dest.admin().createTopics(List.of(new NewTopic(PROBE_TOPIC, 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
            // The same steps as before the window next to the mirror partitions (settle, idle, a forced full GC), so
            // that the two windows differ by the mirror partitions alone, not by the broker's age or its last GC.
            if (windows) {
                res.put("idle_without_mirror", idle(at, dest.brokers(), source.brokers(), null));
                res.put("produce_without_mirror", produce(at, "without mirror partitions", dir.resolve(run).resolve("probe-without"), dest));
            }

            if (brokers > 1) {
                // The mirror creates a topic at replication factor min(3, brokers): 150,000 replicas for 50,000 partitions
                // on three brokers, more open files than this machine allows. An operator who wants another factor
                // creates the (empty) destination topics first, and --start takes them as they are.
                long ahead = System.nanoTime();
                createTopics(dest.admin(), layout, p -> List.of(p % brokers + 1));
                res.put("seconds_destination_topics_created_ahead", awaitLogs(dest, layout, ahead, timeoutMs));
                Bench.log(at + "destination topics created ahead at replication factor 1 in "
                    + res.get("seconds_destination_topics_created_ahead") + " s");
            }
            Bench.log(at + "--start of " + layout.partitions() + " partitions");
            MirrorTopicsOptions options = new MirrorTopicsOptions().timeoutMs((int) timeoutMs);
            long start = System.nanoTime();
            long startedAt = start;
            CompletableFuture<Double> logsCreated = CompletableFuture.supplyAsync(() -> awaitLogs(dest, layout, startedAt, timeoutMs));
            cm.startMirrorTopics(MIRROR, layout.topicNames(), List.of(), options).all()
                .get(timeoutMs, TimeUnit.MILLISECONDS);
            double call = seconds(start);
            double mirroring = await(cm, PartitionState.MIRRORING, null, layout, start, p -> true);
            // A partition leads (and so mirrors) only once Kafka created its log: this part is Kafka's own.
            double logs = logsCreated.get(timeoutMs, TimeUnit.MILLISECONDS);
            double caughtUp = await(cm, PartitionState.MIRRORING, targets, layout, start,
                p -> p.caughtUp() >= layout.partitions());
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("seconds_call", call);
            s.put("seconds_to_destination_logs", logs);
            s.put("seconds_to_mirroring", mirroring);
            s.put("seconds_destination_logs_to_mirroring", Bench.round(mirroring - logs));
            s.put("seconds_to_caught_up", caughtUp);
            // The start's cost included: a catch-up rate only when scale.records.per.partition is large.
            long records = targets.values().stream().mapToLong(Long::longValue).sum();
            s.put("payload_MBps_start_to_caught_up", Bench.round(records * Payloads.RECORD_SIZE / 1048576.0 / caughtUp));
            res.put("start", s);
            Bench.log(String.format("%s--start: call %.1f s, every destination log created %.1f s, all MIRRORING %.1f s, caught up "
                + "%.1f s", at, call, logs, mirroring, caughtUp));

            if (windows) {
                res.put("idle", idle(at, dest.brokers(), source.brokers(), dir.resolve(run)));
                res.put("produce_with_mirror", produce(at, "next to " + layout.partitions() + " mirror partitions",
                    dir.resolve(run).resolve("probe-with"), dest));
            }
            if (windows && pauseSource) {
                pausedSourceWindow(at, dir.resolve(run).resolve("probe-source-paused"), source, dest, res);
            }

            if (flap != null) {
                res.put("flap", flap.run(at, cm, MIRROR, layout.partitions(), targets, dest, source, flapMs, timeoutMs));
            }

            Bench.log(at + "--stop of " + layout.partitions() + " partitions");
            start = System.nanoTime();
            cm.stopMirrorTopics(MIRROR, layout.topicNames(), List.of(), options).all()
                .get(timeoutMs, TimeUnit.MILLISECONDS);
            call = seconds(start);
            double stopped = await(cm, PartitionState.STOPPED, null, layout, start, p -> true);
            Map<String, Object> st = new LinkedHashMap<>();
            st.put("seconds_call", call);
            st.put("seconds_to_stopped", stopped);
            res.put("stop", st);
            Bench.log(String.format("%s--stop: call %.1f s, all STOPPED %.1f s", at, call, stopped));

            // The same partitions, now ordinary topics nobody fetches: what the partitions cost, not the mirroring.
            if (windows) {
                res.put("idle_after_stop", idle(at, dest.brokers(), source.brokers(), null));
                res.put("produce_after_stop", produce(at, "next to " + layout.partitions() + " stopped partitions",
                    dir.resolve(run).resolve("probe-after-stop"), dest));
            }
        }
        Bench.discardWork(dir.resolve(clusterName));
        Bench.discardWork(dir.resolve(run));
        return res;
    }

    private Map<String, Object> replication(Path dir, String run, ScaleLayout layout) throws Exception {
        Map<String, Object> res = new LinkedHashMap<>();
        String at = "[scale " + layout + "] " + run + ": ";
        try (BenchCluster c = BenchCluster.start(home, dir, run, 2, BROKER_CONFIG)) {
            long start = System.nanoTime();
            createTopics(c.admin(), layout, p -> List.of(2, 1));
            double inSync = awaitInSync(c.admin(), layout, start);
            Map<String, Object> s = new LinkedHashMap<>();
            // KRaft puts every live replica of a new partition in its ISR: this is the creation's time.
            s.put("seconds_to_created_in_sync", inSync);
            res.put("start", s);
            Bench.log(String.format("%screated at RF 2, every follower in sync after %.1f s", at, inSync));
            if (windows) {
                res.put("idle", idle(at, List.of(c.node(1)), List.of(c.node(2)), dir.resolve(run)));
                // Kafka's own reference for the mirror's window: a client's topic on the follower node, next to its followers.
                c.admin().createTopics(List.of(new NewTopic(PROBE_TOPIC, Map.of(0, List.of(1))))).all().get(60, TimeUnit.SECONDS);
                res.put("produce_next_to_followers", produce(at, "next to " + layout.partitions() + " follower partitions",
                    dir.resolve(run).resolve("probe-followers"), c));
            }
        }
        Bench.discardWork(dir.resolve(run));
        return res;
    }

    /**
     * Idle cost: after {@code scale.settle.s}, the copying brokers' CPU time over the window divided by the window
     * (in thousandths of a core), the same for the brokers they copy from, and the copying brokers' live heap after
     * the window (their sum; each after a forced full GC). With {@code scale.profile=true} and a {@code recordings}
     * directory, the first broker of each side is sampled ({@link Profiler}) for the window ({@code profile},
     * {@code source_profile}; its overhead is in the CPU figures).
     */
    private Map<String, Object> idle(String at, List<KafkaNode> copiers, List<KafkaNode> from, Path recordings) throws IOException {
        Bench.sleep(TimeUnit.SECONDS.toMillis(settleSec));
        Bench.log(at + "idle for " + idleSec + " s");
        boolean profiling = profiler != null && recordings != null;
        if (profiling || histogram && recordings != null) {
            Files.createDirectories(recordings);
        }
        KafkaNode copier = copiers.get(0);
        KafkaNode source = from.get(0);
        boolean copierProfiled = profiling && profiler.start(copier.pid());
        boolean sourceProfiled = profiling && profiler.start(source.pid());
        double cpu0 = cpuSeconds(copiers);
        double fromCpu0 = cpuSeconds(from);
        long t0 = System.nanoTime();
        Bench.sleep(TimeUnit.SECONDS.toMillis(idleSec));
        double sec = seconds(t0);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("window_s", sec);
        // In thousandths of a core: an idle broker's share of one is small.
        m.put("millicores", Bench.round((cpuSeconds(copiers) - cpu0) / sec * 1000));
        m.put("source_millicores", Bench.round((cpuSeconds(from) - fromCpu0) / sec * 1000));
        if (copierProfiled) {
            m.put("profile", profiler.stop(copier.pid(), recordings.resolve("idle-copier")));
        }
        if (sourceProfiled) {
            m.put("source_profile", profiler.stop(source.pid(), recordings.resolve("idle-source")));
        }
        Double heap = 0.0;
        for (KafkaNode node : copiers) {
            Double one = GcLog.heapAfterFullGc(node.pid(), node.gcLog());
            heap = heap == null || one == null ? null : heap + one;
        }
        m.put("heap_after_full_gc_MiB", heap == null ? null : Bench.round(heap));
        if (histogram && recordings != null) {
            m.put("histogram", HeapHistogram.take(copier.pid(), recordings.resolve("idle-copier-histogram.txt"), HISTOGRAM_CLASSES));
        }
        Bench.log(at + "idle: millicores " + m.get("millicores") + ", source " + m.get("source_millicores")
            + ", heap after full GC " + m.get("heap_after_full_gc_MiB") + " MiB");
        return m;
    }

    private static double cpuSeconds(List<KafkaNode> nodes) {
        return nodes.stream().mapToDouble(KafkaNode::cpuSeconds).sum();
    }

    /**
     * A diagnostic ({@code scale.pause.source=true}): the produce window next to the mirror partitions again, with the
     * source broker's process stopped (SIGSTOP), so that neither it nor the destination does any mirror work while the
     * mirror partitions stay MIRRORING: on one machine, what the source broker's CPU adds to the destination's
     * clients, which a source on its own machine would not. The mirror's fetches wait at the stopped source; the
     * window must end before they time out ({@code request.timeout.ms}, 30 s).
     */
    private void pausedSourceWindow(String at, Path dir, BenchCluster source, BenchCluster dest, Map<String, Object> res)
            throws IOException, InterruptedException {
        for (KafkaNode broker : source.brokers()) {
            broker.pause(true);
        }
        try {
            res.put("produce_with_mirror_source_paused", produce(at, "next to the mirror partitions, the source brokers paused", dir, dest));
        } finally {
            for (KafkaNode broker : source.brokers()) {
                broker.pause(false);
            }
        }
        Bench.sleep(TimeUnit.SECONDS.toMillis(settleSec));
    }

    /** The probe client's produce latency on {@code cluster}'s probe topic, logged as {@code "produce latency " + what}. */
    private Map<String, Object> produce(String at, String what, Path dir, BenchCluster cluster) throws IOException, InterruptedException {
        Bench.log(at + "produce latency " + what);
        Map<String, Object> m = LagProbe.run(dir, classpath, cluster.bootstrap(), cluster.bootstrap(), PROBE_TOPIC, 1,
            codec, "all", produceRate, produceWarmup, produceMeasure, 30);
        Bench.log("    produce p50 " + m.get("produce_p50_ms") + " ms, p99 " + m.get("produce_p99_ms") + " ms ("
            + m.get("produce_acked") + " acknowledged in the window)");
        return m;
    }

    /**
     * Polls the mirror every 500 ms until every partition of the layout is in {@code state} and {@code done} holds;
     * returns the seconds since {@code startNanos}. Fails after {@code scale.timeout.s}, naming how far it got.
     */
    private double await(ClusterMirrorAdmin cm, PartitionState state, Map<TopicPartition, Long> targets,
                         ScaleLayout layout, long startNanos, Predicate<Progress> done) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        Progress p = new Progress(0, 0);
        String describeError = "";
        while (true) {
            try {
                p = Progress.of(cm.describeClusterMirrors(List.of(MIRROR)).all().get(60, TimeUnit.SECONDS).get(MIRROR),
                    state, targets);
                describeError = "";
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                describeError = "; the last describe failed: " + e; // ask again
            }
            if (p.inState() >= layout.partitions() && done.test(p)) {
                return seconds(startNanos);
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException(layout + ": " + p.inState() + " of " + layout.partitions()
                    + " partitions " + state + (targets == null ? "" : ", " + p.caughtUp() + " caught up")
                    + " after " + timeoutMs / 1000 + " s (scale.timeout.s)" + describeError);
            }
            Bench.sleep(500);
        }
    }

    /**
     * Polls the brokers' log directories (every second, a light request next to describe's) until they hold a log of
     * every partition of the layout; returns the seconds since the start.
     */
    static double awaitLogs(BenchCluster cluster, ScaleLayout layout, long startNanos, long timeoutMs) {
        Set<String> topics = Set.copyOf(layout.topicNames());
        List<Integer> brokerIds = cluster.brokers().stream().map(n -> n.nodeId).toList();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline) {
            try {
                long created = cluster.admin().describeLogDirs(brokerIds).allDescriptions().get(60, TimeUnit.SECONDS).values().stream()
                    .flatMap(dirs -> dirs.values().stream())
                    .flatMap(dir -> dir.replicaInfos().keySet().stream()).filter(tp -> topics.contains(tp.topic())).count();
                if (created >= layout.partitions()) {
                    return seconds(startNanos);
                }
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                // ask again
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            Bench.sleep(1000);
        }
        throw new IllegalStateException(layout + ": the " + cluster.name + " cluster did not create every log within " + timeoutMs / 1000 + " s");
    }

    /** Polls until every partition of the layout has two in-sync replicas; returns the seconds since the start. */
    private double awaitInSync(Admin admin, ScaleLayout layout, long startNanos) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            long inSync;
            try {
                Map<String, TopicDescription> ds = admin.describeTopics(layout.topicNames()).allTopicNames()
                    .get(60, TimeUnit.SECONDS);
                inSync = ds.values().stream().flatMap(t -> t.partitions().stream())
                    .filter(p -> p.isr().size() >= 2).count();
            } catch (ExecutionException e) {
                inSync = 0; // a topic not yet known to the broker asked
            }
            if (inSync >= layout.partitions()) {
                return seconds(startNanos);
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException(layout + ": " + inSync + " of " + layout.partitions()
                    + " partitions in sync after " + timeoutMs / 1000 + " s (scale.timeout.s)");
            }
            Bench.sleep(500);
        }
    }

    /**
     * Creates the layout's topics with partition p on {@code replicas.apply(p)} (the first leads), in requests of at most
     * {@link #PARTITIONS_PER_REQUEST} partitions: whole topics while they fit, then a bigger topic's further partitions
     * by growing it.
     */
    static void createTopics(Admin admin, ScaleLayout layout, IntFunction<List<Integer>> replicas) throws Exception {
        int first = Math.min(layout.partitionsPerTopic(), PARTITIONS_PER_REQUEST);
        List<NewTopic> batch = new ArrayList<>();
        for (String topic : layout.topicNames()) {
            if (!batch.isEmpty() && (batch.size() + 1) * first > PARTITIONS_PER_REQUEST) {
                admin.createTopics(batch).all().get(120, TimeUnit.SECONDS);
                batch.clear();
            }
            Map<Integer, List<Integer>> assignment = new HashMap<>();
            for (int p = 0; p < first; p++) {
                assignment.put(p, replicas.apply(p));
            }
            batch.add(new NewTopic(topic, assignment));
        }
        admin.createTopics(batch).all().get(120, TimeUnit.SECONDS);
        for (String topic : layout.topicNames()) {
            for (int n = first; n < layout.partitionsPerTopic(); n += PARTITIONS_PER_REQUEST) {
                int to = Math.min(layout.partitionsPerTopic(), n + PARTITIONS_PER_REQUEST);
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(to,
                    IntStream.range(n, to).mapToObj(replicas).toList()))).all().get(120, TimeUnit.SECONDS);
            }
        }
    }

    /** The end offsets of the layout's partitions. */
    static Map<TopicPartition, Long> endOffsets(Admin admin, ScaleLayout layout) throws Exception {
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        layout.topicPartitions().forEach(tp -> req.put(tp, OffsetSpec.latest()));
        Map<TopicPartition, Long> out = new HashMap<>();
        admin.listOffsets(req).all().get(120, TimeUnit.SECONDS).forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }

    private static double seconds(long startNanos) {
        return Bench.round((System.nanoTime() - startNanos) / 1e9);
    }
}
