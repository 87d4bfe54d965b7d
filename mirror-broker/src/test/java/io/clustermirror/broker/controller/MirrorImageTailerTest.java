package io.clustermirror.broker.controller;

import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.broker.fetch.TestClusters;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tailer's read barrier on a real cluster: once {@link MirrorImageTailer#catchUp()} completes, the image (and the
 * listener, before it) holds every record committed to the internal topics before the call. A new leader decides on it.
 */
class MirrorImageTailerTest {
    private static KafkaClusterTestKit cluster;
    private static LocalClients clients;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestClusters.start("tailer", 1, Map.of());
        clients = new LocalClients(cluster.bootstrapServers(), Map.of(), 0);
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static PartitionStateRecord record(int partition, long lastMirroredOffset) {
        return new PartitionStateRecord("m", "t", partition, PartitionState.MIRRORING, 3, 0, "id", lastMirroredOffset, 5, List.of(),
            lastMirroredOffset + 1, lastMirroredOffset + 1, null, -1, -1, -1, 1L);
    }

    @Test
    void aReadBarrierCompletesOnlyOnceTheImageHoldsWhatWasCommittedBeforeIt() throws Exception {
        List<MirrorImage> seen = new CopyOnWriteArrayList<>();
        try (MirrorImageTailer tailer = new MirrorImageTailer(clients, 0, null, new Metrics(), seen::add)) {
            tailer.start();
            tailer.catchUp().get(30, TimeUnit.SECONDS); // no internal topic yet: nothing is committed
            createInternalTopicsIfAbsent();
            try (KafkaProducer<byte[], byte[]> producer = clients.producer("test", null)) {
                for (int round = 0; round < 5; round++) {
                    PartitionStateRecord last = null;
                    for (int p = 0; p < 20; p++) {
                        last = record(p, 100L * round + p);
                        producer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(last.key()),
                            RecordCodec.encodeState(last))).get();
                    }
                    tailer.catchUp().get(30, TimeUnit.SECONDS);
                    for (int p = 0; p < 20; p++) {
                        assertEquals(Optional.of(record(p, 100L * round + p)), tailer.image().partitionState("m", "t", p),
                            "round " + round + ", partition " + p);
                    }
                    assertEquals(Optional.of(last), seen.get(seen.size() - 1).partitionState("m", "t", 19),
                        "the listener was handed that image before the barrier completed");
                }
            }
        }
    }

    /** A failure on the tailer's thread (here: its listener) costs a retry after a backoff, and shows in the metrics. */
    @Test
    void theTailerSurvivesAFailureAndReportsItInTheMetrics() throws Exception {
        Metrics metrics = new Metrics();
        AtomicBoolean failNext = new AtomicBoolean(true);
        List<MirrorImage> seen = new CopyOnWriteArrayList<>();
        try (MirrorImageTailer tailer = new MirrorImageTailer(clients, 7, null, metrics, image -> {
                if (failNext.getAndSet(false)) {
                    throw new IllegalStateException("a bug in a listener");
                }
                seen.add(image);
            })) {
            tailer.start();
            createInternalTopicsIfAbsent();
            try (KafkaProducer<byte[], byte[]> producer = clients.producer("test", null)) {
                PartitionStateRecord first = record(30, 1);
                producer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(first.key()), RecordCodec.encodeState(first))).get();
                TestUtils.waitFor(() -> metric(metrics, "thread-failures-total") == 1.0, Duration.ofSeconds(30), () -> "the failure is counted");
                PartitionStateRecord second = record(31, 2);
                producer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(second.key()), RecordCodec.encodeState(second))).get();
                tailer.catchUp().get(30, TimeUnit.SECONDS);
                assertEquals(Optional.of(second), tailer.image().partitionState("m", "t", 31), "the tailer went on after the failure");
                assertEquals(Optional.of(first), tailer.image().partitionState("m", "t", 30), "and lost nothing");
                TestUtils.waitFor(() -> metric(metrics, "thread-healthy") == 1.0, Duration.ofSeconds(30), () -> "healthy again");
                assertTrue(!seen.isEmpty(), "the listener is handed images again");
            }
        }
        assertTrue(metrics.metrics().keySet().stream().noneMatch(n -> n.group().equals("cluster-mirror")), "close removes the metrics");
    }

    private static double metric(Metrics metrics, String name) {
        return ((Number) metrics.metrics().get(metrics.metricName(name, "cluster-mirror", Map.of("thread", "image-tailer-7")))
            .metricValue()).doubleValue();
    }

    private static void createInternalTopicsIfAbsent() throws Exception {
        try (Admin admin = clients.admin()) {
            for (String topic : List.of(InternalTopics.METADATA, InternalTopics.STATE)) {
                try {
                    admin.createTopics(List.of(InternalTopics.newTopic(topic, 1))).all().get();
                } catch (ExecutionException e) {
                    assertTrue(e.getCause() instanceof TopicExistsException, e.toString());
                }
            }
        }
    }

    @Test
    void aReadBarrierFailsWhenTheTailerCloses() throws Exception {
        MirrorImageTailer tailer = new MirrorImageTailer(clients, 0, null, new Metrics(), image -> { });
        tailer.close();
        assertTrue(tailer.catchUp().isCompletedExceptionally());
    }
}
