package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.StopTransactions;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Exactly-once pipelines fail over exactly once through a consistent stop. A pipeline runs on the source under load
 * (an input writer, and an application that reads the input and writes its results and its consumer offsets in one
 * transaction per step); the mirror mirrors all of its topics and syncs its group's offsets every second. At a seeded
 * moment, sometimes after a seeded pause of one topic's mirroring (so that the partitions lag differently), a
 * consistent stop fails all the pipeline's topics over together; the source is then lost as far as the destination is
 * concerned. The same application (same group) resumes on the destination, processes everything the destination's
 * input holds, and the destination must then hold exactly one effect of every input record it holds, and none of any
 * other:
 * <ul>
 * <li>a plain transactional read-process-write loop ({@link ReadProcessWriteLoop}): one result per input record;</li>
 * <li>Kafka Streams with {@code exactly_once_v2} ({@link CountingStreamsApp}): per key the counts 1, 2, ..., n in
 * order and a final state of n, n the key's records in the input.</li>
 * </ul>
 * Each seed prints one summary line per pipeline (and one line of what the failover did); {@code -Deos.seeds=N} runs
 * seeds 1 to N (2 by default, which the default build runs within CI's time; run 20 after a change of the stop),
 * {@code -Deos.seed=S} only seed S.
 */
@MirrorClusterTest(source = "eos-source", destination = "eos-destination")
class ExactlyOnceFailoverTest {
    private static final int PARTITIONS = 2;
    private static final String TRANSACTION_LOG = "__transaction_state";
    /** Input records the destination's synced group must have consumed before the failover: the pipeline is warm. */
    private static final long WARM = 300;
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;
    private static ClusterMirrorAdmin mirrors;

    @BeforeAll
    static void nameTheClusters() {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
    }

    static LongStream seeds() {
        String one = System.getProperty("eos.seed");
        if (one != null && !one.isBlank()) {
            return LongStream.of(Long.parseLong(one.trim()));
        }
        return LongStream.rangeClosed(1, Long.getLong("eos.seeds", 2));
    }

    /**
     * What the failover did: when it stopped, which topic it had paused first and for how long, how long the stop took
     * (until its command returned the cut, and until every partition was STOPPED), what the cut removed.
     */
    private record Failover(long stopAfterMs, String paused, long pausedMs, Instant stoppedAt, long transactionLog, long cutMs, long stoppedMs,
                            StopTransactions cut) {
        @Override
        public String toString() {
            return "stop " + stopAfterMs + " ms after warm-up" + (paused == null ? "" : ", " + paused + " paused " + pausedMs + " ms before")
                + ", at " + stoppedAt + " (the source's " + TRANSACTION_LOG + " then held " + transactionLog + " records), the cut in " + cutMs
                + " ms, all STOPPED in " + stoppedMs + " ms; the consistent cut removed " + cut.extraRecords() + " record(s) beyond a plain stop in "
                + cut.split().size() + " split transaction(s); not seen: " + cut.limits();
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void aReadProcessWriteLoopFailsOverExactlyOnce(long seed) throws Exception {
        String prefix = "rpw-" + seed;
        String in = prefix + "-in";
        String out = prefix + "-out";
        String group = prefix + "-app";
        List<String> topics = List.of(in, out);
        createTopics(Map.of(in, Map.of(), out, Map.of()));
        startMirroring(prefix, topics);
        Failover failover;
        long sourceTransactions;
        try (KeyedInputWriter writer = new KeyedInputWriter(source.bootstrapServers(), in, seed);
             ReadProcessWriteLoop app = new ReadProcessWriteLoop(source.bootstrapServers(), group, in, out)) {
            awaitWarm(group, in, app::assertHealthy);
            failover = failOver(prefix, topics, new Random(seed));
            sourceTransactions = app.transactions();
            // Closing the source's application and writer now changes nothing on the destination: its topics are stopped.
        }
        List<ConsumerRecord<byte[], byte[]>> inputs = ExactlyOnceCheck.readCommitted(destination, in, PARTITIONS);
        List<ConsumerRecord<byte[], byte[]>> kept = ExactlyOnceCheck.readCommitted(destination, out, PARTITIONS);
        Map<TopicPartition, Long> synced = ExactlyOnceCheck.groupOffsets(destination, group);
        try (ReadProcessWriteLoop app = new ReadProcessWriteLoop(destination.bootstrapServers(), group, in, out)) {
            awaitProcessed(group, inputs, app::assertHealthy);
        }
        ExactlyOnceCheck.Report report = ExactlyOnceCheck.readProcessWrite(inputs, ExactlyOnceCheck.readCommitted(destination, out, PARTITIONS));
        mirrors.deleteClusterMirror(prefix).all().get(); // its topics are stopped: no sync of it is left running

        String diagnosis = "the source's application committed " + sourceTransactions + " transactions; " + failover
            + "; the destination's group resumed at " + synced + ", the last kept transaction had committed " + ExactlyOnceCheck.offsetsOfResults(in, kept);
        System.out.println("seed " + seed + " rpw: " + report.summary());
        System.out.println("seed " + seed + " rpw: " + diagnosis);
        assertTrue(report.clean(), "seed " + seed + " rpw: " + report.details() + "\n  " + diagnosis);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void aKafkaStreamsCountFailsOverExactlyOnce(long seed, @TempDir Path stateDirs) throws Exception {
        String prefix = "streams-" + seed;
        String in = prefix + "-in";
        String out = prefix + "-out";
        String applicationId = prefix + "-streams";
        String changelog = applicationId + "-" + CountingStreamsApp.STORE + "-changelog";
        List<String> topics = List.of(in, out, changelog);
        // The changelog exists before the mirror starts, so that the mirror covers it from its first record; Kafka
        // Streams takes an existing changelog topic with the right number of partitions as it is.
        createTopics(Map.of(in, Map.of(), out, Map.of(), changelog, Map.of("cleanup.policy", "compact")));
        startMirroring(prefix, topics);
        Failover failover;
        try (KeyedInputWriter writer = new KeyedInputWriter(source.bootstrapServers(), in, seed);
             CountingStreamsApp app = new CountingStreamsApp(source.bootstrapServers(), applicationId, in, out, stateDirs.resolve("source"))) {
            awaitWarm(applicationId, in, app::assertHealthy);
            failover = failOver(prefix, topics, new Random(seed));
        }
        List<ConsumerRecord<byte[], byte[]>> inputs = ExactlyOnceCheck.readCommitted(destination, in, PARTITIONS);
        Map<String, Long> keptState = ExactlyOnceCheck.lastCounts(ExactlyOnceCheck.readCommitted(destination, changelog, PARTITIONS));
        Map<TopicPartition, Long> synced = ExactlyOnceCheck.groupOffsets(destination, applicationId);
        // A new state directory: the application restores its store from the destination's changelog, as on a new host.
        try (CountingStreamsApp app = new CountingStreamsApp(destination.bootstrapServers(), applicationId, in, out,
                stateDirs.resolve("destination"))) {
            awaitProcessed(applicationId, inputs, app::assertHealthy);
        }
        ExactlyOnceCheck.Report report = ExactlyOnceCheck.counts(inputs, keptState, ExactlyOnceCheck.readCommitted(destination, out, PARTITIONS),
            ExactlyOnceCheck.readCommitted(destination, changelog, PARTITIONS));
        mirrors.deleteClusterMirror(prefix).all().get(); // its topics are stopped: no sync of it is left running

        Map<TopicPartition, Long> counted = ExactlyOnceCheck.offsetsOfState(inputs, keptState);
        String diagnosis = failover + "; the destination's group resumed at " + synced + ", the kept state counts the input up to " + counted
            + (counted.containsValue(-1L) ? " (-1: it counts records the input does not hold)" : "");
        System.out.println("seed " + seed + " streams: " + report.summary());
        System.out.println("seed " + seed + " streams: " + diagnosis);
        assertTrue(report.clean(), "seed " + seed + " streams: " + report.details() + "\n  " + diagnosis);
    }

    private static void createTopics(Map<String, Map<String, String>> topics) throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, topics.entrySet().stream()
                .map(t -> new NewTopic(t.getKey(), PARTITIONS, (short) 1).configs(t.getValue())).toList());
        }
    }

    /** A mirror of the pipeline's topics whose group sync runs every second, mirroring before the pipeline starts. */
    private static void startMirroring(String mirror, List<String> topics) throws Exception {
        Map<String, String> config = new HashMap<>(MirrorAssertions.mirrorConfig(source));
        config.put(MirrorConfig.METADATA_REFRESH_INTERVAL_MS, "1000");
        mirrors.createClusterMirror(mirror, config).all().get();
        mirrors.startMirrorTopics(mirror, topics, List.of()).all().get();
        for (String topic : topics) {
            MirrorAssertions.awaitMirroringWithoutError(mirrors, mirror, topic, PARTITIONS);
        }
    }

    /**
     * Waits until the pipeline is under way on the source and the destination's group sync has copied its progress: the
     * group's offsets on the destination cover every input partition and {@link #WARM} records in all.
     */
    private static void awaitWarm(String group, String input, Runnable health) throws InterruptedException {
        TestUtils.waitFor(() -> {
            health.run();
            Map<TopicPartition, Long> synced = ExactlyOnceCheck.groupOffsets(destination, group);
            return synced.keySet().stream().filter(tp -> tp.topic().equals(input)).count() == PARTITIONS
                && synced.values().stream().mapToLong(Long::longValue).sum() >= WARM;
        }, MirrorAssertions.TIMEOUT, "the group " + group + " to consume " + WARM + " records of " + input + " on the source and its offsets to be synced");
    }

    /**
     * The failover, timed by the seed: after a random delay, sometimes a pause of one random topic's mirroring for a
     * random time (it then lags behind the others), then a consistent stop of all the topics, complete once every
     * partition is STOPPED. The random values are drawn in a fixed order, so a seed always makes the same choices.
     */
    private static Failover failOver(String mirror, List<String> topics, Random random) throws Exception {
        long delay = random.nextInt(2000);
        int choice = random.nextInt(topics.size() + 1); // one of the topics, or none
        String paused = choice < topics.size() ? topics.get(choice) : null;
        long pausedMs = 200 + random.nextInt(1500);
        Thread.sleep(delay); // the fault's timing, not a synchronisation
        if (paused != null) {
            mirrors.pauseMirrorTopics(mirror, List.of(paused), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, mirror, paused, PARTITIONS, PartitionState.PAUSED);
            Thread.sleep(pausedMs); // how far the paused topic falls behind, not a synchronisation
        }
        long transactionLog = transactionLogRecords();
        Instant stoppedAt = Instant.now();
        long start = System.nanoTime();
        StopTransactions cut = mirrors.stopMirrorTopics(mirror, topics, List.of(), new MirrorTopicsOptions().consistent(true))
            .consistentCut().get();
        long cutMs = (System.nanoTime() - start) / 1_000_000;
        for (String topic : topics) {
            MirrorAssertions.awaitState(mirrors, mirror, topic, PARTITIONS, PartitionState.STOPPED);
        }
        return new Failover(delay, paused, pausedMs, stoppedAt, transactionLog, cutMs, (System.nanoTime() - start) / 1_000_000, cut);
    }

    /**
     * How many records the source's transaction log has taken (the sum of its partitions' end offsets): what the mirror's
     * follower of that log reads to know the transactions a stop's analysis cannot see in the mirrored data.
     */
    private static long transactionLogRecords() throws Exception {
        try (Admin admin = source.admin()) {
            Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
            admin.describeTopics(List.of(TRANSACTION_LOG)).allTopicNames().get().get(TRANSACTION_LOG).partitions()
                .forEach(p -> ends.put(new TopicPartition(TRANSACTION_LOG, p.partition()), OffsetSpec.latest()));
            return admin.listOffsets(ends).all().get().values().stream().mapToLong(ListOffsetsResultInfo::offset).sum();
        }
    }

    /**
     * Waits until the application on the destination has committed, for every input partition, an offset past the last
     * input record the destination holds: it has processed everything.
     */
    private static void awaitProcessed(String group, List<ConsumerRecord<byte[], byte[]>> inputs, Runnable health) throws InterruptedException {
        Map<TopicPartition, Long> needed = new HashMap<>();
        inputs.forEach(r -> needed.merge(new TopicPartition(r.topic(), r.partition()), r.offset() + 1, Math::max));
        Map<TopicPartition, Long> committed = new HashMap<>();
        TestUtils.waitFor(() -> {
            health.run();
            committed.clear();
            committed.putAll(ExactlyOnceCheck.groupOffsets(destination, group));
            return needed.entrySet().stream().allMatch(e -> committed.getOrDefault(e.getKey(), -1L) >= e.getValue());
        }, MirrorAssertions.TIMEOUT, () -> "the group " + group + " on the destination to commit " + needed + " (committed: " + committed + ")");
    }
}
