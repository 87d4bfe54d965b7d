package io.clustermirror.bench;

import io.clustermirror.testsupport.LaunchedNode;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Steady-state lag, measured by two JVMs of their own (so that neither the harness nor the copier shares their
 * heap or GC): a consumer ({@code read_committed}) on the destination and a load generator on the source.
 *
 * <p>The load follows a fixed schedule: record {@code i} is due at {@code start + i / rate}, and its timestamp
 * (CreateTime, kept as-is by all three copiers) is that due time, not the moment it was actually sent, so a
 * stalled producer does not hide the stall (no coordinated omission). The lag of a record is the time the
 * consumer saw it minus its due time. Records due in the measurement window {@code [start + warm-up, start +
 * warm-up + measure)} count; none is dropped for being late: the consumer waits for every one of them (up to a
 * drain timeout) and reports how many it received of how many were sent. The producer also reports the produce
 * latency of the records due in the window (due time to acknowledgement, with the {@code acks} asked for).
 *
 * <p>Protocol: the harness starts both JVMs; the consumer positions itself at the end of the topic, the producer
 * fetches the topic's metadata, and each then writes its {@code ready} file. Only then does the harness fix the
 * start of the schedule, a little ahead, in the {@code start} file both wait for: JVM start and connection set-up
 * are not part of the schedule. Both write their results as properties files.
 */
final class LagProbe {
    private static final int MAX_MS = 120_000;
    private static final long SCHEDULE_LEAD_MS = 1_000;
    private static final long READY_TIMEOUT_MS = 120_000;

    private LagProbe() {
    }

    /** Runs the two probe JVMs against one topic and returns the lag figures. */
    static Map<String, Object> run(Path dir, String classpath, String produceTo, String consumeFrom, String topic,
                                   int partitions, String codec, String acks, double rateMBps, int warmupSec,
                                   int measureSec, int drainSec) throws IOException, InterruptedException {
        return run(dir, classpath, produceTo, consumeFrom, topic, partitions, codec, acks, rateMBps, warmupSec, measureSec,
            drainSec, false);
    }

    /**
     * The same; with {@code traceSource} a third JVM, a consumer on the source ({@code produceTo}), measures when each
     * record became visible there ({@code source_visible}), which splits the lag into the source's part and the copy's.
     */
    static Map<String, Object> run(Path dir, String classpath, String produceTo, String consumeFrom, String topic,
                                   int partitions, String codec, String acks, double rateMBps, int warmupSec,
                                   int measureSec, int drainSec, boolean traceSource) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path start = dir.resolve("start");
        Properties c = new Properties();
        c.setProperty("bootstrap", consumeFrom);
        c.setProperty("topic", topic);
        c.setProperty("partitions", String.valueOf(partitions));
        c.setProperty("rate.MBps", String.valueOf(rateMBps));
        c.setProperty("warmup.ms", String.valueOf(warmupSec * 1000L));
        c.setProperty("measure.ms", String.valueOf(measureSec * 1000L));
        c.setProperty("drain.ms", String.valueOf(drainSec * 1000L));
        c.setProperty("ready", dir.resolve("consumer.ready").toString());
        c.setProperty("start", start.toString());
        c.setProperty("result", dir.resolve("consumer.result").toString());
        Properties p = new Properties();
        p.setProperty("bootstrap", produceTo);
        p.setProperty("topic", topic);
        p.setProperty("codec", codec);
        p.setProperty("acks", acks);
        p.setProperty("rate.MBps", String.valueOf(rateMBps));
        p.setProperty("warmup.ms", String.valueOf(warmupSec * 1000L));
        p.setProperty("measure.ms", String.valueOf(measureSec * 1000L));
        p.setProperty("ready", dir.resolve("producer.ready").toString());
        p.setProperty("start", start.toString());
        p.setProperty("result", dir.resolve("producer.result").toString());
        Properties sc = new Properties();
        sc.putAll(c);
        sc.setProperty("bootstrap", produceTo);
        sc.setProperty("ready", dir.resolve("source-consumer.ready").toString());
        sc.setProperty("result", dir.resolve("source-consumer.result").toString());
        Process consumer = launch(dir, classpath, "consumer", "consumer", c);
        Process sourceConsumer = traceSource ? launch(dir, classpath, "source-consumer", "consumer", sc) : null;
        Process producer = launch(dir, classpath, "producer", "producer", p);
        try {
            awaitFile(dir.resolve("consumer.ready"), consumer, "consumer", dir);
            if (sourceConsumer != null) {
                awaitFile(dir.resolve("source-consumer.ready"), sourceConsumer, "source-consumer", dir);
            }
            awaitFile(dir.resolve("producer.ready"), producer, "producer", dir);
            Path tmp = dir.resolve("start.tmp");
            long startMs = System.currentTimeMillis() + SCHEDULE_LEAD_MS;
            Files.writeString(tmp, String.valueOf(startMs));
            Files.move(tmp, start, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            long wait = warmupSec + measureSec + drainSec + 120L;
            if (!producer.waitFor(wait, TimeUnit.SECONDS) || !consumer.waitFor(wait, TimeUnit.SECONDS)
                || sourceConsumer != null && !sourceConsumer.waitFor(wait, TimeUnit.SECONDS)) {
                throw new IllegalStateException("lag probe of " + topic + " did not finish in " + wait + " s; see " + dir);
            }
            Map<String, Object> out = new LinkedHashMap<>(read(dir.resolve("consumer.result"), "consumer", dir));
            if (sourceConsumer != null) {
                out.put("source_visible", read(dir.resolve("source-consumer.result"), "source-consumer", dir));
            }
            Properties pr = load(dir.resolve("producer.result"), "producer", dir);
            out.put("sent_total", Long.parseLong(pr.getProperty("sent")));
            for (String k : List.of("produce_acked", "produce_p50_ms", "produce_p99_ms", "produce_max_ms", "produce_gc_ms_in_window")) {
                out.put(k, Long.parseLong(pr.getProperty(k)));
            }
            out.put("produce_acks", acks);
            if (pr.getProperty("error") != null) {
                out.put("producer_error", pr.getProperty("error"));
            }
            out.put("rate_MBps_target", rateMBps);
            out.put("window_start_ms", startMs + warmupSec * 1000L);
            out.put("window_end_ms", startMs + (warmupSec + measureSec) * 1000L);
            out.put("warmup_s", warmupSec);
            out.put("measure_s", measureSec);
            Map<String, Object> gc = new LinkedHashMap<>();
            gc.put("probe-consumer", GcLog.since(dir.resolve("consumer-gc.log"), 0));
            gc.put("probe-producer", GcLog.since(dir.resolve("producer-gc.log"), 0));
            out.put("probe_gc", gc);
            return out;
        } finally {
            stop(consumer);
            stop(producer);
            if (sourceConsumer != null) {
                stop(sourceConsumer);
            }
        }
    }

    /** Entry point of a probe JVM: {@code consumer|producer <properties file>}. */
    public static void main(String[] args) throws Exception {
        Properties p = load(Path.of(args[1]), args[0], Path.of(args[1]).getParent());
        if (args[0].equals("consumer")) {
            consume(p);
        } else {
            produce(p);
        }
    }

    /** How many records the schedule has due before {@code offsetMs} after its start. */
    static long due(double recordsPerMs, long offsetMs) {
        return offsetMs <= 0 ? 0 : (long) Math.ceil(offsetMs * recordsPerMs);
    }

    /** The due time of record {@code i}, relative to the start of the schedule. */
    static long dueOffsetMs(double recordsPerMs, long i) {
        return (long) Math.floor(i / recordsPerMs);
    }

    static double recordsPerMs(double rateMBps) {
        return rateMBps * 1024 * 1024 / Payloads.RECORD_SIZE / 1000.0;
    }

    private static void consume(Properties p) throws IOException {
        double perMs = recordsPerMs(Double.parseDouble(p.getProperty("rate.MBps")));
        long warmupMs = Long.parseLong(p.getProperty("warmup.ms"));
        long measureMs = Long.parseLong(p.getProperty("measure.ms"));
        long drainMs = Long.parseLong(p.getProperty("drain.ms"));
        // Records due in [warm-up, warm-up + measure): the schedule fixes their number in advance.
        long expected = due(perMs, warmupMs + measureMs) - due(perMs, warmupMs);
        long[] histogram = new long[MAX_MS + 1];
        long counted = 0;
        long received = 0;
        long maxMs = 0;
        LagsBySecond bySecond = new LagsBySecond((int) ((measureMs + 999) / 1000));
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, p.getProperty("bootstrap"));
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        long startMs;
        ProbeGc gc;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp, new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
            List<TopicPartition> tps = awaitPartitions(consumer, p.getProperty("topic"),
                Integer.parseInt(p.getProperty("partitions")));
            consumer.assign(tps);
            consumer.seekToEnd(tps);
            tps.forEach(consumer::position);
            startMs = ready(p);
            gc = new ProbeGc(startMs, warmupMs, measureMs);
            long windowStart = startMs + warmupMs;
            long windowEnd = windowStart + measureMs;
            long giveUp = windowEnd + drainMs;
            while (counted < expected && System.currentTimeMillis() < giveUp) {
                gc.tick();
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(50))) {
                    long now = System.currentTimeMillis();
                    received++;
                    long ts = r.timestamp();
                    if (ts >= windowStart && ts < windowEnd) {
                        long lag = Math.max(0, now - ts);
                        histogram[(int) Math.min(MAX_MS, lag)]++;
                        bySecond.add((int) ((ts - windowStart) / 1000), lag);
                        maxMs = Math.max(maxMs, lag);
                        counted++;
                    }
                }
            }
        }
        Properties out = new Properties();
        out.setProperty("sent", String.valueOf(expected));
        out.setProperty("received", String.valueOf(counted));
        out.setProperty("received_total", String.valueOf(received));
        out.setProperty("p50_ms", String.valueOf(percentile(histogram, counted, 0.50)));
        out.setProperty("p99_ms", String.valueOf(percentile(histogram, counted, 0.99)));
        out.setProperty("p999_ms", String.valueOf(percentile(histogram, counted, 0.999)));
        out.setProperty("max_ms", String.valueOf(counted == 0 ? -1 : maxMs));
        out.setProperty("p50_ms_by_second", bySecond.percentiles(0.50));
        out.setProperty("p99_ms_by_second", bySecond.percentiles(0.99));
        out.setProperty("max_ms_by_second", bySecond.percentiles(1.0));
        out.setProperty("gc_ms_in_window", String.valueOf(gc.msInWindow()));
        store(out, Path.of(p.getProperty("result")));
    }

    /**
     * The load generator. It also measures the produce latency of the records due in the window: from a record's due
     * time to its acknowledgement (with the configured {@code acks}), so a stalled sender counts here too.
     */
    private static void produce(Properties p) throws IOException {
        double perMs = recordsPerMs(Double.parseDouble(p.getProperty("rate.MBps")));
        long warmupMs = Long.parseLong(p.getProperty("warmup.ms"));
        long measureMs = Long.parseLong(p.getProperty("measure.ms"));
        long total = due(perMs, warmupMs + measureMs);
        long windowFirst = due(perMs, warmupMs);
        String topic = p.getProperty("topic");
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, p.getProperty("bootstrap"));
        pp.put(ProducerConfig.ACKS_CONFIG, p.getProperty("acks"));
        pp.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        pp.put(ProducerConfig.BATCH_SIZE_CONFIG, "65536");
        pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, p.getProperty("codec"));
        byte[][] payloads = Payloads.pool();
        AtomicReference<Exception> error = new AtomicReference<>();
        // Updated by the send callbacks on the producer's I/O thread, read after close.
        AtomicLongArray histogram = new AtomicLongArray(MAX_MS + 1);
        AtomicLong acked = new AtomicLong();
        AtomicLong maxMs = new AtomicLong();
        long sent = 0;
        ProbeGc gc = null;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp, new ByteArraySerializer(),
            new ByteArraySerializer())) {
            producer.partitionsFor(topic);
            long startMs = ready(p);
            gc = new ProbeGc(startMs, warmupMs, measureMs);
            while (sent < total) {
                gc.tick();
                long dueNow = Math.min(total, due(perMs, System.currentTimeMillis() - startMs + 1));
                // Behind schedule, this sends the backlog at once, each record still stamped with its due time.
                while (sent < dueNow) {
                    long dueMs = startMs + dueOffsetMs(perMs, sent);
                    boolean inWindow = sent >= windowFirst;
                    producer.send(new ProducerRecord<>(topic, null, dueMs, null,
                        payloads[(int) (sent % payloads.length)]), (md, e) -> {
                            if (e != null) {
                                error.compareAndSet(null, e);
                            } else if (inWindow) {
                                long ms = Math.max(0, System.currentTimeMillis() - dueMs);
                                histogram.incrementAndGet((int) Math.min(MAX_MS, ms));
                                maxMs.accumulateAndGet(ms, Math::max);
                                acked.incrementAndGet();
                            }
                        });
                    sent++;
                }
                Bench.sleep(1);
            }
            producer.flush();
        } catch (RuntimeException e) {
            error.compareAndSet(null, e);
        }
        long[] h = new long[histogram.length()];
        for (int i = 0; i < h.length; i++) {
            h[i] = histogram.get(i);
        }
        Properties out = new Properties();
        out.setProperty("sent", String.valueOf(sent));
        out.setProperty("produce_acked", String.valueOf(acked.get()));
        out.setProperty("produce_p50_ms", String.valueOf(percentile(h, acked.get(), 0.50)));
        out.setProperty("produce_p99_ms", String.valueOf(percentile(h, acked.get(), 0.99)));
        out.setProperty("produce_max_ms", String.valueOf(acked.get() == 0 ? -1 : maxMs.get()));
        out.setProperty("produce_gc_ms_in_window", String.valueOf(gc == null ? -1L : gc.msInWindow()));
        if (error.get() != null) {
            out.setProperty("error", error.get().toString());
        }
        store(out, Path.of(p.getProperty("result")));
    }

    /**
     * A probe JVM's own collections around its window. It collects the heap once, shortly before the window opens, so
     * that no collection of its own lands inside the window: on two busy cores a probe's collection paused it for tens
     * of milliseconds (up to 125 ms in the outage runs' GC logs), and every record due during a pause showed that pause
     * as the brokers' latency. After this collection the young generation ({@link #launch}'s {@code -Xmn}) has room
     * for a window's allocations at the rates the harness uses, and a young collection of the little that survives is
     * short. It also measures the collection time inside the window, which the result reports.
     */
    private static final class ProbeGc {
        /** How long before the window the collection runs: its pause then delays warm-up records only. */
        private static final long LEAD_MS = 500L;
        private final long collectAtMs;
        private final long windowStartMs;
        private final long windowEndMs;
        private boolean collected;
        private long atWindowStart = -1L;
        private long atWindowEnd = -1L;

        ProbeGc(long startMs, long warmupMs, long measureMs) {
            this.collectAtMs = startMs + Math.max(0L, warmupMs - LEAD_MS);
            this.windowStartMs = startMs + warmupMs;
            this.windowEndMs = windowStartMs + measureMs;
        }

        /** Called often from the probe's loop: collects when due, and notes the collection time at the window's ends. */
        void tick() {
            long now = System.currentTimeMillis();
            if (!collected && now >= collectAtMs) {
                collected = true;
                System.gc();
            }
            if (atWindowStart < 0 && now >= windowStartMs) {
                atWindowStart = collectionMs();
            }
            if (atWindowEnd < 0 && now >= windowEndMs) {
                atWindowEnd = collectionMs();
            }
        }

        /** Milliseconds this JVM spent collecting inside the window (up to now if it has not ended), or -1 if it never began. */
        long msInWindow() {
            return atWindowStart < 0 ? -1L : (atWindowEnd < 0 ? collectionMs() : atWindowEnd) - atWindowStart;
        }

        private static long collectionMs() {
            return ManagementFactory.getGarbageCollectorMXBeans().stream().mapToLong(GarbageCollectorMXBean::getCollectionTime)
                .filter(t -> t > 0).sum();
        }
    }

    /** Starts a probe JVM in {@code role} (consumer or producer); its files are named after {@code name}. */
    private static Process launch(Path dir, String classpath, String name, String role, Properties config) throws IOException {
        Path props = dir.resolve(name + ".properties");
        store(config, props);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // The heap of a broker: with 256 MiB, a load generator that fell behind its schedule kept its backlog alive
        // into the old generation and spent a sixth of the window in GC, which then showed as lag of the copy.
        ProcessBuilder pb = new ProcessBuilder(java, "-Xms1G", "-Xmx1G", "-Xmn640M", "-XX:+UseParallelGC",
            GcLog.option(dir.resolve(name + "-gc.log")), "-cp", classpath, LagProbe.class.getName(), role,
            props.toString());
        pb.redirectErrorStream(true).redirectOutput(dir.resolve(name + ".out").toFile());
        Process p = pb.start();
        LaunchedNode.killOnExit(p);
        return p;
    }

    /** In a probe JVM: reports it is ready and waits for the harness to fix the start of the schedule. */
    private static long ready(Properties p) throws IOException {
        Files.writeString(Path.of(p.getProperty("ready")), "ready");
        Path start = Path.of(p.getProperty("start"));
        long deadline = System.currentTimeMillis() + READY_TIMEOUT_MS;
        while (!Files.exists(start)) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("no start of the schedule from the harness after 120 s");
            }
            Bench.sleep(10);
        }
        return Long.parseLong(Files.readString(start).trim());
    }

    private static void awaitFile(Path file, Process process, String role, Path dir) throws IOException {
        long deadline = System.currentTimeMillis() + READY_TIMEOUT_MS;
        while (!Files.exists(file)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the lag probe's " + role + " exited: "
                    + Files.readString(dir.resolve(role + ".out")));
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the lag probe's " + role + " was not ready after 120 s: "
                    + Files.readString(dir.resolve(role + ".out")));
            }
            Bench.sleep(100);
        }
    }

    private static void stop(Process p) throws InterruptedException {
        if (p.isAlive()) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static Map<String, Object> read(Path file, String role, Path dir) {
        Map<String, Object> out = new LinkedHashMap<>();
        Properties p = load(file, role, dir);
        for (String k : List.of("sent", "received", "received_total", "p50_ms", "p99_ms", "p999_ms", "max_ms", "gc_ms_in_window")) {
            out.put(k, Long.parseLong(p.getProperty(k)));
        }
        out.put("measured_records", out.get("received"));
        Map<String, Object> bySecond = new LinkedHashMap<>();
        for (String k : List.of("p50_ms", "p99_ms", "max_ms")) {
            String values = p.getProperty(k + "_by_second", "");
            bySecond.put(k, values.isEmpty() ? List.of() : Arrays.stream(values.split(",")).map(Long::valueOf).toList());
        }
        out.put("by_second", bySecond);
        return out;
    }

    private static Properties load(Path file, String role, Path dir) {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        } catch (IOException e) {
            throw new UncheckedIOException("the lag probe's " + role + " wrote no " + file.getFileName() + "; see "
                + dir, e);
        }
        return p;
    }

    private static void store(Properties p, Path file) throws IOException {
        try (Writer w = Files.newBufferedWriter(file)) {
            p.store(w, null);
        }
    }

    private static List<TopicPartition> awaitPartitions(KafkaConsumer<?, ?> consumer, String topic, int partitions) {
        long deadline = System.currentTimeMillis() + 120_000;
        while (true) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(5));
            if (infos != null && infos.size() >= partitions) {
                List<TopicPartition> tps = new ArrayList<>();
                infos.forEach(i -> tps.add(new TopicPartition(topic, i.partition())));
                return tps;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("topic " + topic + " did not appear on the destination");
            }
            Bench.sleep(200);
        }
    }

    /**
     * The lags of the records due in each second of the window (by due time), kept whole so that each second's
     * percentiles are exact: at 20 MB/s of 1 KiB records that is 80 KB per second of window.
     */
    static final class LagsBySecond {
        private final int[][] lags;
        private final int[] counts;

        LagsBySecond(int seconds) {
            lags = new int[seconds][];
            counts = new int[seconds];
        }

        void add(int second, long lagMs) {
            if (second < 0 || second >= lags.length) {
                return;
            }
            if (lags[second] == null || counts[second] == lags[second].length) {
                lags[second] = Arrays.copyOf(lags[second] == null ? new int[0] : lags[second], Math.max(1024, counts[second] * 2));
            }
            lags[second][counts[second]++] = (int) Math.min(Integer.MAX_VALUE, lagMs);
        }

        /** The {@code q} percentile of each second, comma-separated (-1 for a second without records). */
        String percentiles(double q) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < lags.length; i++) {
                long value = -1;
                if (counts[i] > 0) {
                    int[] sorted = Arrays.copyOf(lags[i], counts[i]);
                    Arrays.sort(sorted);
                    value = sorted[(int) Math.max(0, Math.ceil(q * counts[i]) - 1)];
                }
                sb.append(i == 0 ? "" : ",").append(value);
            }
            return sb.toString();
        }
    }

    static long percentile(long[] histogram, long count, double q) {
        if (count == 0) {
            return -1;
        }
        long rank = Math.max(1, (long) Math.ceil(q * count));
        long seen = 0;
        for (int i = 0; i < histogram.length; i++) {
            seen += histogram[i];
            if (seen >= rank) {
                return i;
            }
        }
        return histogram.length - 1;
    }
}
