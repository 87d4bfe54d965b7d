package io.clustermirror.it;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The link throttle ({@code mirror.fetch.rate.limit.bytes.per.sec}): a mirror at a low limit copies no faster than the
 * limit allows, stays MIRRORING without error while it waits, an ALTER to an invalid limit is refused naming the key,
 * and an ALTER that removes the limit lets it finish.
 */
@MirrorClusterTest(source = "throttle-source", destination = "throttle-destination")
class LinkThrottleTest {
    private static final String MIRROR = "throttled";
    private static final String TOPIC = "throttled-orders";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final int VALUE_BYTES = 1024;
    private static final int RECORDS = 8 * 1024; // 8 MiB of values
    private static final long LIMIT = 128 * 1024;
    private static final int BATCH_BYTES = 16 * 1024;

    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;

    @BeforeAll
    static void nameTheClusters() {
        source = clusters.source;
        destination = clusters.destination;
    }

    @Test
    void aLimitedMirrorCopiesNoFasterThanTheLimitAndFinishesOnceAnAlterRemovesIt() throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(TOPIC, 1, (short) 1)));
        }
        writeIncompressibleRecords();
        Map<String, String> config = MirrorAssertions.mirrorConfig(source);
        config.put(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC, String.valueOf(LIMIT));
        config.put(MirrorConfig.GROUPS_INCLUDE, "");
        config.put(MirrorConfig.ACL_INCLUDE, "");
        clusters.mirrors.createClusterMirror(MIRROR, config).all().get();

        long startedNs = System.nanoTime();
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
        long firstRecords = RECORDS / 8; // 1 MiB
        try (Admin dst = destination.admin()) {
            TestUtils.waitFor(() -> MirrorAssertions.endOffset(dst, TP) >= firstRecords, MirrorAssertions.TIMEOUT,
                "the throttled mirror did not copy " + firstRecords + " records");
        }
        double elapsedSec = (System.nanoTime() - startedNs) / 1e9;
        // Each record holds at least its value; the fetchers may have one second of credit and one response (at most
        // one second of the limit, or one batch) in flight beyond the limit.
        double lowerBoundSec = (firstRecords * VALUE_BYTES - 2.0 * LIMIT - BATCH_BYTES) / LIMIT;
        assertTrue(elapsedSec >= lowerBoundSec, "copied " + firstRecords * VALUE_BYTES + " bytes in " + elapsedSec
            + " s, faster than " + LIMIT + " bytes/s allows (" + lowerBoundSec + " s)");
        MirrorAssertions.awaitMirroringWithoutError(clusters.mirrors, MIRROR, TOPIC, 1);
        assertTrue(throttleTimeMs() > 0, "the fetcher waited for the throttle");

        ExecutionException refused = assertThrows(ExecutionException.class, () -> clusters.mirrors.alterClusterMirrorConfigs(MIRROR,
            List.of(new AlterConfigOp(new ConfigEntry(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC, "0"), AlterConfigOp.OpType.SET)))
            .all().get());
        ClusterMirrorException invalid = assertInstanceOf(ClusterMirrorException.class, refused.getCause());
        assertEquals(MirrorError.INVALID_CONFIG, invalid.error());
        assertTrue(invalid.getMessage().contains("'" + MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC + "'")
            && invalid.getMessage().contains("delete the config for no limit"), invalid.getMessage());

        // The rest would take about 56 s at the limit: without it, the mirror finishes well within half of that.
        clusters.mirrors.alterClusterMirrorConfigs(MIRROR, List.of(new AlterConfigOp(
            new ConfigEntry(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC, null), AlterConfigOp.OpType.DELETE))).all().get();
        double remainingAtLimitSec = (RECORDS - firstRecords) * (double) VALUE_BYTES / LIMIT;
        try (Admin dst = destination.admin()) {
            TestUtils.waitFor(() -> MirrorAssertions.endOffset(dst, TP) == RECORDS,
                Duration.ofMillis((long) (remainingAtLimitSec * 1000 / 2)),
                "the mirror did not finish once the limit was removed");
        }

        MirrorAssertions.awaitCaughtUp(source, destination, TOPIC, 1);
        MirrorAssertions.assertIdenticalLogs(source, destination, TOPIC, 1);
        MirrorAssertions.awaitMirroringWithoutError(clusters.mirrors, MIRROR, TOPIC, 1);
    }

    /** Random values (compression could not shrink them either), in batches of at most {@link #BATCH_BYTES}. */
    private static void writeIncompressibleRecords() throws Exception {
        Random random = new Random(16);
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(),
            Map.of(ProducerConfig.BATCH_SIZE_CONFIG, BATCH_BYTES, ProducerConfig.LINGER_MS_CONFIG, 20))) {
            for (int i = 0; i < RECORDS; i++) {
                byte[] value = new byte[VALUE_BYTES];
                random.nextBytes(value);
                producer.send(new ProducerRecord<>(TOPIC, 0, Workloads.bytes("k" + i), value));
            }
            producer.flush();
        }
        try (Admin admin = source.admin()) {
            assertEquals(RECORDS, MirrorAssertions.endOffset(admin, TP), "the source holds every record");
        }
    }

    /** {@code fetch-throttle-time-ms-total} of the mirror on the destination broker (the only one in this JVM). */
    private static double throttleTimeMs() throws Exception {
        return ((Number) ManagementFactory.getPlatformMBeanServer().getAttribute(
            new ObjectName("kafka.server:type=cluster-mirror,mirror=" + MIRROR), "fetch-throttle-time-ms-total")).doubleValue();
    }
}
