package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.NotCaughtUpException;
import io.clustermirror.admin.ProgressListener;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.testsupport.FaultProxy;
import io.clustermirror.testsupport.FreePorts;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A few hundred partitions through a start, a link flap and a stop (the smoke test of the benchmark's scale part): the
 * source is a launched broker the mirror reads only through a {@link FaultProxy} (a listener of its own, advertised at
 * the proxy), so that the flap is a network outage between two processes. While the source is silent every partition
 * stays MIRRORING and reports the source unavailable with its source end unknown; once the link is back every partition
 * catches up with what the source took meanwhile, byte for byte, and the reconnect does not knock per partition.
 */
@Tag(ProcessCluster.TAG)
@MirrorClusterTest(topologies = "topologies")
class ScaleSmokeTest {
    private static final Logger log = LoggerFactory.getLogger(ScaleSmokeTest.class);
    private static final String MIRROR = "smoke";
    private static final String MIRROR_LISTENER = "MIRROR";
    private static final int TOPICS = 30;
    private static final int PARTITIONS_PER_TOPIC = 10;
    private static final int PARTITIONS = TOPICS * PARTITIONS_PER_TOPIC;
    private static final List<String> TOPIC_NAMES = IntStream.range(0, TOPICS).mapToObj(i -> "smoke-" + i).toList();

    private static FaultProxy proxy;
    private static ClusterPair<ProcessCluster, MirrorTestCluster> clusters;

    /** The source's mirror listener behind the proxy, started first so that the source can advertise it. */
    static ClusterPair.Topologies topologies() throws Exception {
        int listenerPort = FreePorts.next();
        proxy = FaultProxy.startKafka("smoke-source", new InetSocketAddress("localhost", listenerPort));
        ClusterTopology source = ProcessCluster.topology("smoke-source").combined(1)
            .listener("PLAINTEXT", SecurityProtocol.PLAINTEXT)
            .listener(MIRROR_LISTENER, SecurityProtocol.PLAINTEXT)
            .fixedPort(1, MIRROR_LISTENER, listenerPort, proxy.address().getPort())
            .build();
        return ClusterPair.Topologies.of(source, MirrorTestCluster.builder().name("smoke-destination").topology());
    }

    @AfterAll
    static void closeProxy() {
        if (proxy != null) {
            proxy.close();
        }
    }

    @BeforeAll
    static void createTheMirror() throws Exception {
        clusters.mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", "localhost:" + proxy.address().getPort()))
            .all().get();
    }

    @Test
    void manyPartitionsStartRideOutALinkFlapAndStop() throws Exception {
        ProcessCluster source = clusters.source;
        MirrorTestCluster destination = clusters.destination;
        ClusterMirrorAdmin mirrors = clusters.mirrors;
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, TOPIC_NAMES.stream().map(t -> new NewTopic(t, PARTITIONS_PER_TOPIC, (short) 1)).toList());
        }
        writeToEveryPartition(source, 3);
        mirrors.startMirrorTopics(MIRROR, TOPIC_NAMES, List.of()).all().get();
        Map<TopicPartition, Long> ends = sourceEnds(source);
        awaitEvery(mirrors, "MIRRORING and caught up", d -> caughtUp(d, ends));

        // The flap: every connection through the proxy cut, and whatever the mirror opens next goes unanswered.
        proxy.stall();
        proxy.resetAll();
        writeToEveryPartition(source, 2);
        Map<TopicPartition, Long> endsAfterOutage = sourceEnds(source);
        awaitEvery(mirrors, "MIRRORING with the source unavailable and its end unknown", d -> d.p().state() == PartitionState.MIRRORING
            && d.p().lastError() != null && d.p().lastError().startsWith(MirrorError.SOURCE_UNAVAILABLE.name())
            && d.p().sourceEndOffset() == MirrorPartitionDescription.UNKNOWN && d.p().lag() == MirrorPartitionDescription.UNKNOWN);

        Map<ApiKeys, Long> beforeReturn = proxy.requestsSent();
        proxy.pass();
        awaitEvery(mirrors, "MIRRORING, no error, caught up after the outage", d -> caughtUp(d, endsAfterOutage));
        Map<ApiKeys, Long> reconnect = new HashMap<>();
        proxy.requestsSent().forEach((api, n) -> reconnect.put(api, n - beforeReturn.getOrDefault(api, 0L)));
        // One destination broker fetches from one source broker: the return costs requests per connection, not per partition.
        long requests = reconnect.values().stream().mapToLong(Long::longValue).sum();
        log.info("The return to all caught up sent the source {} requests: {}", requests, reconnect);
        assertTrue(requests < PARTITIONS, "the return sent " + requests + " requests for " + PARTITIONS + " partitions: " + reconnect);
        for (String topic : TOPIC_NAMES) {
            MirrorAssertions.assertIdenticalLogs(source, destination, topic, PARTITIONS_PER_TOPIC);
        }

        mirrors.stopMirrorTopics(MIRROR, TOPIC_NAMES, List.of()).all().get();
        awaitEvery(mirrors, "STOPPED", d -> d.p().state() == PartitionState.STOPPED);
        // Nothing was in a transaction: the stop cuts nothing, and its barrier follows the source's last record.
        for (Described d : partitions(mirrors)) {
            assertEquals(MirrorPartitionDescription.UNKNOWN, d.p().truncatedFromOffset(), "the stop cut " + d);
            assertEquals(endsAfterOutage.get(d.tp()), d.p().barrierOffset(), "the barrier of " + d);
            assertEquals(d.p().barrierOffset() + 1, d.p().destinationEndOffset(), "the end after the barrier of " + d);
        }
    }

    /**
     * A start that waits (the planned stop shares the wait) while the source falls silent after the first check: the
     * check under way when the timeout comes cannot read the source, and the wait still answers as a timeout does,
     * naming the partition behind at the last complete check, not "cannot read the source cluster" with a hint at its
     * security settings. The open transaction keeps the partition behind for the whole wait.
     */
    @Test
    void aWaitWhoseSourceFallsSilentNamesThePartitionsBehindAtItsTimeout() throws Exception {
        String topic = "smoke-wait";
        try (Admin admin = clusters.source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 1)));
        }
        AtomicInteger checks = new AtomicInteger();
        ProgressListener silenceTheSourceAfterTheFirstCheck = progress -> {
            if (checks.incrementAndGet() == 1) {
                proxy.stall();
            }
        };
        try (KafkaProducer<byte[], byte[]> open = Workloads.producer(clusters.source.bootstrapServers(),
                Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "smoke-wait"))) {
            open.initTransactions();
            open.beginTransaction();
            Workloads.sendBatch(open, topic, 0, "open", 2);
            try {
                ExecutionException e = assertThrows(ExecutionException.class, () -> clusters.mirrors.startMirrorTopics(MIRROR,
                    List.of(topic), List.of(), new MirrorTopicsOptions().waitUntilCaughtUp(true).timeoutMs(8_000)
                        .progressListener(silenceTheSourceAfterTheFirstCheck)).all().get());
                NotCaughtUpException notCaughtUp = assertInstanceOf(NotCaughtUpException.class, e.getCause(), e.getCause().toString());
                assertEquals(MirrorError.MIRROR_TOPIC_NOT_CAUGHT_UP, notCaughtUp.error());
                assertEquals(1, checks.get(), "the check during the silence ran out of time and reported nothing");
                assertEquals(List.of(new TopicPartition(topic, 0)), notCaughtUp.behind().stream()
                    .map(b -> new TopicPartition(b.topic(), b.partition())).toList(), notCaughtUp.getMessage());
                assertEquals(2, notCaughtUp.behind().get(0).sourceEndOffset(), notCaughtUp.getMessage());
            } finally {
                proxy.pass();
            }
            open.abortTransaction();
        }
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, topic, 1, PartitionState.MIRRORING);
    }

    /** One partition as describe shows it. */
    private record Described(TopicPartition tp, MirrorPartitionDescription p) {
    }

    /** MIRRORING with no error, the source end known, and the destination at {@code ends}' offset. */
    private static boolean caughtUp(Described d, Map<TopicPartition, Long> ends) {
        return d.p().state() == PartitionState.MIRRORING && d.p().lastError() == null && d.p().lag() == 0
            && d.p().destinationEndOffset() == ends.get(d.tp());
    }

    /** Waits until describe lists every partition and each satisfies {@code condition}; fails on any FAILED partition. */
    private static void awaitEvery(ClusterMirrorAdmin mirrors, String what, Predicate<Described> condition) throws Exception {
        TestUtils.waitFor(() -> {
            List<Described> all = partitions(mirrors);
            all.stream().filter(d -> d.p().state() == PartitionState.FAILED).findFirst().ifPresent(d -> {
                throw new AssertionError("partition FAILED while waiting for " + what + ": " + d);
            });
            return all.size() == PARTITIONS && all.stream().allMatch(condition);
        }, MirrorAssertions.TIMEOUT, () -> "every one of " + PARTITIONS + " partitions " + what);
    }

    /** The partitions of {@link #TOPIC_NAMES}, which the flap test mirrors. */
    private static List<Described> partitions(ClusterMirrorAdmin mirrors) throws Exception {
        ClusterMirrorDescription d = mirrors.describeClusterMirrors(List.of(MIRROR)).all().get(30, TimeUnit.SECONDS).get(MIRROR);
        List<Described> all = new ArrayList<>();
        for (MirrorTopicDescription t : d.topics()) {
            if (!TOPIC_NAMES.contains(t.topic())) {
                continue;
            }
            t.partitions().forEach(p -> all.add(new Described(new TopicPartition(t.topic(), p.partition()), p)));
        }
        return all;
    }

    /** Writes {@code records} records to every partition (idempotent, lz4), directly to the source's own listener. */
    private static void writeToEveryPartition(ProcessCluster source, int records) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (String topic : TOPIC_NAMES) {
                for (int partition = 0; partition < PARTITIONS_PER_TOPIC; partition++) {
                    for (int i = 0; i < records; i++) {
                        producer.send(new ProducerRecord<>(topic, partition, "k" + i, topic + "/" + partition + "/" + i));
                    }
                }
            }
            producer.flush();
        }
    }

    private static Map<TopicPartition, Long> sourceEnds(ProcessCluster source) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        TOPIC_NAMES.forEach(topic -> IntStream.range(0, PARTITIONS_PER_TOPIC)
            .forEach(partition -> latest.put(new TopicPartition(topic, partition), OffsetSpec.latest())));
        Map<TopicPartition, Long> ends = new HashMap<>();
        try (Admin admin = source.admin()) {
            admin.listOffsets(latest).all().get(60, TimeUnit.SECONDS).forEach((tp, info) -> ends.put(tp, info.offset()));
        }
        return ends;
    }
}
