package io.clustermirror.broker.bridge;

import io.clustermirror.broker.fetch.TestClusters;
import io.clustermirror.common.batch.StoredBatch;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static io.clustermirror.broker.TestBatches.batch;
import static io.clustermirror.broker.TestBatches.concat;
import static io.clustermirror.broker.fetch.TestClusters.leader;
import static io.clustermirror.testsupport.TestUtils.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * BrokerHandle on a real 3-broker KRaft cluster. Followers long-poll for 5 s here
 * (replica.fetch.wait.max.ms), so a fast HW after an append proves the purgatory wake-up.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BrokerHandleTest {
    private static KafkaClusterTestKit cluster;
    private static List<BrokerHandle> brokers;

    @BeforeAll
    static void start() throws Exception {
        org.apache.logging.log4j.core.config.Configurator.setLevel("io.clustermirror", org.apache.logging.log4j.Level.INFO);
        cluster = TestClusters.start("bridge", 3, Map.of("replica.fetch.wait.max.ms", "5000"));
        brokers = TestClusters.handles(cluster);
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    static void createTopic(String topic, int partitions) throws Exception {
        try (Admin a = cluster.admin()) {
            a.createTopics(List.of(new NewTopic(topic, partitions, (short) 3))).all().get();
        }
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(topic, p);
            waitFor(() -> leader(brokers, tp).isPresent()
                && brokers.stream().filter(h -> h.localLogEndOffset(tp).isPresent()).count() == 3,
                Duration.ofSeconds(15), () -> "replicas of " + tp);
        }
    }

    @Test
    void identityAndConfig() throws Exception {
        BrokerHandle h = brokers.get(0);
        assertTrue(cluster.brokers().containsKey(h.nodeId()));
        assertEquals(cluster.brokers().get(h.nodeId()).clusterId(), h.clusterId());
        assertNotNull(h.metrics());
        assertEquals(String.valueOf(h.nodeId()), String.valueOf(h.brokerConfigs().get("node.id")));
        assertFalse(h.isShutdown());
        // The inter-broker listener address works for a client.
        try (Admin a = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, h.localBootstrapServers()))) {
            assertEquals(h.clusterId(), a.describeCluster().clusterId().get());
        }
        createTopic("ids", 1);
        Uuid id = h.topicId("ids").orElseThrow();
        try (Admin a = cluster.admin()) {
            assertEquals(a.describeTopics(List.of("ids")).allTopicNames().get().get("ids").topicId(), id);
        }
        assertTrue(h.topicId("no-such-topic").isEmpty());
        assertTrue(BrokerHandle.fromRaftServer(new Object() {
            @SuppressWarnings("unused")
            private final scala.Option<Object> broker = scala.Option.apply(cluster.brokers().get(h.nodeId()));
        }).isPresent(), "reads a private 'broker' field holding an Option");
    }

    @Test
    void appendsAsIsOnTheLeaderAndWakesFollowers() throws Exception {
        createTopic("append", 1);
        TopicPartition tp = new TopicPartition("append", 0);
        BrokerHandle l = leader(brokers, tp).orElseThrow();
        LeaderLogState before = l.leaderLogState(tp).orElseThrow();
        assertEquals(0, before.logEndOffset());
        // A gap (5..9) and a foreign partitionLeaderEpoch (77): kept offsets, stamped epoch.
        ByteBuffer recs = concat(batch(0, 5, 42L, (short) 3, 0, 77), batch(10, 3, 42L, (short) 3, 5, 77));
        long crc0 = StoredBatch.of(recs).checksum();
        AppendResult r = l.appendAsLeader(tp, before.leaderEpoch(), recs);
        assertEquals(new AppendResult(0, 12, 13), r);
        waitFor(() -> l.leaderLogState(tp).orElseThrow().highWatermark() == 13, Duration.ofSeconds(15), () -> "HW 13");
        // Now the followers are idle in their 5 s long poll: a second append must wake them.
        waitFor(() -> brokers.stream().allMatch(h -> h.localLogEndOffset(tp).getAsLong() == 13), Duration.ofSeconds(15),
            () -> "followers at 13");
        long t0 = System.nanoTime();
        AppendResult r2 = l.appendAsLeader(tp, before.leaderEpoch(), batch(13, 2, 42L, (short) 3, 8, 5));
        assertEquals(new AppendResult(13, 14, 15), r2);
        waitFor(() -> l.leaderLogState(tp).orElseThrow().highWatermark() == 15, Duration.ofSeconds(15), () -> "HW 15");
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("append to HW on all replicas took " + ms + " ms");
        // Without the wake-up the followers sit in their 5 s long poll before fetching the new data.
        assertTrue(ms < 2_500, "HW reached the log end after " + ms + " ms: followers were not woken");
        for (BrokerHandle h : brokers) {
            List<StoredBatch> bs = h.localRecords(tp, 0, Integer.MAX_VALUE);
            assertEquals(3, bs.size());
            assertEquals(0, bs.get(0).baseOffset());
            assertEquals(10, bs.get(1).baseOffset());
            assertEquals(crc0, bs.get(0).checksum());
            assertEquals(before.leaderEpoch(), bs.get(0).partitionLeaderEpoch());
            assertEquals(42L, bs.get(1).producerId());
            assertEquals(5, bs.get(1).baseSequence());
        }

        // Wrong epoch, or a broker that is not the leader: NotLeaderException, nothing appended.
        assertThrows(NotLeaderException.class,
            () -> l.appendAsLeader(tp, before.leaderEpoch() + 1, batch(15, 1, -1L, (short) -1, -1, 0)));
        BrokerHandle follower = brokers.stream().filter(h -> h != l).findFirst().orElseThrow();
        assertThrows(NotLeaderException.class,
            () -> follower.appendAsLeader(tp, before.leaderEpoch(), batch(15, 1, -1L, (short) -1, -1, 0)));
        assertTrue(follower.leaderLogState(tp).isEmpty());
        assertThrows(NotLeaderException.class,
            () -> l.appendAsLeader(new TopicPartition("absent", 0), 0, batch(0, 1, -1L, (short) -1, -1, 0)));
        assertEquals(15, l.leaderLogState(tp).orElseThrow().logEndOffset());

        // A normal producer continues after the mirrored data.
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            assertEquals(15, producer.send(new ProducerRecord<>("append", 0, "k", "v")).get().offset());
        }
    }

    @Test
    void leadershipListenerReportsLocalPartitionsAndChanges() throws Exception {
        createTopic("existing", 2);
        Map<Integer, List<List<LeaderChange>>> calls = new ConcurrentHashMap<>();
        for (BrokerHandle h : brokers) {
            calls.put(h.nodeId(), new CopyOnWriteArrayList<>());
            h.installLeadershipListener("test-leadership", changes -> calls.get(h.nodeId()).add(changes))
                .get(10, TimeUnit.SECONDS);
        }
        // First call: every local partition (all 3 brokers host both "existing" partitions).
        for (BrokerHandle h : brokers) {
            waitFor(() -> !calls.get(h.nodeId()).isEmpty(), Duration.ofSeconds(10), () -> "first call on " + h.nodeId());
            List<LeaderChange> first = calls.get(h.nodeId()).get(0);
            for (int p = 0; p < 2; p++) {
                TopicPartition tp = new TopicPartition("existing", p);
                LeaderChange c = first.stream().filter(x -> x.partition().equals(tp)).findFirst().orElseThrow();
                assertEquals(h.leaderLogState(tp).isPresent(), c.leader(), tp + " on " + h.nodeId());
                assertEquals(h.topicId("existing").orElseThrow(), c.topicId());
                assertFalse(c.deleted());
            }
        }
        // A new topic: exactly one broker is told it leads each partition, the others that they follow.
        createTopic("fresh", 2);
        for (int p = 0; p < 2; p++) {
            TopicPartition tp = new TopicPartition("fresh", p);
            waitFor(() -> brokers.stream().allMatch(h -> changesFor(calls.get(h.nodeId()), tp).size() > 0),
                Duration.ofSeconds(10), () -> "changes of " + tp);
            long leaders = brokers.stream().filter(h -> changesFor(calls.get(h.nodeId()), tp).stream()
                .anyMatch(LeaderChange::leader)).count();
            assertEquals(1, leaders, "leaders of " + tp);
            BrokerHandle l = leader(brokers, tp).orElseThrow();
            assertTrue(changesFor(calls.get(l.nodeId()), tp).stream().anyMatch(c -> c.leader()
                && c.leaderEpoch() == l.leaderLogState(tp).orElseThrow().leaderEpoch()));
        }
        Uuid freshId = brokers.get(0).topicId("fresh").orElseThrow();
        try (Admin a = cluster.admin()) {
            a.deleteTopics(List.of("fresh")).all().get();
        }
        for (BrokerHandle h : brokers) {
            waitFor(() -> changesFor(calls.get(h.nodeId()), new TopicPartition("fresh", 1)).stream()
                .anyMatch(LeaderChange::deleted), Duration.ofSeconds(10), () -> "delete seen by " + h.nodeId());
            assertTrue(changesFor(calls.get(h.nodeId()), new TopicPartition("fresh", 0)).stream()
                .anyMatch(c -> c.deleted() && freshId.equals(c.topicId())));
        }
        // A second listener with the same name is refused locally, without a loader fault.
        java.util.concurrent.ExecutionException dup = assertThrows(java.util.concurrent.ExecutionException.class,
            () -> brokers.get(0).installLeadershipListener("test-leadership", changes -> { })
                .get(10, TimeUnit.SECONDS));
        assertTrue(dup.getCause() instanceof IllegalStateException, String.valueOf(dup.getCause()));
        // Removed: no more calls; removing again (or an unknown name) is a no-op, not a loader fault.
        for (BrokerHandle h : brokers) {
            h.removeLeadershipListener("test-leadership").get(10, TimeUnit.SECONDS);
            h.removeLeadershipListener("test-leadership").get(10, TimeUnit.SECONDS);
            h.removeLeadershipListener("never-installed").get(10, TimeUnit.SECONDS);
        }
        assertEquals(null, cluster.nonFatalFaultHandler().firstException());
        assertEquals(null, cluster.fatalFaultHandler().firstException());
        int before = calls.values().stream().mapToInt(List::size).sum();
        createTopic("after-removal", 1);
        assertEquals(before, calls.values().stream().mapToInt(List::size).sum());
    }

    static List<LeaderChange> changesFor(List<List<LeaderChange>> calls, TopicPartition tp) {
        List<LeaderChange> out = new ArrayList<>();
        for (List<LeaderChange> c : calls) {
            c.stream().filter(x -> x.partition().equals(tp)).forEach(out::add);
        }
        return out;
    }

    /** Kafka's own tests restart a broker with shutdown/awaitShutdown/startup on the same object: check it on 4.3.1. */
    @Test
    void restartsOnTheSameBrokerObject() throws Exception {
        createTopic("restart", 1);
        TopicPartition tp = new TopicPartition("restart", 0);
        BrokerHandle victim = brokers.stream().filter(h -> leader(brokers, tp).orElseThrow() != h).findFirst()
            .orElseThrow();
        List<List<LeaderChange>> calls = new CopyOnWriteArrayList<>();
        victim.installLeadershipListener("restart-listener", calls::add).get(10, TimeUnit.SECONDS);
        waitFor(() -> !calls.isEmpty(), Duration.ofSeconds(10), () -> "first call");

        long t0 = System.nanoTime();
        victim.shutdown();
        victim.awaitShutdown();
        assertTrue(victim.isShutdown());
        victim.startup();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertFalse(victim.isShutdown());
        waitFor(() -> victim.localLogEndOffset(tp).isPresent(), Duration.ofSeconds(30), () -> "replica back online");
        System.out.println("restart on the same BrokerServer took " + ms + " ms");

        // The restart built a new metadata loader: the old publisher is gone; a new one can be installed.
        List<List<LeaderChange>> after = new CopyOnWriteArrayList<>();
        victim.installLeadershipListener("restart-listener", after::add).get(10, TimeUnit.SECONDS);
        waitFor(() -> after.stream().flatMap(List::stream).anyMatch(c -> c.partition().equals(tp)), Duration.ofSeconds(10),
            () -> "first call after restart");
        // And the restarted broker replicates again.
        BrokerHandle l = leader(brokers, tp).orElseThrow();
        AppendResult r = l.appendAsLeader(tp, l.leaderLogState(tp).orElseThrow().leaderEpoch(),
            batch(0, 2, -1L, (short) -1, -1, 0));
        waitFor(() -> victim.localLogEndOffset(tp).getAsLong() == r.logEndOffset(), Duration.ofSeconds(30),
            () -> "restarted broker replicates");
        victim.removeLeadershipListener("restart-listener").get(10, TimeUnit.SECONDS);
    }
}
