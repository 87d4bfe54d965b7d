package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.ClusterTopology.LaunchMode;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rolling restart of the destination's brokers with SIGTERM, one by one, as an operator runs one, while idempotent
 * producers (acks=all, the client's default retries) write to an ordinary topic and to a mirror topic that was STOPPED.
 * No send may fail: a broker that shuts down keeps enforcing the read-only rule with a live image until it is down (so
 * it never refuses writes to other topics), and a new leader of a stopped topic removes the mirrored producers on the
 * first write instead of refusing it. Every acknowledged record is read back.
 *
 * <p>The destination is the smallest that survives a broker going down: a dedicated controller and two brokers, topics
 * of replication factor 2 (a two-node combined quorum would lose its majority with one node down). Its brokers have a
 * client listener of their own, apart from the inter-broker one: a starting broker opens it only once its extension has
 * loaded the mirror image, so that it never refuses writes to an ordinary topic while it cannot tell mirror topics from
 * others, even when it leads partitions at once (a whole-cluster restart).
 */
@Tag(ProcessCluster.TAG)
@ParameterizedClass(name = "{0}")
@EnumSource(value = LaunchMode.class, names = {"LAUNCHER", "DROP_IN"})
@MirrorClusterTest(topologies = "topologies")
class RollingRestartTest {
    private static final Logger log = LoggerFactory.getLogger(RollingRestartTest.class);
    private static final int PARTITIONS = 3;

    private static ClusterPair<MirrorTestCluster, ProcessCluster> clusters;
    private static MirrorTestCluster source;
    private static ProcessCluster destination;
    private static ClusterMirrorAdmin mirrors;

    /** How the destination's nodes are started: every test runs against launcher nodes and drop-in nodes. */
    @Parameter
    LaunchMode mode;

    /**
     * Each launch mode's pair: the destination's nodes launched that way. Three source brokers: mirrored producer ids from
     * three blocks, as the destination's brokers hand them out.
     */
    static ClusterPair.Topologies topologies(LaunchMode mode) {
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("rolling-source").brokers(3).topology(),
            ProcessCluster.separateClientListener(ProcessCluster.topology("rolling-destination-" + mode).dedicated(1, 2).launchMode(mode))
                .build());
    }

    @BeforeParameterizedClassInvocation(injectArguments = false)
    static void nameTheClusters() {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
    }

    @Test
    void aRollingRestartFailsNoSendToAnOrdinaryOrAStoppedTopic() throws Exception {
        String ordinary = "rolling-ordinary";
        String stopped = "rolling-stopped";
        mirrorNextToAnOrdinaryTopic("rolling", stopped, ordinary);
        mirrors.stopMirrorTopics("rolling", List.of(stopped), List.of()).all().get();
        MirrorAssertions.awaitState(mirrors, "rolling", stopped, PARTITIONS, PartitionState.STOPPED);
        try (Admin admin = destination.admin()) {
            for (String topic : List.of(ordinary, stopped)) {
                assertEquals(2, Leadership.partitionInfo(admin, new TopicPartition(topic, 0)).replicas().size(),
                    topic + " has a replica on each broker");
            }
        }

        Writers writers = new Writers(List.of(ordinary, stopped));
        try {
            for (int node : destination.brokerIds()) {
                destination.stop(node);
                destination.start(node);
                for (String topic : List.of(ordinary, stopped)) {
                    for (int p = 0; p < PARTITIONS; p++) {
                        Leadership.awaitInSync(destination, new TopicPartition(topic, p), node);
                    }
                }
                log.info("Broker {} restarted and back in sync; {} records acknowledged so far, {} failed", node,
                    writers.acked.size(), writers.failed.size());
            }
        } finally {
            writers.stop();
        }
        writers.assertNoneFailedAndAllRead("the rolling restart");
    }

    /**
     * Every node (the controller and both brokers) killed at once and started again while a producer writes: each broker
     * leads partitions as soon as it is unfenced, before its extension has loaded the mirror image, so only the held
     * client listener keeps the producer from a write it would refuse (TOPIC_AUTHORIZATION_FAILED, not retried). A mirror
     * topic is still refused after it.
     */
    @Test
    void aWholeClusterRestartFailsNoSendToAnOrdinaryTopic() throws Exception {
        String ordinary = "restart-ordinary";
        String mirrored = "restart-mirrored";
        mirrorNextToAnOrdinaryTopic("restart", mirrored, ordinary);

        Writers writers = new Writers(List.of(ordinary));
        try {
            TestUtils.waitFor(() -> writers.acked.size() > 50, MirrorAssertions.TIMEOUT, "the producer to write before the restart");
            for (int node : destination.nodeIds()) {
                destination.kill(node);
            }
            for (int node : destination.nodeIds()) {
                destination.launch(node);
            }
            // Brokers first: the controller reads the mirror state through them.
            for (int node : destination.brokerIds()) {
                destination.awaitReady(node);
            }
            for (int node : destination.controllerOnlyIds()) {
                destination.awaitReady(node);
            }
            int afterRestart = writers.acked.size();
            TestUtils.waitFor(() -> writers.acked.size() > afterRestart + 100, MirrorAssertions.TIMEOUT,
                "the producer to write after the restart");
        } finally {
            writers.stop();
        }
        writers.assertNoneFailedAndAllRead("the whole-cluster restart");
        for (int node : destination.brokerIds()) {
            assertTrue(destination.outputSinceLastStart(node).contains("Broker " + node + " opens its client listeners [CLIENT]: "
                + "its Cluster Mirror state is loaded"), "node " + node + " held its client listener until the image was loaded");
        }
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(destination.bootstrapServers(), Map.of())) {
            ExecutionException refused = assertThrows(ExecutionException.class,
                () -> producer.send(new ProducerRecord<>(mirrored, 0, null, Workloads.bytes("local"))).get());
            assertInstanceOf(TopicAuthorizationException.class, refused.getCause(), "a mirror topic stays read-only");
        }
    }

    /**
     * Creates {@code ordinary} on the destination, and {@code mirrored} on the source with records of colliding producer
     * ids, mirrored by a new cluster mirror until caught up.
     */
    private static void mirrorNextToAnOrdinaryTopic(String mirror, String mirrored, String ordinary) throws Exception {
        try (Admin admin = destination.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(ordinary, PARTITIONS, (short) 2)));
        }
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(mirrored, PARTITIONS, (short) 3)));
        }
        Workloads.writeWithManyProducers(source.bootstrapServers(), mirrored, 30, 3);
        mirrors.createClusterMirror(mirror, MirrorAssertions.mirrorConfig(source)).all().get();
        mirrors.startMirrorTopics(mirror, List.of(mirrored), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, mirrored, PARTITIONS);
    }

    /** One producer per topic ({@link #writeUntilDone}) and what they were told. */
    private static final class Writers {
        private final List<String> topics;
        private final AtomicBoolean done = new AtomicBoolean();
        private final ConcurrentLinkedQueue<String> acked = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<String> failed = new ConcurrentLinkedQueue<>();
        private final List<CompletableFuture<Void>> running = new ArrayList<>();

        Writers(List<String> topics) {
            this.topics = topics;
            for (String topic : topics) {
                running.add(CompletableFuture.runAsync(() -> Workloads.writeUntilDone(destination.bootstrapServers(), topic,
                    PARTITIONS, done, acked, failed)));
            }
        }

        void stop() throws Exception {
            done.set(true);
            CompletableFuture.allOf(running.toArray(CompletableFuture[]::new)).get(MirrorAssertions.TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }

        /** No send failed, the producers kept writing, and every acknowledged record is on the destination. */
        void assertNoneFailedAndAllRead(String during) throws Exception {
            assertEquals(List.of(), List.copyOf(failed).subList(0, Math.min(10, failed.size())),
                failed.size() + " of " + (failed.size() + acked.size()) + " sends failed during " + during);
            assertTrue(acked.size() > 100, "the producers kept writing through " + during + ": " + acked.size());
            Set<String> read = new HashSet<>();
            for (String topic : topics) {
                for (int p = 0; p < PARTITIONS; p++) {
                    MirrorAssertions.readAll(destination, new TopicPartition(topic, p)).forEach(r -> read.add(r.split(" ")[2]));
                }
            }
            List<String> missing = acked.stream().filter(v -> !read.contains(v)).limit(10).toList();
            assertEquals(List.of(), missing, "acknowledged records missing on the destination");
        }
    }
}
