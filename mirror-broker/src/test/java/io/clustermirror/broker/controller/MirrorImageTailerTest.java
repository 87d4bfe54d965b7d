package io.clustermirror.broker.controller;

import io.clustermirror.broker.LocalClients;
import io.clustermirror.broker.fetch.TestClusters;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

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
        try (MirrorImageTailer tailer = new MirrorImageTailer(clients, 0, new Metrics(), seen::add)) {
            tailer.start();
            tailer.catchUp().get(30, TimeUnit.SECONDS); // no internal topic yet: nothing is committed
            try (Admin admin = clients.admin()) {
                admin.createTopics(List.of(InternalTopics.newTopic(InternalTopics.METADATA, 1),
                    InternalTopics.newTopic(InternalTopics.STATE, 1))).all().get();
            }
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

    @Test
    void aReadBarrierFailsWhenTheTailerCloses() throws Exception {
        MirrorImageTailer tailer = new MirrorImageTailer(clients, 0, new Metrics(), image -> { });
        tailer.close();
        assertTrue(tailer.catchUp().isCompletedExceptionally());
    }
}
