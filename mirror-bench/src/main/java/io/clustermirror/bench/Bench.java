package io.clustermirror.bench;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.PartitionVerification;
import io.clustermirror.testkit.LaunchedNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

/**
 * The benchmark: for each codec, preloads a source topic, then measures (1) Cluster Mirror, (2) MirrorMaker 2
 * and (3) Kafka's follower replication copying it (catch-up throughput and CPU per GiB on the copying side),
 * and the steady-state lag of each at a fixed produce rate. Writes markdown, JSON and a PNG chart.
 *
 * <p>Options (-Dname=value or --name=value): home, work, out, volume.mb (1024), codecs (lz4,none), partitions
 * (12), lag.rate.mb (20), lag.warmup.s (10), lag.measure.s (20), scenarios (mirror,mirror3,mm2,replication,
 * replication3),
 * mm2.tasks (4), label.
 */
public final class Bench {
    static final String TOPIC = "bench";

    final Path home;
    final Path work;
    final Path out;
    final long volumeBytes;
    final List<String> codecs;
    final int partitions;
    final double lagRate;
    final int lagWarmup;
    final int lagMeasure;
    final Set<String> scenarios;
    final int mm2Tasks;
    final String label;
    final String mm2Classpath;

    Bench(Map<String, String> o) {
        home = Path.of(o.getOrDefault("home", ".")).toAbsolutePath().normalize();
        work = Path.of(o.getOrDefault("work", home.resolve("bench/results/tmp").toString())).toAbsolutePath();
        out = Path.of(o.getOrDefault("out", home.resolve("bench/results").toString())).toAbsolutePath();
        volumeBytes = Long.parseLong(o.getOrDefault("volume.mb", "1024")) * 1024 * 1024;
        codecs = List.of(o.getOrDefault("codecs", "lz4,none").split(","));
        partitions = Integer.parseInt(o.getOrDefault("partitions", "12"));
        lagRate = Double.parseDouble(o.getOrDefault("lag.rate.mb", "20"));
        lagWarmup = Integer.parseInt(o.getOrDefault("lag.warmup.s", "10"));
        lagMeasure = Integer.parseInt(o.getOrDefault("lag.measure.s", "20"));
        scenarios = Set.of(o.getOrDefault("scenarios", "mirror,mirror3,mm2,replication,replication3").split(","));
        mm2Tasks = Integer.parseInt(o.getOrDefault("mm2.tasks", "4"));
        label = o.getOrDefault("label", LocalDate.now(ZoneOffset.UTC).toString());
        mm2Classpath = o.getOrDefault("mm2.classpath", System.getProperty("java.class.path"));
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
        List<Map<String, Object>> results = new Bench(o).runAll();
        for (Map<String, Object> r : results) {
            System.out.println(Report.markdown(r));
        }
    }

    List<Map<String, Object>> runAll() throws Exception {
        List<Map<String, Object>> all = new ArrayList<>();
        Files.createDirectories(out);
        for (String codec : codecs) {
            Map<String, Object> r = runCodec(codec);
            all.add(r);
            String base = label + "-" + codec;
            Files.writeString(out.resolve(base + ".json"), Json.write(r) + "\n");
            Files.writeString(out.resolve(base + ".md"), Report.markdown(r));
            Chart.write(r, out.resolve(base + ".png"));
            log("wrote " + out.resolve(base + ".md"));
        }
        return all;
    }

    Map<String, Object> runCodec(String codec) throws Exception {
        Path dir = work.resolve(codec);
        deleteTree(dir);
        Files.createDirectories(dir);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("codec", codec);
        r.put("started_utc", ZonedDateTime.now(ZoneOffset.UTC).toString());
        r.put("machine", Machine.describe());
        Map<String, Object> setup = new LinkedHashMap<>();
        r.put("setup", setup);
        long t0 = System.nanoTime();
        log("[" + codec + "] starting the source cluster");
        try (BenchCluster source = BenchCluster.start(home, dir, "source", 1, Map.of())) {
            Admin sa = source.admin();
            createTopic(sa, TOPIC, Map.of());
            log("[" + codec + "] preloading " + (volumeBytes >> 20) + " MiB of 1 KiB records");
            long pre = System.nanoTime();
            long records = preload(source.bootstrap(), codec, volumeBytes / Payloads.RECORD_SIZE);
            double preSec = (System.nanoTime() - pre) / 1e9;
            long logBytes = logSize(sa, 1, TOPIC);
            setup.put("records", records);
            setup.put("record_bytes", Payloads.RECORD_SIZE);
            setup.put("partitions", partitions);
            setup.put("payload_bytes", records * Payloads.RECORD_SIZE);
            setup.put("source_log_bytes", logBytes);
            setup.put("preload_s", round(preSec));
            setup.put("lag_rate_MBps", lagRate);
            setup.put("producer", "acks=1 batch.size=131072 linger.ms=10 compression.type=" + codec);
            log(String.format("[%s] preloaded %d records, %.1f MiB on disk, in %.1f s", codec, records,
                logBytes / 1048576.0, preSec));
            long[] target = endOffsets(sa, TOPIC);

            if (scenarios.contains("mirror")) {
                r.put("mirror", mirror(dir, source, codec, target, logBytes, 1, true));
            }
            if (scenarios.contains("mirror3")) {
                r.put("mirror_3_brokers", mirror(dir, source, codec, target, logBytes, 3, false));
            }
            if (scenarios.contains("mm2")) {
                r.put("mm2", mm2(dir, source, codec, target, logBytes));
            }
            if (scenarios.contains("replication3")) {
                r.put("replication_3_brokers", replication3(dir, source, codec));
            }
            if (scenarios.contains("replication")) {
                r.put("replication", replication(source, codec, records, logBytes));
            }
        }
        r.put("ratios", ratios(r));
        r.put("total_s", round((System.nanoTime() - t0) / 1e9));
        r.put("loadavg_end", Machine.loadavg());
        if (System.getenv("BENCH_KEEP_WORK") == null) {
            deleteTree(dir);
        }
        return r;
    }

    // ---------------------------------------------------------------- scenarios

    private Map<String, Object> mirror(Path dir, BenchCluster source, String codec, long[] target, long logBytes,
                                       int brokers, boolean catchUp) throws Exception {
        String name = brokers == 1 ? "mirror" : "mirror" + brokers;
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("destination_brokers", brokers);
        log("[" + codec + "] " + name + ": starting a destination cluster of " + brokers + " broker(s)");
        try (BenchCluster dest = BenchCluster.start(home, dir, name + "-dest", brokers, Map.of());
             ClusterMirrorAdmin cm = ClusterMirrorAdmin.create(dest.clientProps())) {
            Map<String, String> mc = new HashMap<>();
            mc.put("bootstrap.servers", source.bootstrap());
            cm.createClusterMirror("bench", mc).all().get(60, TimeUnit.SECONDS);
            res.put("mirror_config", "defaults (mirror.fetch.*: max.bytes 50 MiB, partition.max.bytes 1 MiB, "
                + "min.bytes 1, max.wait.ms 500, read_committed)");
            Admin da = dest.admin();
            if (catchUp) {
                log("[" + codec + "] " + name + ": catch-up");
                long start = System.nanoTime();
                double cpu0 = dest.cpuSeconds();
                cm.startMirrorTopics("bench", List.of(TOPIC), List.of()).all().get(60, TimeUnit.SECONDS);
                res.put("catch_up", catchUp(() -> sum(endOffsetsOrZero(da, TOPIC)), sum(target), dest::cpuSeconds,
                    logBytes, start, cpu0));
                log("[" + codec + "] " + name + ": --verify of the caught-up topic");
                res.put("verify", verify(cm));
            }
            String lagTopic = "lag-" + name;
            createTopic(source.admin(), lagTopic, Map.of());
            cm.startMirrorTopics("bench", List.of(lagTopic), List.of()).all().get(60, TimeUnit.SECONDS);
            awaitMirroring(cm, lagTopic);
            log("[" + codec + "] " + name + ": lag at " + lagRate + " MB/s");
            res.put("lag", lag(source.bootstrap(), dest.bootstrap(), lagTopic, codec, dest::cpuSeconds));
        }
        return res;
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

    private Map<String, Object> mm2(Path dir, BenchCluster source, String codec, long[] target, long logBytes)
            throws Exception {
        Map<String, Object> res = new LinkedHashMap<>();
        String lagTopic = "lag-mm2";
        createTopic(source.admin(), lagTopic, Map.of());
        log("[" + codec + "] mm2: starting a destination cluster and MirrorMaker 2 (dedicated mode)");
        try (BenchCluster dest = BenchCluster.start(home, dir, "mm2-dest", 1, Map.of())) {
            Path mm2Dir = dir.resolve("mm2");
            Files.createDirectories(mm2Dir);
            Properties p = new Properties();
            p.put("clusters", "src,dst");
            p.put("src.bootstrap.servers", source.bootstrap());
            p.put("dst.bootstrap.servers", dest.bootstrap());
            p.put("src->dst.enabled", "true");
            p.put("dst->src.enabled", "false");
            p.put("src->dst.topics", TOPIC + "|" + lagTopic);
            p.put("replication.policy.class", "org.apache.kafka.connect.mirror.IdentityReplicationPolicy");
            p.put("tasks.max", String.valueOf(mm2Tasks));
            for (String k : List.of("replication.factor", "checkpoints.topic.replication.factor",
                "heartbeats.topic.replication.factor", "offset-syncs.topic.replication.factor",
                "offset.storage.replication.factor", "status.storage.replication.factor",
                "config.storage.replication.factor")) {
                p.put(k, "1");
            }
            p.put("sync.topic.acls.enabled", "false");
            // Throughput tuning as the MM2 docs suggest: more tasks, bigger producer batches with linger,
            // compression on the target (same codec as the source), bigger consumer polls.
            p.put("dst.producer.batch.size", "262144");
            p.put("dst.producer.linger.ms", "10");
            p.put("dst.producer.compression.type", codec);
            p.put("dst.producer.acks", "1");
            p.put("src.consumer.max.poll.records", "2000");
            p.put("src.consumer.fetch.min.bytes", "1");
            p.put("src.consumer.max.partition.fetch.bytes", "1048576");
            p.put("src.consumer.auto.offset.reset", "earliest");
            Path props = mm2Dir.resolve("mm2.properties");
            try (var w = Files.newBufferedWriter(props)) {
                p.store(w, "MirrorMaker 2 for the benchmark");
            }
            res.put("mm2_config", new java.util.TreeMap<>(p));
            Path log4j = mm2Dir.resolve("log4j2.properties");
            Files.writeString(log4j, "rootLogger.level=WARN\nrootLogger.appenderRef.out.ref=OUT\n"
                + "appender.out.type=Console\nappender.out.name=OUT\nappender.out.layout.type=PatternLayout\n"
                + "appender.out.layout.pattern=[%d] %p %m (%c)%n\n");
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> cmd = new ArrayList<>(List.of(java));
            cmd.addAll(List.of(System.getProperty("bench.mm2.heap", "-Xmx1G -Xms1G").split(" ")));
            cmd.addAll(List.of("-XX:+UseG1GC", "-Dlog4j2.configurationFile=" + log4j, "-cp", mm2Classpath,
                "org.apache.kafka.connect.mirror.MirrorMaker", props.toString(), "--clusters", "dst"));
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.redirectErrorStream(true).redirectOutput(mm2Dir.resolve("mm2.out").toFile());
            Admin da = dest.admin();
            long start = System.nanoTime();
            Process mm2 = pb.start();
            LaunchedNode.killOnExit(mm2);
            try {
                long pid = mm2.pid();
                DoubleSupplier cpu = () -> ProcCpu.cpuSeconds(pid) + dest.cpuSeconds();
                double cpu0 = cpu.getAsDouble();
                res.put("catch_up", catchUp(() -> {
                    if (!mm2.isAlive()) {
                        throw new IllegalStateException("MirrorMaker 2 exited: " + tail(mm2Dir.resolve("mm2.out")));
                    }
                    return sum(endOffsetsOrZero(da, TOPIC));
                }, sum(target), cpu, logBytes, start, cpu0));
                @SuppressWarnings("unchecked")
                Map<String, Object> cu = (Map<String, Object>) res.get("catch_up");
                cu.put("destination_log_bytes", logSize(da, 1, TOPIC));
                log("[" + codec + "] mm2: lag at " + lagRate + " MB/s");
                res.put("lag", lag(source.bootstrap(), dest.bootstrap(), lagTopic, codec, cpu));
            } finally {
                mm2.destroy();
                if (!mm2.waitFor(30, TimeUnit.SECONDS)) {
                    mm2.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
        }
        return res;
    }

    private Map<String, Object> replication(BenchCluster source, String codec, long records, long logBytes)
            throws Exception {
        Map<String, Object> res = new LinkedHashMap<>();
        log("[" + codec + "] replication: adding broker 2 to the source cluster and a replica of " + TOPIC + " on it");
        KafkaNode follower = source.addBroker();
        source.awaitReady();
        Admin sa = source.admin();
        Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            moves.put(new TopicPartition(TOPIC, p), Optional.of(new NewPartitionReassignment(List.of(1, 2))));
        }
        res.put("replica_fetcher_config", "Kafka defaults (num.replica.fetchers 1, replica.fetch.max.bytes 1 MiB, "
            + "replica.fetch.response.max.bytes 10 MiB, replica.fetch.wait.max.ms 500)");
        long start = System.nanoTime();
        double cpu0 = follower.cpuSeconds();
        sa.alterPartitionReassignments(moves).all().get(60, TimeUnit.SECONDS);
        // Progress: the follower's log size; done when every partition has both replicas in sync.
        res.put("catch_up", catchUp(() -> {
            long size = logSize(sa, 2, TOPIC);
            return size >= logBytes && allInSync(sa, TOPIC, 2) ? records : (long) ((double) size / logBytes * records);
        }, records, follower::cpuSeconds, logBytes, start, cpu0));

        String lagTopic = "lag-replication";
        Map<Integer, List<Integer>> assignment = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            assignment.put(p, List.of(1, 2));
        }
        sa.createTopics(List.of(new NewTopic(lagTopic, assignment))).all().get(60, TimeUnit.SECONDS);
        log("[" + codec + "] replication: lag at " + lagRate + " MB/s (RF=2 topic, consumer on the leader)");
        res.put("lag", lag(source.bootstrap(), source.bootstrap(), lagTopic, codec, follower::cpuSeconds));
        return res;
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
    private Map<String, Object> replication3(Path dir, BenchCluster source, String codec) throws Exception {
        Map<String, Object> res = new LinkedHashMap<>();
        log("[" + codec + "] replication3: starting a cluster of 3 brokers");
        try (BenchCluster c = BenchCluster.start(home, dir, "replication3", 3, Map.of())) {
            String lagTopic = "lag-replication3";
            c.admin().createTopics(List.of(new NewTopic(lagTopic, partitions, (short) 3))).all()
                .get(60, TimeUnit.SECONDS);
            log("[" + codec + "] replication3: lag at " + lagRate + " MB/s (RF=3 topic, consumer on the leaders)");
            res.put("lag", lag(c.bootstrap(), c.bootstrap(), lagTopic, codec, c::cpuSeconds));
        }
        return res;
    }

    // ---------------------------------------------------------------- measurements

    /**
     * Polls progress (records copied) every 100 ms until it reaches the target. Throughput and CPU are taken
     * from the first sample that shows progress to the end, so start-up costs (JVM start, topic creation, MM2's
     * group joins) do not count; the time to the first progress is reported separately.
     */
    private Map<String, Object> catchUp(LongSupplier progress, long target, DoubleSupplier cpu, long logBytes,
                                        long startNanos, double cpuStart) {
        long deadline = startNanos + TimeUnit.MINUTES.toNanos(10);
        long firstNanos = -1;
        double firstCpu = Double.NaN;
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
                firstCpu = cpu.getAsDouble();
                firstProgress = done;
            }
            if (done >= target) {
                double endCpu = cpu.getAsDouble();
                double sec = (now - firstNanos) / 1e9;
                // The first sample already shows some progress: scale the volume to what was copied after it.
                double fraction = (double) (target - firstProgress) / target;
                if (sec < 0.5 || fraction < 0.5) { // copied in less than a sample or two: use the whole interval
                    sec = (now - startNanos) / 1e9;
                    fraction = 1.0;
                    firstCpu = cpuStart;
                }
                double bytes = logBytes * fraction;
                double cpuSec = endCpu - firstCpu;
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("seconds", round(sec));
                m.put("seconds_to_first_progress", round((firstNanos - startNanos) / 1e9));
                m.put("seconds_total", round((now - startNanos) / 1e9));
                m.put("MBps", round(bytes / 1048576.0 / sec));
                m.put("payload_MBps", round(target * fraction * Payloads.RECORD_SIZE / 1048576.0 / sec));
                m.put("records_per_s", Math.round(target * fraction / sec));
                m.put("cpu_s", round(cpuSec));
                m.put("cpu_s_per_GiB", round(cpuSec / (bytes / (1024.0 * 1024 * 1024))));
                m.put("cpu_s_total_incl_startup", round(endCpu - cpuStart));
                m.put("cores_busy", round(cpuSec / sec));
                log(String.format("    catch-up: %.1f s, %.1f MB/s, %d rec/s, %.1f CPU s/GiB", sec,
                    bytes / 1048576.0 / sec, Math.round(target * fraction / sec), cpuSec / (bytes / (1 << 30))));
                return m;
            }
            if (now > deadline) {
                throw new IllegalStateException("catch-up did not finish in 10 minutes (" + done + " of " + target + ")");
            }
            sleep(100);
        }
    }

    private Map<String, Object> lag(String from, String to, String topic, String codec, DoubleSupplier cpu) {
        double cpu0 = cpu.getAsDouble();
        long t0 = System.nanoTime();
        Map<String, Object> m = LagProbe.run(from, to, topic, partitions, codec, lagRate, lagWarmup, lagMeasure);
        double sec = (System.nanoTime() - t0) / 1e9;
        m.put("copier_cores_busy", round((cpu.getAsDouble() - cpu0) / sec));
        log("    lag: p50 " + m.get("p50_ms") + " ms, p99 " + m.get("p99_ms") + " ms, max " + m.get("max_ms")
            + " ms (" + m.get("measured_records") + " records)");
        return m;
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

    private long preload(String bootstrap, String codec, long records) throws Exception {
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
                // Spread evenly: partition by index, so each partition gets the same number of records.
                producer.send(new ProducerRecord<>(TOPIC, (int) (i % partitions), null, null,
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

    static long logSize(Admin admin, int brokerId, String topic) {
        try {
            long size = 0;
            var dirs = admin.describeLogDirs(List.of(brokerId)).allDescriptions().get(30, TimeUnit.SECONDS);
            for (var dir : dirs.get(brokerId).values()) {
                for (Map.Entry<TopicPartition, ReplicaInfo> e : dir.replicaInfos().entrySet()) {
                    if (e.getKey().topic().equals(topic) && !e.getValue().isFuture()) {
                        size += e.getValue().size();
                    }
                }
            }
            return size;
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    private static boolean allInSync(Admin admin, String topic, int replicas) {
        try {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
            for (TopicPartitionInfo p : d.partitions()) {
                if (p.isr().size() < replicas) {
                    return false;
                }
            }
            return true;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
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
        System.out.println("[" + java.time.LocalTime.now().withNano(0) + "] " + msg);
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
