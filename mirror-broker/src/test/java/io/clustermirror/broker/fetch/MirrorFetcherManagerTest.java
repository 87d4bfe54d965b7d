package io.clustermirror.broker.fetch;

import io.clustermirror.broker.bridge.AppendResult;
import io.clustermirror.broker.bridge.BrokerHandle;
import io.clustermirror.broker.bridge.LeaderLogState;
import io.clustermirror.broker.bridge.NotLeaderException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.TestMirrorConfigs;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.records.HeldLogStarts;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static io.clustermirror.broker.fetch.TestClusters.leader;
import static io.clustermirror.testsupport.TestUtils.waitFor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The data plane against real in-JVM KRaft clusters: a 1-broker source and a 3-broker destination.
 * Proves offset-preserving, byte-identical mirroring (apart from the partitionLeaderEpoch) of idempotent,
 * transactional (commit and abort) and plain compressed batches, replicated identically to all
 * destination replicas; continuing from the source log start; failing only the partitions of a
 * recreated source topic.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MirrorFetcherManagerTest {
    private static KafkaClusterTestKit source;
    private static KafkaClusterTestKit dest;
    private static BrokerHandle sourceBroker;
    private static List<BrokerHandle> destBrokers;

    @BeforeAll
    static void startClusters() throws Exception {
        org.apache.logging.log4j.core.config.Configurator.setLevel("io.clustermirror", org.apache.logging.log4j.Level.INFO);
        source = TestClusters.start("src", 1, Map.of());
        dest = TestClusters.start("dst", 3, Map.of());
        sourceBroker = TestClusters.handles(source).get(0);
        destBrokers = TestClusters.handles(dest);
    }

    @AfterAll
    static void stopClusters() throws Exception {
        if (dest != null) {
            dest.close();
        }
        if (source != null) {
            source.close();
        }
    }

    /** Collects listener calls. */
    static final class Recorder implements FetchListener {
        final Map<TopicPartition, Long> mirrored = new ConcurrentHashMap<>();
        final Map<TopicPartition, Integer> lastSourceEpoch = new ConcurrentHashMap<>();
        final Map<TopicPartition, Long> sourceEnd = new ConcurrentHashMap<>();
        final Map<TopicPartition, List<Long>> epochStarts = new ConcurrentHashMap<>();
        final Map<TopicPartition, MirrorError> failures = new ConcurrentHashMap<>();
        final Map<TopicPartition, String> failureMessages = new ConcurrentHashMap<>();
        final Map<TopicPartition, List<Long>> barriers = new ConcurrentHashMap<>();
        final Map<TopicPartition, List<Long>> lost = new ConcurrentHashMap<>();
        final Map<TopicPartition, String> unavailable = new ConcurrentHashMap<>();

        @Override
        public void onBarrier(TopicPartition tp, long barrierOffset) {
            barriers.computeIfAbsent(tp, k -> new CopyOnWriteArrayList<>()).add(barrierOffset);
        }

        @Override
        public void onProgress(TopicPartition tp, long lastMirroredOffset, int lastSourceEpoch,
                               long firstSourceEpochStart, long sourceEndOffset) {
            mirrored.put(tp, lastMirroredOffset);
            this.lastSourceEpoch.put(tp, lastSourceEpoch);
            sourceEnd.put(tp, sourceEndOffset);
            if (firstSourceEpochStart >= 0) {
                epochStarts.computeIfAbsent(tp, k -> new CopyOnWriteArrayList<>()).add(firstSourceEpochStart);
            }
        }

        @Override
        public void onSourceEndOffset(TopicPartition tp, long sourceEndOffset) {
            sourceEnd.put(tp, sourceEndOffset);
        }

        @Override
        public void onFailure(TopicPartition tp, MirrorError error, String message) {
            failures.put(tp, error);
            failureMessages.put(tp, message);
        }

        @Override
        public void onSourceRecordsLost(TopicPartition tp, long fromOffset, long toOffset) {
            lost.put(tp, List.of(fromOffset, toOffset));
        }

        @Override
        public void onSourceTopicGone(TopicPartition tp, MirrorError error, String message) {
            onFailure(tp, error, message);
        }

        @Override
        public void onSourceUnavailable(TopicPartition tp, String report) {
            unavailable.put(tp, report);
        }

        @Override
        public void onSourceAvailable(TopicPartition tp) {
            unavailable.remove(tp);
        }
    }

    static MirrorConfig mirrorConfig(String name) {
        Map<String, String> c = new HashMap<>();
        c.put(MirrorConfig.BOOTSTRAP_SERVERS, source.bootstrapServers());
        c.put(MirrorConfig.FETCH_MAX_WAIT_MS, "200");
        c.put(MirrorConfig.FETCH_BACKOFF_MS, "50");
        c.put(MirrorConfig.PARTITION_RETRY_BACKOFF_MAX_MS, "1000");
        return TestMirrorConfigs.of(name, c);
    }

    /** A fetcher manager for a mirror config without secrets or provider references, as a broker builds it. */
    private static MirrorFetcherManager manager(MirrorConfig config, PartitionAppender appender, FetchListener listener,
                                                Metrics metrics) {
        try (BrokerClientConfigs brokerRules = BrokerClientConfigs.fromBrokerConfigs(Map.of())) {
            return new MirrorFetcherManager(config, brokerRules.clientProperties(config), brokerRules.sourceResponseBound(config.name()), 0,
                appender, listener, metrics);
        }
    }

    /** Appends on whichever destination broker currently leads the partition. */
    static final PartitionAppender DEST_APPENDER = new PartitionAppender() {
        @Override
        public AppendResult append(TopicPartition tp, int epoch, ByteBuffer records) throws NotLeaderException {
            return leaderOf(tp).appendAsLeader(tp, epoch, records);
        }

        @Override
        public boolean advanceLogStartOffset(TopicPartition tp, int epoch, long offset) throws NotLeaderException {
            return leaderOf(tp).advanceLogStartOffset(tp, epoch, offset);
        }

        @Override
        public boolean startEmptyLogAt(TopicPartition tp, int epoch, long offset) throws NotLeaderException {
            return leaderOf(tp).startEmptyLeaderLogAt(tp, epoch, offset);
        }

        @Override
        public void removeProducersBefore(TopicPartition tp, int epoch, long barrierOffset) throws NotLeaderException {
            new LocalLeaderAppender(leaderOf(tp)).removeProducersBefore(tp, epoch, barrierOffset);
        }

        private BrokerHandle leaderOf(TopicPartition tp) throws NotLeaderException {
            return leader(destBrokers, tp).orElseThrow(() -> new NotLeaderException("no leader for " + tp));
        }
    };

    /** An appender that appends with another epoch than the one it is given (a stale leader). */
    static PartitionAppender withEpochOffset(int delta) {
        return new PartitionAppender() {
            @Override
            public AppendResult append(TopicPartition tp, int epoch, ByteBuffer records) throws NotLeaderException {
                return DEST_APPENDER.append(tp, epoch + delta, records);
            }

            @Override
            public boolean advanceLogStartOffset(TopicPartition tp, int epoch, long offset) throws NotLeaderException {
                return DEST_APPENDER.advanceLogStartOffset(tp, epoch + delta, offset);
            }

            @Override
            public boolean startEmptyLogAt(TopicPartition tp, int epoch, long offset) throws NotLeaderException {
                return DEST_APPENDER.startEmptyLogAt(tp, epoch + delta, offset);
            }

            @Override
            public void removeProducersBefore(TopicPartition tp, int epoch, long barrierOffset) throws NotLeaderException {
                DEST_APPENDER.removeProducersBefore(tp, epoch + delta, barrierOffset);
            }
        };
    }

    static void createTopic(KafkaClusterTestKit c, String topic, int partitions, int rf) throws Exception {
        try (Admin a = c.admin()) {
            a.createTopics(List.of(new NewTopic(topic, partitions, (short) rf))).all().get();
        }
        List<BrokerHandle> hs = TestClusters.handles(c);
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(topic, p);
            waitFor(() -> leader(hs, tp).isPresent()
                && hs.stream().filter(h -> h.localLogEndOffset(tp).isPresent()).count() == rf,
                Duration.ofSeconds(15), () -> "replicas of " + tp);
        }
    }

    static Uuid sourceTopicId(String topic) {
        return sourceBroker.topicId(topic).orElseThrow();
    }

    static void addAll(MirrorFetcherManager m, String topic, int partitions) {
        Uuid id = sourceTopicId(topic);
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(topic, p);
            BrokerHandle l = leader(destBrokers, tp).orElseThrow();
            m.addPartition(tp, id, l.leaderLogState(tp).orElseThrow().logEndOffset(),
                l.leaderLogState(tp).orElseThrow().leaderEpoch(), -1, noneHeld(l.leaderLogState(tp).orElseThrow()));
        }
    }

    /** Where the leader's log start stands, with nothing held back. */
    static DestinationLogStart noneHeld(LeaderLogState log) {
        return new DestinationLogStart(log.logStartOffset(), HeldLogStarts.NONE, null);
    }

    static long sourceLeo(TopicPartition tp) {
        return sourceBroker.leaderLogState(tp).orElseThrow().logEndOffset();
    }

    /** Destination leader and all followers at the source log end. */
    /**
     * Moves the leadership of a single-partition topic of the destination cluster away from {@code oldLeader}:
     * reorder the replicas so another one is preferred, then elect it (a new leader epoch).
     */
    static void moveLeadershipAway(TopicPartition tp, BrokerHandle oldLeader) throws Exception {
        try (Admin a = dest.admin()) {
            List<Integer> replicas = new ArrayList<>(a.describeTopics(List.of(tp.topic())).allTopicNames().get()
                .get(tp.topic()).partitions().get(tp.partition()).replicas().stream().map(org.apache.kafka.common.Node::id).toList());
            replicas.remove(Integer.valueOf(oldLeader.nodeId()));
            replicas.add(oldLeader.nodeId());
            a.alterPartitionReassignments(Map.of(tp, java.util.Optional.of(
                new org.apache.kafka.clients.admin.NewPartitionReassignment(replicas)))).all().get();
            waitFor(() -> {
                try {
                    a.electLeaders(org.apache.kafka.common.ElectionType.PREFERRED, java.util.Set.of(tp)).all().get();
                } catch (Exception e) {
                    // ELECTION_NOT_NEEDED until the reassignment is visible: try again
                }
                return leader(destBrokers, tp).map(h -> h != oldLeader).orElse(false);
            }, Duration.ofSeconds(30), () -> "leadership of " + tp + " to move away from broker " + oldLeader.nodeId());
        }
    }

    static boolean caughtUp(TopicPartition tp) {
        long end = sourceLeo(tp);
        return destBrokers.stream().filter(h -> h.localLogEndOffset(tp).isPresent()).count() == 3
            && destBrokers.stream().allMatch(h -> h.localLogEndOffset(tp).isEmpty()
                || h.localLogEndOffset(tp).getAsLong() == end)
            && leader(destBrokers, tp).flatMap(h -> h.leaderLogState(tp)).map(s -> s.highWatermark() == end).orElse(false);
    }

    static Properties producerProps(Map<String, Object> extra) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.putAll(extra);
        return p;
    }

    static void produceIdempotentLz4(String topic, int partitions, int count, String tag) {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4")))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(topic, i % partitions, "k" + i, tag + "-" + i));
                if (i % 37 == 0) {
                    p.flush();
                }
            }
        }
    }

    static void produceTransactional(String topic, int partitions) {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "mirror-test-tx-" + topic)))) {
            p.initTransactions();
            p.beginTransaction();
            for (int i = 0; i < 30; i++) {
                p.send(new ProducerRecord<>(topic, i % partitions, "tx" + i, "committed-" + i));
            }
            p.commitTransaction();
            p.beginTransaction();
            for (int i = 0; i < 12; i++) {
                p.send(new ProducerRecord<>(topic, i % partitions, "ab" + i, "aborted-" + i));
            }
            p.flush();
            p.abortTransaction();
        }
    }

    static void producePlainGzip(String topic, int partitions, int count) {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false, ProducerConfig.ACKS_CONFIG, "1",
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "gzip")))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(topic, i % partitions, "g" + i, "gzip-" + i));
            }
        }
    }

    static byte[] bytesWithoutEpoch(StoredBatch b) {
        // The batch bytes with the 4 partitionLeaderEpoch bytes (offset 12..15) zeroed.
        byte[] a = new byte[b.sizeInBytes()];
        b.bytes().get(a);
        Arrays.fill(a, 12, 16, (byte) 0);
        return a;
    }

    /** The bytes of {@code batches} one after the other, as the log holds them. */
    static byte[] allBytes(List<StoredBatch> batches) {
        ByteBuffer all = ByteBuffer.allocate(batches.stream().mapToInt(StoredBatch::sizeInBytes).sum());
        batches.forEach(b -> all.put(b.bytes()));
        return all.array();
    }

    /** Every source batch sits at the same offsets on every destination replica, byte for byte (but the epoch). */
    static int assertIdentical(TopicPartition tp) {
        long start = sourceBroker.leaderLogState(tp).orElseThrow().logStartOffset();
        List<StoredBatch> srcBatches = sourceBroker.localRecords(tp, start, Integer.MAX_VALUE);
        assertFalse(srcBatches.isEmpty(), "no source batches in " + tp);
        int destEpoch = leader(destBrokers, tp).orElseThrow().leaderLogState(tp).orElseThrow().leaderEpoch();
        byte[] firstReplica = null;
        for (BrokerHandle h : destBrokers) {
            List<StoredBatch> dstBatches = h.localRecords(tp, start, Integer.MAX_VALUE);
            assertEquals(srcBatches.size(), dstBatches.size(), "batch count of " + tp + " on broker " + h.nodeId());
            for (int i = 0; i < srcBatches.size(); i++) {
                StoredBatch s = srcBatches.get(i);
                StoredBatch d = dstBatches.get(i);
                String where = tp + " batch " + i + " on broker " + h.nodeId();
                assertEquals(s.baseOffset(), d.baseOffset(), where);
                assertEquals(s.lastOffset(), d.lastOffset(), where);
                assertEquals(s.checksum(), d.checksum(), where);
                assertEquals(s.producerId(), d.producerId(), where);
                assertEquals(s.producerEpoch(), d.producerEpoch(), where);
                assertEquals(s.baseSequence(), d.baseSequence(), where);
                assertEquals(s.isTransactional(), d.isTransactional(), where);
                assertEquals(s.isControlBatch(), d.isControlBatch(), where);
                assertEquals(s.compression(), d.compression(), where);
                assertEquals(s.isLogAppendTime(), d.isLogAppendTime(), where);
                assertEquals(s.maxTimestamp(), d.maxTimestamp(), where);
                assertEquals(s.recordCount(), d.recordCount(), where);
                assertEquals(destEpoch, d.partitionLeaderEpoch(), where);
                assertTrue(d.isValid(), where);
                assertArrayEquals(bytesWithoutEpoch(s), bytesWithoutEpoch(d), "bytes of " + where);
            }
            byte[] all = allBytes(dstBatches);
            if (firstReplica == null) {
                firstReplica = all;
            } else {
                assertArrayEquals(firstReplica, all, "destination replicas of " + tp + " differ");
            }
        }
        return srcBatches.size();
    }

    static Map<Long, String> readCommitted(KafkaClusterTestKit c, TopicPartition tp, long end) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrapServers());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        Map<Long, String> out = new java.util.LinkedHashMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + 30_000;
            while (consumer.position(tp) < end) {
                assertTrue(System.currentTimeMillis() < deadline, "consumer timed out on " + tp);
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    out.put(r.offset(), new String(r.key()) + "=" + new String(r.value()) + "@" + r.timestamp()
                        + r.timestampType() + r.headers());
                }
            }
        }
        return out;
    }

    @Test
    void mirrorsIdempotentTransactionalAndCompressedBatchesAsIs() throws Exception {
        String topic = "orders";
        int n = 3;
        createTopic(source, topic, n, 1);
        createTopic(dest, topic, n, 3);
        produceIdempotentLz4(topic, n, 200, "before");

        Recorder rec = new Recorder();
        Metrics metrics = new Metrics();
        try (MirrorFetcherManager m = manager(mirrorConfig("m1"), DEST_APPENDER, rec, metrics)) {
            addAll(m, topic, n);
            // More data while mirroring: transactions (commit + abort, markers), plain gzip, idempotent lz4.
            produceTransactional(topic, n);
            producePlainGzip(topic, n, 90);
            produceIdempotentLz4(topic, n, 60, "after");

            for (int p = 0; p < n; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                waitFor(() -> caughtUp(tp), Duration.ofSeconds(60), () -> tp + " caught up: source LEO " + sourceLeo(tp) + ", mirrored "
                    + rec.mirrored.get(tp) + ", failures " + rec.failureMessages);
            }
            assertTrue(rec.failures.isEmpty(), rec.failureMessages.toString());
            int totalBatches = 0;
            for (int p = 0; p < n; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                totalBatches += assertIdentical(tp);
                long end = sourceLeo(tp);
                assertEquals(end - 1, rec.mirrored.get(tp));
                assertEquals(end, rec.sourceEnd.get(tp));
                // One source epoch (the source never changed leaders): reported once, at the first batch.
                assertEquals(List.of(0L), rec.epochStarts.get(tp));
                Map<Long, String> s = readCommitted(source, tp, end);
                Map<Long, String> d = readCommitted(dest, tp, end);
                assertEquals(s, d, "read_committed records of " + tp);
                assertTrue(s.values().stream().noneMatch(v -> v.contains("aborted")), "aborted records visible");
                assertTrue(s.values().stream().anyMatch(v -> v.contains("committed")));
            }
            assertTrue(totalBatches > 10, "too few batches to be meaningful: " + totalBatches);
            // One fetcher for the one source broker, in an incremental fetch session.
            assertEquals(java.util.Set.of(sourceBroker.nodeId()), m.fetchSessionIds().keySet());
            assertTrue(m.fetchSessionIds().get(sourceBroker.nodeId()) != 0, "no fetch session");
            double appended = metricValue(metrics, "batches-appended-total", Map.of("mirror", "m1"));
            assertEquals(totalBatches, (int) appended);
            assertEquals(0.0, metricValue(metrics, "records-lag-max", Map.of("mirror", "m1")));
            assertTrue(metricValue(metrics, "bytes-fetched-total", Map.of("mirror", "m1")) > 0);
            assertTrue(metrics.metrics().keySet().stream().anyMatch(k -> k.name().equals("records-lag")
                && "orders".equals(k.tags().get("topic"))));
            assertTrue(Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("cluster-mirror-fetcher-m1-" + sourceBroker.nodeId())));
        }
        // Closed: metrics removed, threads gone.
        assertTrue(metrics.metrics().keySet().stream().noneMatch(k -> k.group().equals(FetcherMetrics.GROUP)));
        waitFor(() -> Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().contains("-m1")),
            Duration.ofSeconds(10), () -> "mirror threads to stop");
        metrics.close();
    }

    /**
     * Many small fetches: every response is followed by a pipelined request for the data after it, sent before
     * the response's batches are appended. The destination must still hold every batch once, byte for byte.
     */
    @Test
    void pipelinedSmallFetchesMirrorAManyRoundBacklogExactly() throws Exception {
        String topic = "pipelined";
        int n = 4;
        createTopic(source, topic, n, 1);
        createTopic(dest, topic, n, 3);
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4")))) {
            for (int i = 0; i < 1600; i++) {
                p.send(new ProducerRecord<>(topic, i % n, "k" + i, "backlog-" + i));
                if (i % 8 == 7) {
                    p.flush(); // small batches: many per partition
                }
            }
        }
        Map<String, String> c = new HashMap<>();
        c.put(MirrorConfig.BOOTSTRAP_SERVERS, source.bootstrapServers());
        c.put(MirrorConfig.FETCH_MAX_WAIT_MS, "200");
        c.put(MirrorConfig.FETCH_PARTITION_MAX_BYTES, "1024"); // a few batches per partition and round
        Recorder rec = new Recorder();
        Metrics metrics = new Metrics();
        try (MirrorFetcherManager m = manager(TestMirrorConfigs.of("pipe", c), DEST_APPENDER, rec,
                metrics)) {
            addAll(m, topic, n);
            produceIdempotentLz4(topic, n, 300, "during"); // new data while the backlog is copied
            for (int p = 0; p < n; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                waitFor(() -> caughtUp(tp), Duration.ofSeconds(90), () -> tp + " caught up: source LEO " + sourceLeo(tp)
                    + ", mirrored " + rec.mirrored.get(tp) + ", failures " + rec.failureMessages);
            }
            assertTrue(rec.failures.isEmpty(), rec.failureMessages.toString());
            int totalBatches = 0;
            for (int p = 0; p < n; p++) {
                totalBatches += assertIdentical(new TopicPartition(topic, p));
            }
            assertTrue(totalBatches > 200, "too few batches for many rounds: " + totalBatches);
            // Every batch appended exactly once (nothing fetched ahead was appended twice or skipped).
            assertEquals(totalBatches, (int) metricValue(metrics, "batches-appended-total", Map.of("mirror", "pipe")));
        }
        metrics.close();
    }

    static double metricValue(Metrics metrics, String name, Map<String, String> tags) {
        for (Map.Entry<MetricName, KafkaMetric> e : metrics.metrics().entrySet()) {
            if (e.getKey().name().equals(name) && e.getKey().tags().equals(tags)) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        throw new AssertionError("no metric " + name + " " + tags);
    }

    @Test
    void continuesFromTheSourceLogStartAfterDeleteRecords() throws Exception {
        String topic = "retained";
        TopicPartition tp = new TopicPartition(topic, 0);
        createTopic(source, topic, 1, 1);
        createTopic(dest, topic, 1, 3);
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(Map.of(
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4")))) {
            for (int i = 0; i < 40; i++) {
                p.send(new ProducerRecord<>(topic, 0, "k" + i, "v" + i)).get(); // one batch per record
            }
        }
        try (Admin a = source.admin()) {
            a.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(25))).all().get();
        }
        assertEquals(25, sourceBroker.leaderLogState(tp).orElseThrow().logStartOffset());

        Recorder rec = new Recorder();
        try (MirrorFetcherManager m = manager(mirrorConfig("m2"), DEST_APPENDER, rec, new Metrics())) {
            addAll(m, topic, 1); // from destination offset 0, below the source log start
            waitFor(() -> caughtUp(tp), Duration.ofSeconds(30), () -> "caught up " + rec.mirrored + " " + rec.failureMessages);
            produceIdempotentLz4(topic, 1, 10, "later");
            waitFor(() -> caughtUp(tp), Duration.ofSeconds(30), () -> "caught up again " + rec.mirrored);
            // The destination log start follows the source's once the destination has replicated that far.
            waitFor(() -> leader(destBrokers, tp).flatMap(h -> h.leaderLogState(tp)).map(s -> s.logStartOffset() == 25).orElse(false),
                Duration.ofSeconds(30), () -> "destination log start " + leader(destBrokers, tp).flatMap(h -> h.leaderLogState(tp)));
        }
        assertTrue(rec.failures.isEmpty(), rec.failureMessages.toString());
        assertIdentical(tp);
        // Nothing below the source log start was invented.
        StoredBatch first = leader(destBrokers, tp).orElseThrow().localRecords(tp, 25, Integer.MAX_VALUE).get(0);
        assertEquals(25, first.baseOffset());
        assertEquals(List.of(25L), rec.epochStarts.get(tp));
    }

    @Test
    void recreatedSourceTopicFailsOnlyItsPartitions() throws Exception {
        String doomed = "doomed";
        String survivor = "survivor";
        createTopic(source, doomed, 2, 1);
        createTopic(dest, doomed, 2, 3);
        createTopic(source, survivor, 1, 1);
        createTopic(dest, survivor, 1, 3);
        produceIdempotentLz4(doomed, 2, 20, "a");
        produceIdempotentLz4(survivor, 1, 20, "a");
        TopicPartition s0 = new TopicPartition(survivor, 0);
        List<TopicPartition> doomedTps = IntStream.range(0, 2).mapToObj(i -> new TopicPartition(doomed, i)).toList();

        Recorder rec = new Recorder();
        try (MirrorFetcherManager m = manager(mirrorConfig("m3"), DEST_APPENDER, rec, new Metrics())) {
            addAll(m, doomed, 2);
            addAll(m, survivor, 1);
            for (TopicPartition tp : doomedTps) {
                waitFor(() -> caughtUp(tp), Duration.ofSeconds(30), () -> "caught up " + tp);
            }
            waitFor(() -> caughtUp(s0), Duration.ofSeconds(30), () -> "caught up " + s0);
            Uuid oldId = sourceTopicId(doomed);

            try (Admin a = source.admin()) {
                a.deleteTopics(List.of(doomed)).all().get();
                waitFor(() -> sourceBroker.topicId(doomed).isEmpty(), Duration.ofSeconds(15), () -> "topic deleted");
                a.createTopics(List.of(new NewTopic(doomed, 2, (short) 1))).all().get();
            }
            produceIdempotentLz4(doomed, 2, 10, "new");
            produceIdempotentLz4(survivor, 1, 30, "b");

            waitFor(() -> rec.failures.keySet().containsAll(doomedTps), Duration.ofSeconds(30),
                () -> "failures of " + doomed + ": " + rec.failureMessages);
            for (TopicPartition tp : doomedTps) {
                // Seen while deleted or once re-created, depending on when the coordinator looked.
                assertTrue(Set.of(MirrorError.SOURCE_TOPIC_DELETED, MirrorError.SOURCE_TOPIC_ID_CHANGED).contains(rec.failures.get(tp)),
                    String.valueOf(rec.failures.get(tp)));
                String msg = rec.failureMessages.get(tp);
                assertTrue(msg.startsWith("source topic doomed ") && msg.contains("deleted"), msg);
                assertTrue(msg.contains(oldId.toString()), msg);
                assertFalse(m.fetchOffsets().containsKey(tp));
            }
            waitFor(() -> caughtUp(s0), Duration.ofSeconds(30), () -> "survivor keeps mirroring " + rec.mirrored.get(s0));
            assertFalse(rec.failures.containsKey(s0));
            assertIdentical(s0);
            // The destination never got the recreated topic's data: still the 10 + 10 old records.
            for (TopicPartition tp : doomedTps) {
                assertEquals(10, leader(destBrokers, tp).orElseThrow().leaderLogState(tp).orElseThrow().logEndOffset());
            }
        }
    }

    @Test
    void notLeaderFromTheAppenderDropsThePartitionSilently() throws Exception {
        String topic = "moved";
        TopicPartition tp = new TopicPartition(topic, 0);
        createTopic(source, topic, 1, 1);
        createTopic(dest, topic, 1, 3);
        produceIdempotentLz4(topic, 1, 5, "x");
        Recorder rec = new Recorder();
        PartitionAppender stale = withEpochOffset(1);
        try (MirrorFetcherManager m = manager(mirrorConfig("m4"), stale, rec, new Metrics())) {
            addAll(m, topic, 1);
            waitFor(() -> !m.fetchOffsets().containsKey(tp), Duration.ofSeconds(30), () -> "partition dropped");
            assertTrue(rec.failures.isEmpty(), rec.failureMessages.toString());
            assertEquals(0, leader(destBrokers, tp).orElseThrow().leaderLogState(tp).orElseThrow().logEndOffset());
            // Re-added with the right epoch (as the runtime does after a leadership change) it mirrors.
            addAll(m, topic, 1);
            assertTrue(m.fetchOffsets().containsKey(tp));
            m.removePartition(tp);
            assertFalse(m.fetchOffsets().containsKey(tp));
        }
    }

    @Test
    void unreachableSourceIsRetriedWithBackoffAndCloseIsPrompt() throws Exception {
        Map<String, String> c = new HashMap<>();
        c.put(MirrorConfig.BOOTSTRAP_SERVERS, "localhost:1"); // nothing listens there
        c.put(MirrorConfig.FETCH_BACKOFF_MS, "50");
        c.put("request.timeout.ms", "1000");
        c.put("default.api.timeout.ms", "1000");
        Recorder rec = new Recorder();
        TopicPartition tp = new TopicPartition("nowhere", 0);
        MirrorFetcherManager m = manager(TestMirrorConfigs.of("m5", c), DEST_APPENDER, rec,
            new Metrics());
        try {
            m.addPartition(tp, Uuid.randomUuid(), 0, 0, -1, new DestinationLogStart(0L, HeldLogStarts.NONE, null));
            // Let several describe attempts time out: the partition stays, nothing fails.
            long until = System.currentTimeMillis() + 3_000;
            waitFor(() -> System.currentTimeMillis() > until, Duration.ofSeconds(5), () -> "time to pass");
            assertTrue(m.fetchOffsets().containsKey(tp));
            assertTrue(rec.failures.isEmpty(), rec.failureMessages.toString());
        } finally {
            long t0 = System.nanoTime();
            m.close();
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 10_000, "close took " + ms + " ms");
        }
        assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().contains("-m5")
            && t.isAlive()));
    }

    /** A destination leader change while mirroring: the stale epoch is fenced, re-adding on the new leader goes on. */
    @Test
    void destinationLeaderChangeFencesTheOldEpochAndMirroringResumes() throws Exception {
        String topic = "failover";
        TopicPartition tp = new TopicPartition(topic, 0);
        createTopic(source, topic, 1, 1);
        createTopic(dest, topic, 1, 3);
        produceIdempotentLz4(topic, 1, 50, "one");
        Recorder rec = new Recorder();
        try (MirrorFetcherManager m = manager(mirrorConfig("m6"), DEST_APPENDER, rec, new Metrics())) {
            addAll(m, topic, 1);
            waitFor(() -> caughtUp(tp), Duration.ofSeconds(30), () -> "caught up " + rec.mirrored);
            BrokerHandle oldLeader = leader(destBrokers, tp).orElseThrow();
            int oldEpoch = oldLeader.leaderLogState(tp).orElseThrow().leaderEpoch();

            moveLeadershipAway(tp, oldLeader);
            BrokerHandle newLeader = leader(destBrokers, tp).orElseThrow();
            int newEpoch = newLeader.leaderLogState(tp).orElseThrow().leaderEpoch();
            assertTrue(newEpoch > oldEpoch);

            // The fetcher still appends with the old epoch: fenced, the partition is dropped silently.
            produceIdempotentLz4(topic, 1, 30, "two");
            waitFor(() -> !m.fetchOffsets().containsKey(tp), Duration.ofSeconds(30), () -> "stale partition dropped");
            assertTrue(rec.failures.isEmpty(), rec.failureMessages.toString());
            long leo = newLeader.leaderLogState(tp).orElseThrow().logEndOffset();
            assertEquals(rec.mirrored.get(tp) + 1, leo, "nothing appended with the stale epoch");

            // What the runtime does on the leadership change: re-add from the new leader's log end.
            m.addPartition(tp, sourceTopicId(topic), leo, newEpoch, rec.lastSourceEpoch.get(tp), new DestinationLogStart(0L, HeldLogStarts.NONE, null));
            waitFor(() -> caughtUp(tp), Duration.ofSeconds(30), () -> "caught up on the new leader " + rec.mirrored);
        }
        assertTrue(rec.failures.isEmpty(), rec.failureMessages.toString());
        // Batches before the change carry the old destination epoch, after it the new one; otherwise identical.
        long start = 0;
        List<StoredBatch> s = sourceBroker.localRecords(tp, start, Integer.MAX_VALUE);
        for (BrokerHandle h : destBrokers) {
            List<StoredBatch> d = h.localRecords(tp, start, Integer.MAX_VALUE);
            assertEquals(s.size(), d.size());
            for (int i = 0; i < s.size(); i++) {
                assertEquals(s.get(i).baseOffset(), d.get(i).baseOffset());
                assertEquals(s.get(i).checksum(), d.get(i).checksum());
                assertArrayEquals(bytesWithoutEpoch(s.get(i)), bytesWithoutEpoch(d.get(i)));
            }
        }
    }

    /** A batch whose bytes no longer match its CRC on the source fails that partition only. */
    @Test
    void corruptSourceBatchFailsOnlyItsPartition() throws Exception {
        String topic = "corrupt";
        TopicPartition bad = new TopicPartition(topic, 0);
        TopicPartition good = new TopicPartition(topic, 1);
        createTopic(source, topic, 2, 1);
        createTopic(dest, topic, 2, 3);
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(Map.of()))) {
            for (int i = 0; i < 5; i++) {
                p.send(new ProducerRecord<>(topic, 0, "k" + i, "value-" + i)).get(); // one batch each
                p.send(new ProducerRecord<>(topic, 1, "k" + i, "value-" + i)).get();
            }
        }
        // Flip a byte near the end of the third batch of partition 0 in the source segment file.
        List<StoredBatch> srcBatches = sourceBroker.localRecords(bad, 0, Integer.MAX_VALUE);
        int pos = srcBatches.get(0).sizeInBytes() + srcBatches.get(1).sizeInBytes() + srcBatches.get(2).sizeInBytes() - 2;
        java.nio.file.Path segment;
        try (var files = java.nio.file.Files.walk(java.nio.file.Path.of(source.nodes().baseDirectory()))) {
            segment = files.filter(f -> f.endsWith(java.nio.file.Path.of("corrupt-0", "00000000000000000000.log")))
                .findFirst().orElseThrow();
        }
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(segment.toFile(), "rw")) {
            f.seek(pos);
            int b = f.read();
            f.seek(pos);
            f.write(b ^ 0x5a);
        }

        Recorder rec = new Recorder();
        try (MirrorFetcherManager m = manager(mirrorConfig("m7"), DEST_APPENDER, rec, new Metrics())) {
            addAll(m, topic, 2);
            waitFor(() -> rec.failures.containsKey(bad), Duration.ofSeconds(30), () -> "failure of " + bad);
            waitFor(() -> caughtUp(good), Duration.ofSeconds(30), () -> "caught up " + good);
            assertEquals(MirrorError.CORRUPT_MESSAGE, rec.failures.get(bad));
            String msg = rec.failureMessages.get(bad);
            assertTrue(msg.contains("corrupt batch at offsets 2..2"), msg);
            assertFalse(rec.failures.containsKey(good));
            assertFalse(m.fetchOffsets().containsKey(bad));
            assertTrue(m.fetchOffsets().containsKey(good));
        }
        // The two good batches before the corrupt one were appended, nothing after.
        assertEquals(2, leader(destBrokers, bad).orElseThrow().leaderLogState(bad).orElseThrow().logEndOffset());
    }

    /**
     * Roles swapped to get a multi-broker source: the 3-broker cluster is the source, the 1-broker cluster
     * the destination. A source leader change moves the partition to another fetcher thread, and the
     * new source epoch is reported where it starts.
     */
    @Test
    void sourceLeaderChangeMovesThePartitionToTheNewLeadersFetcher() throws Exception {
        String topic = "reverse";
        TopicPartition tp = new TopicPartition(topic, 0);
        createTopic(dest, topic, 1, 3);   // the source here
        createTopic(source, topic, 1, 1); // the destination here
        BrokerHandle target = sourceBroker;
        java.util.function.Supplier<BrokerHandle> srcLeader = () -> leader(destBrokers, tp).orElseThrow();
        Properties pp = producerProps(Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"));
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, dest.bootstrapServers());
        Runnable produce = () -> {
            try (KafkaProducer<String, String> p = new KafkaProducer<>(pp)) {
                for (int i = 0; i < 40; i++) {
                    p.send(new ProducerRecord<>(topic, 0, "k" + i, "v" + i));
                    if (i % 9 == 0) {
                        p.flush();
                    }
                }
            }
        };
        java.util.function.BooleanSupplier caught = () -> {
            var st = srcLeader.get().leaderLogState(tp).orElseThrow();
            return st.highWatermark() == st.logEndOffset()
                && target.localLogEndOffset(tp).getAsLong() == st.logEndOffset();
        };
        produce.run();
        Map<String, String> c = new HashMap<>(mirrorConfig("m8").originals());
        c.put(MirrorConfig.BOOTSTRAP_SERVERS, dest.bootstrapServers());
        c.put(MirrorConfig.METADATA_REFRESH_INTERVAL_MS, "300");
        Recorder rec = new Recorder();
        PartitionAppender toTarget = new LocalLeaderAppender(target);
        try (MirrorFetcherManager m = manager(TestMirrorConfigs.of("m8", c), toTarget, rec,
                new Metrics())) {
            m.addPartition(tp, destBrokers.get(0).topicId(topic).orElseThrow(), 0,
                target.leaderLogState(tp).orElseThrow().leaderEpoch(), -1, noneHeld(target.leaderLogState(tp).orElseThrow()));
            waitFor(caught::getAsBoolean, Duration.ofSeconds(30), () -> "caught up " + rec.mirrored);
            BrokerHandle oldLeader = srcLeader.get();
            long switchOffset = oldLeader.leaderLogState(tp).orElseThrow().logEndOffset();
            moveLeadershipAway(tp, oldLeader);
            BrokerHandle newLeader = srcLeader.get();
            // The old leader still hosts a replica and would keep serving (follower fetch, up to its HW):
            // the periodic leader refresh moves the partition to the new leader's fetcher.
            waitFor(() -> m.fetchSessionIds().containsKey(newLeader.nodeId()), Duration.ofSeconds(30), () -> "fetcher for the new leader");
            produce.run();
            waitFor(caught::getAsBoolean, Duration.ofSeconds(30), () -> "caught up after the source leader change " + rec.mirrored);
            assertTrue(rec.failures.isEmpty(), rec.failureMessages.toString());
            assertTrue(m.fetchSessionIds().containsKey(newLeader.nodeId()), "fetcher for the new leader");
            // The old leader's fetcher has nothing left to fetch: it is stopped.
            waitFor(() -> m.fetchSessionIds().keySet().equals(java.util.Set.of(newLeader.nodeId())), Duration.ofSeconds(30),
                () -> "idle fetcher stopped: " + m.fetchSessionIds());
            assertEquals(List.of(0L, switchOffset), rec.epochStarts.get(tp), "source epoch starts");
            assertEquals(newLeader.leaderLogState(tp).orElseThrow().leaderEpoch(), rec.lastSourceEpoch.get(tp));

            List<StoredBatch> s = newLeader.localRecords(tp, 0, Integer.MAX_VALUE);
            List<StoredBatch> d = target.localRecords(tp, 0, Integer.MAX_VALUE);
            assertEquals(s.size(), d.size());
            for (int i = 0; i < s.size(); i++) {
                assertEquals(s.get(i).baseOffset(), d.get(i).baseOffset());
                assertEquals(s.get(i).checksum(), d.get(i).checksum());
                assertArrayEquals(bytesWithoutEpoch(s.get(i)), bytesWithoutEpoch(d.get(i)));
            }
        }
    }

    /** read_committed (the default) stops at the source LSO while a transaction is open, then goes on. */
    @Test
    void readCommittedStopsAtTheSourceLastStableOffset() throws Exception {
        String topic = "open-txn";
        TopicPartition tp = new TopicPartition(topic, 0);
        createTopic(source, topic, 1, 1);
        createTopic(dest, topic, 1, 3);
        produceIdempotentLz4(topic, 1, 10, "before");
        Recorder rec = new Recorder();
        try (KafkaProducer<String, String> tx = new KafkaProducer<>(producerProps(Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "mirror-test-open-txn")));
             MirrorFetcherManager m = manager(mirrorConfig("m9"), DEST_APPENDER, rec, new Metrics())) {
            tx.initTransactions();
            tx.beginTransaction();
            for (int i = 0; i < 5; i++) {
                tx.send(new ProducerRecord<>(topic, 0, "t" + i, "open-" + i));
            }
            tx.flush();
            long lso = sourceBroker.leaderLogState(tp).orElseThrow().lastStableOffset();
            assertEquals(10, lso);
            assertEquals(15, sourceLeo(tp));
            addAll(m, topic, 1);
            waitFor(() -> Long.valueOf(lso).equals(rec.sourceEnd.get(tp)) && Long.valueOf(lso - 1).equals(rec.mirrored.get(tp)),
                Duration.ofSeconds(30), () -> "mirrored up to the LSO " + rec.mirrored + " " + rec.sourceEnd);
            // Several more fetch rounds: nothing beyond the LSO is appended.
            long polls = System.currentTimeMillis() + 1_000;
            waitFor(() -> System.currentTimeMillis() > polls, Duration.ofSeconds(5), () -> "time to pass");
            assertEquals(lso, leader(destBrokers, tp).orElseThrow().leaderLogState(tp).orElseThrow().logEndOffset());

            tx.commitTransaction();
            waitFor(() -> caughtUp(tp), Duration.ofSeconds(30), () -> "caught up after the commit " + rec.mirrored);
            assertEquals(16, sourceLeo(tp)); // 5 records + the commit marker
        }
        assertIdentical(tp);
    }
}
