package io.clustermirror.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.StopPreview;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lag in milliseconds (the recovery point objective) on real clusters: the age of the oldest source record the
 * destination does not have yet, in {@code --describe}, the Java API, the stop dry-run and the broker's JMX gauge. It is 0
 * when caught up, grows while the topic is paused and the source takes records, and returns to 0 after a resume.
 */
@MirrorClusterTest(source = "lag-source", destination = "lag-destination")
class LagMsTest {
    private static final String MIRROR = "lag";
    private static final String TOPIC = "lag-orders";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;

    @Test
    void theLagIsZeroWhenCaughtUpGrowsWhilePausedAndReturnsToZeroAfterAResume() throws Exception {
        MirrorTestCluster source = clusters.source;
        MirrorTestCluster destination = clusters.destination;
        ClusterMirrorAdmin mirrors = clusters.mirrors;
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(TOPIC, 1, (short) 1)));
        }
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of())) {
            Workloads.sendBatch(producer, TOPIC, 0, "before", 5);
            mirrors.createClusterMirror(MIRROR, MirrorAssertions.mirrorConfig(source)).all().get();
            mirrors.startMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
            MirrorAssertions.awaitCaughtUp(source, destination, TOPIC, 1);
            TestUtils.waitFor(() -> lagMs() == 0 && Long.valueOf(0).equals(gauge()), MirrorAssertions.TIMEOUT,
                "a caught-up partition to show lag_ms 0 in describe and in the gauge");

            mirrors.pauseMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, MIRROR, TOPIC, 1, PartitionState.PAUSED);
            long beforeSend = System.currentTimeMillis();
            Workloads.sendBatch(producer, TOPIC, 0, "paused", 3);
            long afterSend = System.currentTimeMillis();

            TestUtils.waitFor(() -> lagMs() > 0, MirrorAssertions.TIMEOUT,
                "the paused partition's leader to find the records the source took since the pause");
            long first = assertAgeOfRecordsSentBetween(LagMsTest::lagMs, beforeSend, afterSend);
            TestUtils.waitFor(() -> lagMs() >= first + 1_000, MirrorAssertions.TIMEOUT, "the lag to grow while paused");
            assertAgeOfRecordsSentBetween(LagMsTest::lagMs, beforeSend, afterSend);
            assertAgeOfRecordsSentBetween(LagMsTest::gauge, beforeSend, afterSend);

            CliRun json = CliRun.run(destination.bootstrapServers(), "--describe", "--mirror", MIRROR, "--json");
            assertEquals(0, json.exit(), json.err());
            JsonNode partition = new ObjectMapper().readTree(json.out()).get("mirrors").get(0).get("topics").get(0).get("partitions").get(0);
            assertTrue(partition.get("lag_ms").asLong() >= first + 1_000, json.out());
            CliRun table = CliRun.run(destination.bootstrapServers(), "--describe", "--mirror", MIRROR);
            assertTrue(table.out().contains("LAG-MS"), table.out());
            List<StopPreview> previews = mirrors.previewStopMirrorTopics(MIRROR, List.of(TOPIC), List.of()).partitions().get();
            assertTrue(previews.get(0).lagMs() >= first + 1_000, "the dry-run names how old the records a stop leaves are: " + previews);
            assertEquals(PartitionState.PAUSED, MirrorAssertions.describe(mirrors, MIRROR, TOPIC, 0).state(), "the dry-run changed nothing");

            mirrors.resumeMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
            MirrorAssertions.awaitCaughtUp(source, destination, TOPIC, 1);
            TestUtils.waitFor(() -> {
                MirrorPartitionDescription d = MirrorAssertions.describe(mirrors, MIRROR, TOPIC, 0);
                return d.state() == PartitionState.MIRRORING && d.lagMs() == 0 && Long.valueOf(0).equals(gauge());
            }, MirrorAssertions.TIMEOUT, "the lag to return to 0 once the resumed partition caught up");
        }
    }

    private interface LagReading {
        Long read() throws Exception;
    }

    /**
     * A paused partition's lag is the age of the first record sent while paused: between the time since the send ended and
     * the time since it began (its producer stamped it in between; same clock for producer, broker and client here).
     */
    private static long assertAgeOfRecordsSentBetween(LagReading reading, long sentFrom, long sentTo) throws Exception {
        long from = System.currentTimeMillis();
        Long lagMs = reading.read();
        long to = System.currentTimeMillis();
        assertTrue(lagMs != null && lagMs >= from - sentTo && lagMs <= to - sentFrom,
            "lag " + lagMs + " ms, records sent " + (from - sentTo) + ".." + (to - sentFrom) + " ms before");
        return lagMs;
    }

    private static Long lagMs() throws Exception {
        return MirrorAssertions.describe(clusters.mirrors, MIRROR, TOPIC, 0).lagMs();
    }

    /** The destination leader's {@code lag-ms} gauge, read through JMX; null while it has none. */
    private static Long gauge() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> names = server.queryNames(new ObjectName("kafka.server:type=cluster-mirror,mirror=" + MIRROR
            + ",topic=" + TOPIC + ",partition=0"), null);
        if (names.isEmpty()) {
            return null;
        }
        return ((Number) server.getAttribute(names.iterator().next(), "lag-ms")).longValue();
    }
}
