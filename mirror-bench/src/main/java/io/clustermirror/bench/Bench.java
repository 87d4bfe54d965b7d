package io.clustermirror.bench;

import io.clustermirror.testsupport.LaunchedNode;
import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.PartitionVerification;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

/**
 * The benchmark: for each codec, preloads a source topic, then measures (1) Cluster Mirror, (2) MirrorMaker 2
 * and (3) Kafka's follower replication copying it (catch-up throughput and CPU per GiB on the copying side and
 * on the source broker), and the steady-state lag of each at a fixed produce rate. Scenarios run interleaved
 * (A B C A B C ...) {@code repeats} times, so that a change in the machine's load hits every scenario alike;
 * each figure is the median of the runs with its min and max ({@link Stats}). Every result carries the commit
 * and a dirty-tree flag. Writes markdown, JSON and a PNG chart.
 *
 * <p>Options (-Dbench.name=value or --name=value), defaults of the default run / of {@code full=true}: home, work,
 * out, repeats (5), volume.mb (256 / 4096), codecs (lz4,none), partitions (12), lag.rate.mb (20), lag.warmup.s
 * (4 / 15), lag.measure.s (10 / 60), lag.drain.s (30), lag.trace (false: true adds a consumer on the source, which
 * splits the lag into the source's part and the copy's), scenarios (mirror,mm2,replication / also mirror-fsync,
 * mirror3, replication3 and the links of {@link SourceLinks}), fetch.max.bytes (52428800) and
 * fetch.partition.max.bytes (1048576) for all three copiers, mm2.tasks (4), mm2.sweep (false: true runs MM2 with
 * tasks.max 1, 4 and the partition count), profile (false: true or jfr records a CPU profile of each catch-up of the
 * mirror and of the follower with the JDK's Flight Recorder, native with async-profiler, {@link Profiler}), classpath, label,
 * broker.heap (every broker's heap options, "-Xmx1G -Xms1G").
 *
 * <p>{@code scale=true} runs the scale part ({@link Scale}) instead of the codec scenarios, with its options
 * scale.partitions (12,1000,10000: one topic each), scale.layout (topics:1000x10: T topics of P partitions; empty to
 * skip), scale.repeats (3), scale.records.per.partition (10), scale.settle.s (10), scale.idle.s (60),
 * scale.produce.rate.mb (1), scale.produce.warmup.s (5), scale.produce.measure.s (30), scale.timeout.s (1800, per
 * wait), scale.codec (lz4), scale.pause.source (false; true adds a diagnostic window, {@link Scale}), scale.profile
 * (false; true, jfr or native records a CPU profile of both brokers over the idle window next to the partitions), scale.parts
 * (mirror,replication), scale.windows (true; false measures the start and the stop alone) and scale.mirror.*
 * (mirror configs, none by default: scale.mirror.fetch.max.wait.ms=2000 creates the mirror with
 * mirror.fetch.max.wait.ms=2000); it writes {@code <label>-scale.{json,md,png}}.
 */
public final class Bench {
    static final String TOPIC = "bench";
    private static final List<String> SCENARIOS = List.of("mirror", "mirror-fsync", "mirror3", "mm2", "replication", "replication3");
    /**
     * A destination whose disk is slower than the source: every append is forced to disk
     * ({@code log.flush.interval.messages=1}), so the mirror fetches faster than it can append; its heap over the
     * catch-up shows whether memory stays bounded.
     */
    private static final Map<String, String> SLOW_DISK = Map.of("log.flush.interval.messages", "1");
    /** The links of the full run besides loopback ({@link SourceLinks}). */
    private static final String FULL_LINKS = "mirror-tls,mirror-wan-20,mirror-wan-80,mirror-throttle-50";
    /** Progress lines' time of day, seconds always shown ({@code LocalTime.toString} drops ":00"). */
    private static final DateTimeFormatter LOG_TIME = DateTimeFormatter.ofPattern("HH:mm:ss");

    final Path home;
    final Path work;
    final Path out;
    final boolean full;
    final int repeats;
    final long volumeBytes;
    final List<String> codecs;
    final int partitions;
    final double lagRate;
    final int lagWarmup;
    final int lagMeasure;
    final int lagDrain;
    /**
     * What samples the catch-ups of the mirror and of the follower ({@code profile}: the JDK's Flight Recorder or
     * async-profiler, {@link Profiler}); null: nothing. Its overhead (a few percent) is in their CPU figures then, so
     * profile in a run of its own.
     */
    final Profiler profiler;
    /** Whether the lag probe also measures when records become visible on the source ({@link LagProbe}). */
    final boolean lagTrace;
    final Set<String> scenarios;
    final long fetchMaxBytes;
    final long fetchPartitionMaxBytes;
    final int mm2Tasks;
    final boolean mm2Sweep;
    final String label;
    /** The classpath of the JVMs the harness starts besides the brokers: MirrorMaker 2 and the lag probes. */
    final String classpath;
    /** The scale part, which runs instead of the codec scenarios when {@code scale=true}; null otherwise. */
    final Scale scale;

    Bench(Map<String, String> o) {
        home = Path.of(o.getOrDefault("home", ".")).toAbsolutePath().normalize();
        work = Path.of(o.getOrDefault("work", home.resolve("bench/results/tmp").toString())).toAbsolutePath();
        out = Path.of(o.getOrDefault("out", home.resolve("bench/results").toString())).toAbsolutePath();
        full = Boolean.parseBoolean(o.getOrDefault("full", "false"));
        repeats = Integer.parseInt(o.getOrDefault("repeats", "5"));
        volumeBytes = Long.parseLong(o.getOrDefault("volume.mb", full ? "4096" : "256")) * 1024 * 1024;
        codecs = List.of(o.getOrDefault("codecs", "lz4,none").split(","));
        partitions = Integer.parseInt(o.getOrDefault("partitions", "12"));
        lagRate = Double.parseDouble(o.getOrDefault("lag.rate.mb", "20"));
        lagWarmup = Integer.parseInt(o.getOrDefault("lag.warmup.s", full ? "15" : "4"));
        lagMeasure = Integer.parseInt(o.getOrDefault("lag.measure.s", full ? "60" : "10"));
        lagDrain = Integer.parseInt(o.getOrDefault("lag.drain.s", "30"));
        lagTrace = Boolean.parseBoolean(o.getOrDefault("lag.trace", "false"));
        profiler = Profiler.of(o.getOrDefault("profile", "false"), "profile", work);
        scenarios = Set.of(o.getOrDefault("scenarios", full ? String.join(",", SCENARIOS) + "," + FULL_LINKS
            : "mirror,mm2,replication").split(","));
        fetchMaxBytes = Long.parseLong(o.getOrDefault("fetch.max.bytes", "52428800"));
        fetchPartitionMaxBytes = Long.parseLong(o.getOrDefault("fetch.partition.max.bytes", "1048576"));
        mm2Tasks = Integer.parseInt(o.getOrDefault("mm2.tasks", "4"));
        mm2Sweep = Boolean.parseBoolean(o.getOrDefault("mm2.sweep", "false"));
        label = o.getOrDefault("label", LocalDate.now(ZoneOffset.UTC).toString());
        classpath = o.getOrDefault("classpath", System.getProperty("java.class.path"));
        scale = Boolean.parseBoolean(o.getOrDefault("scale", "false")) ? new Scale(home, work, classpath, o) : null;
        if (repeats < 1) {
            throw new IllegalArgumentException("repeats must be at least 1, not " + repeats);
        }
        for (String s : scenarios) {
            if (!SCENARIOS.contains(s) && !SourceLinks.isLink(s)) {
                throw new IllegalArgumentException("unknown scenario " + s + "; the scenarios are " + SCENARIOS + " and "
                    + SourceLinks.WAN + "<round trip ms>, " + SourceLinks.TLS + ", " + SourceLinks.THROTTLE + "<MB/s>");
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>();
        System.getProperties().forEach((k, v) -> {
            if (k.toString().startsWith("bench.")) {
                o.put(k.toString().substring(6), v.toString());
            }
        });
        for (String a : args) {
            if (a.startsWith("--") && a.contains("=")) {
                o.put(a.substring(2, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
            }
        }
        if (o.containsKey("broker.heap")) { // read by every broker started (KafkaNode), as -Dbench.broker.heap is
            System.setProperty("bench.broker.heap", o.get("broker.heap"));
        }
        List<Map<String, Object>> results = new Bench(o).runAll();
        for (Map<String, Object> r : results) {
            System.out.println(Report.markdown(r));
        }
    }

    List<Map<String, Object>> runAll() throws Exception {
        List<Map<String, Object>> all = new ArrayList<>();
        Files.createDirectories(out);
        Map<String, Object> provenance = Provenance.of(home);
        if (scale != null) {
            Map<String, Object> r = scale.run(provenance);
            write(r, label + "-scale");
            return List.of(r);
        }
        for (String codec : codecs) {
            Map<String, Object> r = runCodec(codec, provenance);
            all.add(r);
            write(r, label + "-" + codec);
        }
        return all;
    }

    /** Writes a result as {@code <base>.json}, {@code .md} and {@code .png} in the output directory. */
    private void write(Map<String, Object> r, String base) throws IOException {
        Files.writeString(out.resolve(base + ".json"), Json.write(r) + "\n");
        Files.writeString(out.resolve(base + ".md"), Report.markdown(r));
        Chart.write(r, out.resolve(base + ".png"));
        Chart.writeHeap(r, out.resolve(base + "-heap.png"));
        Chart.writeLag(r, out.resolve(base + "-lag.png"));
        log("wrote " + out.resolve(base + ".md"));
    }

    /** The scenarios of one repeat, in the order they run; MM2 is one scenario per tasks.max when sweeping. */
    List<String> order() {
        List<String> order = new ArrayList<>();
        for (String s : SCENARIOS) {
            if (!scenarios.contains(s)) {
                continue;
            }
            if (s.equals("mm2") && mm2Sweep) {
                new java.util.TreeSet<>(List.of(1, 4, partitions)).forEach(t -> order.add("mm2-tasks-" + t));
            } else {
                order.add(s);
            }
        }
        scenarios.stream().filter(SourceLinks::isLink).sorted().forEach(order::add);
        return order;
    }

    /** The key of a scenario's results in the result map. */
    static String resultKey(String scenario) {
        return switch (scenario) {
            case "mirror3" -> "mirror_3_brokers";
            case "replication3" -> "replication_3_brokers";
            default -> scenario.replace('-', '_');
        };
    }

    Map<String, Object> runCodec(String codec, Map<String, Object> provenance) throws Exception {
        Path dir = work.resolve(codec);
        deleteTree(dir);
        Files.createDirectories(dir);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("codec", codec);
        r.put("started_utc", ZonedDateTime.now(ZoneOffset.UTC).toString());
        r.putAll(provenance);
        r.put("machine", Machine.describe());
        Map<String, Object> setup = new LinkedHashMap<>();
        r.put("setup", setup);
        List<String> order = order();
        Map<String, Object> method = new LinkedHashMap<>();
        method.put("mode", full ? "full" : "default");
        method.put("repeats", repeats);
        method.put("order_per_repeat", order);
        method.put("statistic", "median over the repeats; spread.min/max per figure");
        r.put("method", method);
        long t0 = System.nanoTime();
        log("[" + codec + "] starting the source cluster");
        try (SourceLinks links = SourceLinks.create(dir, scenarios);
             BenchCluster source = startSource(dir, links)) {
            Admin sa = source.admin();
            createTopic(sa, TOPIC, Map.of());
            log("[" + codec + "] preloading " + (volumeBytes >> 20) + " MiB of 1 KiB records");
            long pre = System.nanoTime();
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(TOPIC, p));
            }
            long records = preload(source.bootstrap(), codec, tps, volumeBytes / Payloads.RECORD_SIZE);
            double preSec = (System.nanoTime() - pre) / 1e9;
            long logBytes = sum(partitionSizes(sa, 1, TOPIC));
            setup.put("records", records);
            setup.put("record_bytes", Payloads.RECORD_SIZE);
            setup.put("partitions", partitions);
            setup.put("payload_bytes", records * Payloads.RECORD_SIZE);
            setup.put("source_log_bytes", logBytes);
            setup.put("preload_s", round(preSec));
            setup.put("lag_rate_MBps", lagRate);
            setup.put("producer", "acks=1 batch.size=131072 linger.ms=10 compression.type=" + codec);
            setup.put("fetch_max_bytes", fetchMaxBytes);
            setup.put("fetch_partition_max_bytes", fetchPartitionMaxBytes);
            log(String.format("[%s] preloaded %d records, %.1f MiB on disk, in %.1f s", codec, records,
                logBytes / 1048576.0, preSec));
            long[] target = endOffsets(sa, TOPIC);

            Map<String, List<Map<String, Object>>> runs = new LinkedHashMap<>();
            order.forEach(s -> runs.put(s, new ArrayList<>()));
            for (int rep = 1; rep <= repeats; rep++) {
                for (String s : order) {
                    log("[" + codec + "] repeat " + rep + " of " + repeats + ": " + s);
                    runs.get(s).add(scenario(s, s + "-r" + rep, dir, source, links, codec, target, logBytes, records));
                }
            }
            runs.forEach((s, list) -> {
                Map<String, Object> agg = Stats.aggregate(list);
                agg.put("repeats", list.size());
                agg.put("runs", list);
                r.put(resultKey(s), agg);
            });
        }
        if (mm2Sweep) {
            mm2SweepSummary(r);
        }
        r.put("ratios", ratios(r));
        r.put("total_s", round((System.nanoTime() - t0) / 1e9));
        r.put("loadavg_end", Machine.loadavg());
        discardWork(dir);
        return r;
    }

    /** The source broker: the followers' fetch sizes, and the listeners and TLS configs of the links the run uses. */
    private BenchCluster startSource(Path dir, SourceLinks links) {
        Map<String, String> config = new HashMap<>(replicaFetchConfig());
        config.putAll(links.sourceConfig());
        return BenchCluster.start(home, dir, "source", 1, config, links.listeners());
    }

    private Map<String, Object> scenario(String s, String run, Path dir, BenchCluster source, SourceLinks links, String codec,
                                         long[] target, long logBytes, long records) throws Exception {
        if (SourceLinks.isLink(s)) {
            try {
                return mirror(dir, run, source, links, s, codec, target, logBytes, 1);
            } finally {
                links.reset();
            }
        }
        return switch (s) {
            case "mirror", "mirror-fsync" -> mirror(dir, run, source, links, s, codec, target, logBytes, 1);
            case "mirror3" -> mirror(dir, run, source, links, s, codec, target, logBytes, 3);
            case "replication" -> replication(dir, run, source, codec, records, logBytes);
            case "replication3" -> replication3(dir, run, codec);
            default -> mm2(dir, run, source, codec, target, logBytes,
                s.startsWith("mm2-tasks-") ? Integer.parseInt(s.substring("mm2-tasks-".length())) : mm2Tasks);
        };
    }

    /**
     * Of the MM2 configurations tried, the one with the highest median catch-up throughput becomes {@code mm2} (the
     * column the report compares); {@code mm2_sweep} lists every configuration with its medians.
     */
    private void mm2SweepSummary(Map<String, Object> r) {
        List<Map<String, Object>> tried = new ArrayList<>();
        String best = null;
        double bestMBps = -1;
        for (String s : order()) {
            if (!s.startsWith("mm2-tasks-")) {
                continue;
            }
            String key = resultKey(s);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("tasks_max", Integer.parseInt(s.substring("mm2-tasks-".length())));
            row.put("catch_up_MBps", get(r, key, "catch_up", "MBps"));
            row.put("cpu_s_per_GiB", get(r, key, "catch_up", "cpu_s_per_GiB"));
            row.put("lag_p99_ms", get(r, key, "lag", "p99_ms"));
            tried.add(row);
            Double mbps = get(r, key, "catch_up", "MBps");
            if (mbps != null && mbps > bestMBps) {
                bestMBps = mbps;
                best = key;
            }
        }
        Map<String, Object> sweep = new LinkedHashMap<>();
        sweep.put("tried", tried);
        sweep.put("best", best);
        r.put("mm2_sweep", sweep);
        if (best != null) {
            r.put("mm2", r.get(best));
        }
    }

    /** The follower's fetch sizes, the same as the mirror's and MM2's consumer's (see {@link #fetchMaxBytes}). */
    private Map<String, String> replicaFetchConfig() {
        return Map.of("replica.fetch.max.bytes", String.valueOf(fetchPartitionMaxBytes),
            "replica.fetch.response.max.bytes", String.valueOf(fetchMaxBytes));
    }

    // ---------------------------------------------------------------- scenarios

    /**
     * What a measurement watches: the copying side's CPU, the source broker's CPU and every JVM's GC log, and the JVM
     * whose catch-up {@code --profile=true} records (null: none).
     */
    private record Watched(DoubleSupplier copierCpu, DoubleSupplier sourceCpu, Map<String, Path> gcLogs, Profiled profiled) {
        Watched(DoubleSupplier copierCpu, DoubleSupplier sourceCpu, Map<String, Path> gcLogs) {
            this(copierCpu, sourceCpu, gcLogs, null);
        }
    }

    /** The JVM to profile and where its recording goes. */
    private record Profiled(long pid, Path recording) {
    }

    /** A step that starts a copy. */
    @FunctionalInterface
    private interface Action {
        void run() throws Exception;
    }

    /**
     * A mirror scenario, catch-up then lag: {@code mirror} (one destination broker, with --verify after the catch-up),
     * {@code mirror3} (a 3-broker RF 3 destination), {@code mirror-fsync} or a link's ({@link SourceLinks}; one
     * destination broker).
     */
    private Map<String, Object> mirror(Path dir, String run, BenchCluster source, SourceLinks links, String scenario,
                                       String codec, long[] target, long logBytes, int brokers) throws Exception {
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("destination_brokers", brokers);
        res.put("link", SourceLinks.describe(scenario));
        Map<String, String> destConfig = new HashMap<>(links.destinationConfig(scenario));
        if (scenario.equals("mirror-fsync")) {
            destConfig.putAll(SLOW_DISK);
            res.put("destination_disk", "every append forced to disk (log.flush.interval.messages=1)");
        }
        log("[" + codec + "] " + run + ": starting a destination cluster of " + brokers + " broker(s)");
        String clusterName = run + "-dest";
        try (BenchCluster dest = BenchCluster.startWithController(home, dir, clusterName, brokers, destConfig, lagTrace);
             ClusterMirrorAdmin cm = ClusterMirrorAdmin.create(dest.clientProps())) {
            Map<String, String> mc = new HashMap<>(links.enter(scenario, source.bootstrap()));
            mc.put("mirror.fetch.max.bytes", String.valueOf(fetchMaxBytes));
            mc.put("mirror.fetch.partition.max.bytes", String.valueOf(fetchPartitionMaxBytes));
            cm.createClusterMirror("bench", mc).all().get(60, TimeUnit.SECONDS);
            res.put("mirror_config", "mirror.fetch.max.bytes " + fetchMaxBytes + ", mirror.fetch.partition.max.bytes "
                + fetchPartitionMaxBytes + ", other mirror.fetch.* defaults (min.bytes 1, max.wait.ms 500, "
                + "read_committed)");
            Watched w = new Watched(dest::brokerCpuSeconds, () -> source.node(1).cpuSeconds(), gcLogs(source, dest, null),
                new Profiled(dest.firstBroker().pid(), dir.resolve(run + "-catch-up")));
            Admin da = dest.admin();
            log("[" + codec + "] " + run + ": catch-up");
            long linkBytes = links.forwardedBytes();
            Path destGcLog = dest.firstBroker().gcLog();
            int heapMark = GcLog.mark(destGcLog);
            res.put("catch_up", catchUp(w, () -> cm.startMirrorTopics("bench", List.of(TOPIC), List.of()).all()
                .get(60, TimeUnit.SECONDS), () -> sum(endOffsetsOrZero(da, TOPIC)), sum(target), logBytes));
            res.put("destination_heap_after_gc", GcLog.heapAfterGcSeries(destGcLog, heapMark));
            if (scenario.startsWith(SourceLinks.WAN)) { // evidence that the copy crossed the WAN proxy
                res.put("wan_proxy_MiB_during_catch_up", round((links.forwardedBytes() - linkBytes) / 1048576.0));
            }
            if (scenario.equals("mirror")) {
                log("[" + codec + "] " + run + ": --verify of the caught-up topic");
                res.put("verify", verify(cm));
            }
            String lagTopic = "lag-" + run;
            createTopic(source.admin(), lagTopic, Map.of());
            cm.startMirrorTopics("bench", List.of(lagTopic), List.of()).all().get(60, TimeUnit.SECONDS);
            awaitMirroring(cm, lagTopic);
            log("[" + codec + "] " + run + ": lag at " + lagRate + " MB/s");
            res.put("lag", traced(lag(dir.resolve(run), source.bootstrap(), dest.bootstrap(), lagTopic, codec, w), dest));
        }
        discardWork(dir.resolve(clusterName));
        return res;
    }

    /** GC logs of the source broker, a destination cluster's brokers and MirrorMaker 2 (when given). */
    private static Map<String, Path> gcLogs(BenchCluster source, BenchCluster dest, Path mm2) {
        Map<String, Path> logs = new LinkedHashMap<>(source.gcLogs("source"));
        if (dest != null) {
            logs.putAll(dest.gcLogs("destination"));
        }
        if (mm2 != null) {
            logs.put("mm2", mm2);
        }
        return logs;
    }
    /**
     * The integrity check ({@code --verify}) over the caught-up topic: both logs read with raw fetches and compared batch by
     * batch. Throughput is one side's stored bytes per second of the whole check.
     */
    private static Map<String, Object> verify(ClusterMirrorAdmin cm) throws Exception {
        long start = System.nanoTime();
        List<PartitionVerification> partitions = cm.verifyMirrorTopics("bench", List.of(TOPIC), List.of(), new Properties(),
            new MirrorTopicsOptions()).partitions().get(30, TimeUnit.MINUTES);
        double seconds = (System.nanoTime() - start) / 1e9;
        long bytes = partitions.stream().mapToLong(PartitionVerification::bytes).sum();
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("identical", partitions.stream().allMatch(PartitionVerification::identical));
        res.put("batches", partitions.stream().mapToLong(PartitionVerification::batches).sum());
        res.put("bytes", bytes);
        res.put("seconds", round(seconds));
        res.put("MiBps", round(bytes / seconds / 1048576.0));
        return res;
    }

    private Map<String, Object> mm2(Path dir, String run, BenchCluster source, String codec, long[] target,
                                    long logBytes, int tasks) throws Exception {
        Map<String, Object> res = new LinkedHashMap<>();
        String lagTopic = "lag-" + run;
        createTopic(source.admin(), lagTopic, Map.of());
        log("[" + codec + "] " + run + ": starting a destination cluster and MirrorMaker 2 (dedicated mode)");
        String clusterName = run + "-dest";
        try (BenchCluster dest = BenchCluster.startWithController(home, dir, clusterName, 1, Map.of())) {
            Path mm2Dir = dir.resolve(run).resolve("mm2");
            Files.createDirectories(mm2Dir);
            Properties p = mm2Config(source, dest, codec, lagTopic, tasks);
            Path props = mm2Dir.resolve("mm2.properties");
            try (var w = Files.newBufferedWriter(props)) {
                p.store(w, "MirrorMaker 2 for the benchmark");
            }
            res.put("tasks_max", tasks);
            res.put("mm2_config", new java.util.TreeMap<>(p));
            Path log4j = mm2Dir.resolve("log4j2.properties");
            Files.writeString(log4j, "rootLogger.level=WARN\nrootLogger.appenderRef.out.ref=OUT\n"
                + "appender.out.type=Console\nappender.out.name=OUT\nappender.out.layout.type=PatternLayout\n"
                + "appender.out.layout.pattern=[%d] %p %m (%c)%n\n");
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> cmd = new ArrayList<>(List.of(java));
            cmd.addAll(List.of(System.getProperty("bench.mm2.heap", "-Xmx1G -Xms1G").split(" ")));
            Path gcLog = mm2Dir.resolve("gc.log");
            cmd.addAll(List.of("-XX:+UseG1GC", GcLog.option(gcLog), "-Dlog4j2.configurationFile=" + log4j,
                "-cp", classpath, "org.apache.kafka.connect.mirror.MirrorMaker", props.toString(), "--clusters", "dst"));
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.redirectErrorStream(true).redirectOutput(mm2Dir.resolve("mm2.out").toFile());
            Admin da = dest.admin();
            AtomicReference<Process> mm2 = new AtomicReference<>();
            Watched w = new Watched(() -> (mm2.get() == null ? 0 : ProcCpu.cpuSeconds(mm2.get().pid()))
                + dest.brokerCpuSeconds(), () -> source.node(1).cpuSeconds(), gcLogs(source, dest, gcLog));
            try {
                res.put("catch_up", catchUp(w, () -> {
                    mm2.set(pb.start());
                    LaunchedNode.killOnExit(mm2.get());
                }, () -> {
                    if (!mm2.get().isAlive()) {
                        throw new IllegalStateException("MirrorMaker 2 exited: " + tail(mm2Dir.resolve("mm2.out")));
                    }
                    return sum(endOffsetsOrZero(da, TOPIC));
                }, sum(target), logBytes));
                @SuppressWarnings("unchecked")
                Map<String, Object> cu = (Map<String, Object>) res.get("catch_up");
                cu.put("destination_log_bytes", sum(partitionSizes(da, dest.firstBroker().nodeId, TOPIC)));
                log("[" + codec + "] " + run + ": lag at " + lagRate + " MB/s");
                res.put("lag", lag(dir.resolve(run), source.bootstrap(), dest.bootstrap(), lagTopic, codec, w));
            } finally {
                Process process = mm2.get();
                if (process != null) {
                    process.destroy();
                    if (!process.waitFor(30, TimeUnit.SECONDS)) {
                        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                    }
                }
            }
        }
        discardWork(dir.resolve(clusterName));
        return res;
    }

    /**
     * MirrorMaker 2 tuned for throughput: more tasks, bigger producer batches with linger, compression on the
     * target (the source's codec), the producer's in-flight limit back at the client default of 5 (Connect's
     * worker sets 1 for source tasks; {@code <target>.producer.*} becomes the worker's {@code producer.*}, which
     * overrides it), larger request size and buffer, and the fetch sizes of the other copiers.
     */
    private Properties mm2Config(BenchCluster source, BenchCluster dest, String codec, String lagTopic, int tasks) {
        Properties p = new Properties();
        p.put("clusters", "src,dst");
        p.put("src.bootstrap.servers", source.bootstrap());
        p.put("dst.bootstrap.servers", dest.bootstrap());
        p.put("src->dst.enabled", "true");
        p.put("dst->src.enabled", "false");
        p.put("src->dst.topics", TOPIC + "|" + lagTopic);
        p.put("replication.policy.class", "org.apache.kafka.connect.mirror.IdentityReplicationPolicy");
        p.put("tasks.max", String.valueOf(tasks));
        for (String k : List.of("replication.factor", "checkpoints.topic.replication.factor",
            "heartbeats.topic.replication.factor", "offset-syncs.topic.replication.factor",
            "offset.storage.replication.factor", "status.storage.replication.factor",
            "config.storage.replication.factor")) {
            p.put(k, "1");
        }
        p.put("sync.topic.acls.enabled", "false");
        p.put("dst.producer.batch.size", "262144");
        p.put("dst.producer.linger.ms", "10");
        p.put("dst.producer.compression.type", codec);
        p.put("dst.producer.acks", "1");
        p.put("dst.producer.max.in.flight.requests.per.connection", "5");
        p.put("dst.producer.max.request.size", "10485760");
        p.put("dst.producer.buffer.memory", String.valueOf(64L << 20));
        p.put("src.consumer.max.poll.records", "2000");
        p.put("src.consumer.fetch.min.bytes", "1");
        p.put("src.consumer.fetch.max.bytes", String.valueOf(fetchMaxBytes));
        p.put("src.consumer.max.partition.fetch.bytes", String.valueOf(fetchPartitionMaxBytes));
        p.put("src.consumer.auto.offset.reset", "earliest");
        return p;
    }

    /**
     * Kafka's follower replication: a new broker joins the source cluster and a reassignment adds a replica of
     * every partition on it. The catch-up ends when the follower holds, for every partition, as many bytes as the
     * leader: the log is not written during the catch-up and a follower appends the leader's batches unchanged, so
     * equal sizes mean equal log end offsets (offset lag 0), without waiting for the ISR update that follows. The
     * broker is removed again afterwards, so that each repeat starts from the same one-replica topic.
     */
    private Map<String, Object> replication(Path dir, String run, BenchCluster source, String codec, long records,
                                            long logBytes) throws Exception {
        Map<String, Object> res = new LinkedHashMap<>();
        KafkaNode follower = source.addBroker();
        int followerId = follower.nodeId;
        log("[" + codec + "] " + run + ": added broker " + followerId + " to the source cluster, a replica of " + TOPIC
            + " on it");
        source.awaitBroker(followerId);
        Admin sa = source.admin();
        res.put("replica_fetcher_config", "num.replica.fetchers 1, replica.fetch.max.bytes " + fetchPartitionMaxBytes
            + ", replica.fetch.response.max.bytes " + fetchMaxBytes + ", replica.fetch.wait.max.ms 500");
        long[] leaderSizes = partitionSizes(sa, 1, TOPIC);
        Map<String, Path> gc = new LinkedHashMap<>(source.gcLogs("source"));
        gc.put("follower", gc.remove("source-node" + followerId));
        Watched w = new Watched(follower::cpuSeconds, () -> source.node(1).cpuSeconds(), gc,
            new Profiled(follower.pid(), dir.resolve(run + "-catch-up")));
        res.put("catch_up", catchUp(w, () -> reassign(sa, List.of(1, followerId)), () -> {
            long[] sizes = partitionSizes(sa, followerId, TOPIC);
            return java.util.Arrays.equals(sizes, leaderSizes) ? records
                : Math.min(records - 1, (long) ((double) sum(sizes) / logBytes * records));
        }, records, logBytes));

        String lagTopic = "lag-" + run;
        Map<Integer, List<Integer>> assignment = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            assignment.put(p, List.of(1, followerId));
        }
        sa.createTopics(List.of(new NewTopic(lagTopic, assignment))).all().get(60, TimeUnit.SECONDS);
        log("[" + codec + "] " + run + ": lag at " + lagRate + " MB/s (RF=2 topic, consumer on the leader)");
        res.put("lag", lag(dir.resolve(run), source.bootstrap(), source.bootstrap(), lagTopic, codec, w));

        sa.deleteTopics(List.of(lagTopic)).all().get(60, TimeUnit.SECONDS);
        reassign(sa, List.of(1));
        awaitNoReassignments(sa);
        source.removeBroker(follower);
        return res;
    }

    private void reassign(Admin admin, List<Integer> replicas) throws Exception {
        Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            moves.put(new TopicPartition(TOPIC, p), Optional.of(new NewPartitionReassignment(replicas)));
        }
        admin.alterPartitionReassignments(moves).all().get(60, TimeUnit.SECONDS);
    }

    private static void awaitNoReassignments(Admin admin) throws Exception {
        awaitNoReassignments(admin, 120_000);
    }

    /** Waits until no partition reassignment is left (each new replica joined its ISR), at most {@code timeoutMs}. */
    static void awaitNoReassignments(Admin admin, long timeoutMs) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (!admin.listPartitionReassignments().reassignments().get(30, TimeUnit.SECONDS).isEmpty()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("a partition reassignment did not finish in " + timeoutMs / 1000 + " s");
            }
            sleep(200);
        }
    }

    /** Waits until every partition of the mirror topic is MIRRORING. */
    private void awaitMirroring(ClusterMirrorAdmin cm, String topic) throws Exception {
        long deadline = System.currentTimeMillis() + 120_000;
        while (true) {
            var d = cm.describeClusterMirrors(List.of("bench")).all().get(30, TimeUnit.SECONDS).get("bench");
            long mirroring = d.topics().stream().filter(t -> t.topic().equals(topic))
                .flatMap(t -> t.partitions().stream())
                .filter(p -> p.state() == io.clustermirror.common.PartitionState.MIRRORING).count();
            if (mirroring >= partitions) {
                return;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException(topic + ": only " + mirroring + " partitions MIRRORING after 120 s");
            }
            sleep(200);
        }
    }

    /**
     * The baseline for the mirror's 3-broker lag: Kafka's own RF=3 replication on a 3-broker cluster, from
     * producer send to visible on the leader (the high watermark waits for both followers).
     */
    private Map<String, Object> replication3(Path dir, String run, String codec) throws Exception {
        Map<String, Object> res = new LinkedHashMap<>();
        log("[" + codec + "] " + run + ": starting a cluster of 3 brokers");
        try (BenchCluster c = BenchCluster.startWithController(home, dir, run, 3, replicaFetchConfig(), lagTrace)) {
            String lagTopic = "lag-" + run;
            c.admin().createTopics(List.of(new NewTopic(lagTopic, partitions, (short) 3))).all()
                .get(60, TimeUnit.SECONDS);
            log("[" + codec + "] " + run + ": lag at " + lagRate + " MB/s (RF=3 topic, consumer on the leaders)");
            res.put("lag", traced(lag(dir.resolve(run), c.bootstrap(), c.bootstrap(), lagTopic, codec,
                new Watched(c::brokerCpuSeconds, () -> 0.0, c.gcLogs("replication3"))), c));
        }
        discardWork(dir.resolve(run));
        return res;
    }

    // ---------------------------------------------------------------- measurements

    /**
     * Starts a copy and polls progress (records copied) every 100 ms until it reaches the target. Throughput and
     * CPU are taken from the first sample that shows progress to the end, so start-up costs (JVM start, topic
     * creation, MM2's group joins) do not count; the time to the first progress is reported separately. GC
     * figures cover the whole catch-up, start included.
     */
    private Map<String, Object> catchUp(Watched w, Action start, LongSupplier progress, long target, long logBytes)
            throws Exception {
        Map<String, Integer> gc0 = GcLog.marks(w.gcLogs());
        boolean profiling = profiler != null && w.profiled() != null && profiler.start(w.profiled().pid());
        long startNanos = System.nanoTime();
        double cpuStart = w.copierCpu().getAsDouble();
        double sourceCpuStart = w.sourceCpu().getAsDouble();
        start.run();
        long deadline = startNanos + TimeUnit.MINUTES.toNanos(30);
        long firstNanos = -1;
        double firstCpu = Double.NaN;
        double firstSourceCpu = Double.NaN;
        long firstProgress = 0;
        long last = 0;
        while (true) {
            long now = System.nanoTime();
            long done;
            try {
                done = progress.getAsLong();
            } catch (IllegalStateException e) {
                throw e;
            } catch (RuntimeException e) {
                done = last;
            }
            last = done;
            if (done > 0 && firstNanos < 0) {
                firstNanos = now;
                firstCpu = w.copierCpu().getAsDouble();
                firstSourceCpu = w.sourceCpu().getAsDouble();
                firstProgress = done;
            }
            if (done >= target) {
                double endCpu = w.copierCpu().getAsDouble();
                double endSourceCpu = w.sourceCpu().getAsDouble();
                double sec = (now - firstNanos) / 1e9;
                // The first sample already shows some progress: scale the volume to what was copied after it.
                double fraction = (double) (target - firstProgress) / target;
                if (sec < 0.5 || fraction < 0.5) { // copied in less than a sample or two: use the whole interval
                    sec = (now - startNanos) / 1e9;
                    fraction = 1.0;
                    firstCpu = cpuStart;
                    firstSourceCpu = sourceCpuStart;
                }
                double bytes = logBytes * fraction;
                double gib = bytes / (1024.0 * 1024 * 1024);
                double cpuSec = endCpu - firstCpu;
                double sourceCpuSec = endSourceCpu - firstSourceCpu;
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("seconds", round(sec));
                m.put("seconds_to_first_progress", round((firstNanos - startNanos) / 1e9));
                m.put("seconds_total", round((now - startNanos) / 1e9));
                m.put("MBps", round(bytes / 1048576.0 / sec));
                m.put("payload_MBps", round(target * fraction * Payloads.RECORD_SIZE / 1048576.0 / sec));
                m.put("records_per_s", Math.round(target * fraction / sec));
                m.put("cpu_s", round(cpuSec));
                m.put("cpu_s_per_GiB", round(cpuSec / gib));
                m.put("cpu_s_total_incl_startup", round(endCpu - cpuStart));
                m.put("cores_busy", round(cpuSec / sec));
                m.put("source_cpu_s_per_GiB", round(sourceCpuSec / gib));
                m.put("source_cores_busy", round(sourceCpuSec / sec));
                m.put("gc", GcLog.since(w.gcLogs(), gc0));
                if (profiling) {
                    m.put("profile", profiler.stop(w.profiled().pid(), w.profiled().recording()));
                }
                log(String.format("    catch-up: %.1f s, %.1f MB/s, %d rec/s, %.1f CPU s/GiB (source %.1f)", sec,
                    bytes / 1048576.0 / sec, Math.round(target * fraction / sec), cpuSec / gib, sourceCpuSec / gib));
                return m;
            }
            if (now > deadline) {
                throw new IllegalStateException("catch-up did not finish in 30 minutes (" + done + " of " + target + ")");
            }
            sleep(100);
        }
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> lag(Path runDir, String from, String to, String topic, String codec, Watched w)
            throws Exception {
        Map<String, Integer> gc0 = GcLog.marks(w.gcLogs());
        double cpu0 = w.copierCpu().getAsDouble();
        double sourceCpu0 = w.sourceCpu().getAsDouble();
        long t0 = System.nanoTime();
        Map<String, Object> m = LagProbe.run(runDir.resolve("probe"), classpath, from, to, topic, partitions, codec,
            "1", lagRate, lagWarmup, lagMeasure, lagDrain, lagTrace && !from.equals(to));
        double sec = (System.nanoTime() - t0) / 1e9;
        m.put("copier_cores_busy", round((w.copierCpu().getAsDouble() - cpu0) / sec));
        m.put("source_cores_busy", round((w.sourceCpu().getAsDouble() - sourceCpu0) / sec));
        Map<String, Object> gc = GcLog.since(w.gcLogs(), gc0);
        gc.putAll((Map<String, Object>) m.remove("probe_gc"));
        m.put("gc", gc);
        log("    lag: p50 " + m.get("p50_ms") + " ms, p99 " + m.get("p99_ms") + " ms, max " + m.get("max_ms")
            + " ms (received " + m.get("received") + " of " + m.get("sent") + " records due in the window)");
        return m;
    }

    /** With {@code --lag.trace=true}: the lag's figures and the destination brokers' requests in its window. */
    private Map<String, Object> traced(Map<String, Object> lag, BenchCluster destination) throws IOException {
        Double from = get(lag, "window_start_ms");
        Double to = get(lag, "window_end_ms");
        if (lagTrace && from != null && to != null) {
            lag.put("destination_requests", RequestTrace.summarise(destination.requestLogs(), from.longValue(), to.longValue()));
        }
        return lag;
    }

    private static Map<String, Object> ratios(Map<String, Object> r) {
        Map<String, Object> m = new LinkedHashMap<>();
        Double mirrorTp = get(r, "mirror", "catch_up", "MBps");
        Double mm2Tp = get(r, "mm2", "catch_up", "MBps");
        Double replTp = get(r, "replication", "catch_up", "MBps");
        Double mirrorCpu = get(r, "mirror", "catch_up", "cpu_s_per_GiB");
        Double mm2Cpu = get(r, "mm2", "catch_up", "cpu_s_per_GiB");
        Double replCpu = get(r, "replication", "catch_up", "cpu_s_per_GiB");
        if (mirrorTp != null && mm2Tp != null) {
            m.put("throughput_mirror_over_mm2", round(mirrorTp / mm2Tp));
            m.put("cpu_per_GiB_mirror_over_mm2", round(mirrorCpu / mm2Cpu));
        }
        if (mirrorTp != null && replTp != null) {
            m.put("throughput_mirror_over_replication", round(mirrorTp / replTp));
            m.put("cpu_per_GiB_mirror_over_replication", round(mirrorCpu / replCpu));
        }
        return m;
    }

    @SuppressWarnings("unchecked")
    static Double get(Map<String, Object> r, String... path) {
        Object o = r;
        for (String p : path) {
            if (!(o instanceof Map)) {
                return null;
            }
            o = ((Map<String, Object>) o).get(p);
        }
        return o instanceof Number n ? n.doubleValue() : null;
    }

    // ---------------------------------------------------------------- helpers

    private void createTopic(Admin admin, String topic, Map<String, String> configs) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs)))
            .all().get(60, TimeUnit.SECONDS);
    }

    /** Sends {@code records} 1 KiB records round-robin over {@code targets}, so each gets the same number. */
    static long preload(String bootstrap, String codec, List<TopicPartition> targets, long records) throws Exception {
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.ACKS_CONFIG, "1");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        pp.put(ProducerConfig.BATCH_SIZE_CONFIG, "131072");
        pp.put(ProducerConfig.BUFFER_MEMORY_CONFIG, String.valueOf(128L << 20));
        pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        byte[][] payloads = Payloads.pool();
        AtomicReference<Exception> error = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp, new ByteArraySerializer(),
            new ByteArraySerializer())) {
            for (long i = 0; i < records; i++) {
                TopicPartition tp = targets.get((int) (i % targets.size()));
                producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, null,
                    payloads[(int) (i % payloads.length)]), (md, e) -> {
                        if (e != null) {
                            error.compareAndSet(null, e);
                        }
                    });
                if (error.get() != null) {
                    throw error.get();
                }
            }
            producer.flush();
        }
        if (error.get() != null) {
            throw error.get();
        }
        return records;
    }

    long[] endOffsets(Admin admin, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            req.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        var res = admin.listOffsets(req).all().get(30, TimeUnit.SECONDS);
        long[] out = new long[partitions];
        res.forEach((tp, info) -> out[tp.partition()] = info.offset());
        return out;
    }

    /** End offsets, or zeros while the topic does not exist yet. */
    private long[] endOffsetsOrZero(Admin admin, String topic) {
        try {
            return endOffsets(admin, topic);
        } catch (Exception e) {
            return new long[partitions];
        }
    }

    /** The size of each partition's log of the topic on one broker (0 where it has none). */
    long[] partitionSizes(Admin admin, int brokerId, String topic) {
        long[] sizes = new long[partitions];
        try {
            var dirs = admin.describeLogDirs(List.of(brokerId)).allDescriptions().get(30, TimeUnit.SECONDS);
            for (var dir : dirs.get(brokerId).values()) {
                for (Map.Entry<TopicPartition, ReplicaInfo> e : dir.replicaInfos().entrySet()) {
                    if (e.getKey().topic().equals(topic) && !e.getValue().isFuture()) {
                        sizes[e.getKey().partition()] += e.getValue().size();
                    }
                }
            }
            return sizes;
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static long sum(long[] a) {
        long s = 0;
        for (long v : a) {
            s += v;
        }
        return s;
    }

    static double round(double v) {
        return Math.round(v * 100.0) / 100.0;
    }

    static void log(String msg) {
        System.out.println("[" + LocalTime.now().format(LOG_TIME) + "] " + msg);
        System.out.flush();
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }

    private static String tail(Path f) {
        try {
            List<String> l = Files.readAllLines(f);
            return String.join("\n", l.subList(Math.max(0, l.size() - 20), l.size()));
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * Deletes a finished run's work directory (node data, logs, recordings), unless {@code BENCH_KEEP_WORK} is set: a
     * profile or a log is read there after the run.
     */
    static void discardWork(Path dir) throws IOException {
        if (System.getenv("BENCH_KEEP_WORK") == null) {
            deleteTree(dir);
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    static Properties adminProps(String bootstrap) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return p;
    }
}
