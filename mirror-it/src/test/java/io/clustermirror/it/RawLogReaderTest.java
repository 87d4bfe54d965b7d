package io.clustermirror.it;

import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredRecord;
import io.clustermirror.common.fetch.RawLogReader;
import io.clustermirror.testkit.MirrorTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * The raw reader of a cluster's logs (the stop's transaction analysis, {@code --verify}, the sync's reading of the source's
 * {@code __consumer_offsets}) on partitions led by different brokers: it keeps one network client per broker.
 */
class RawLogReaderTest {
    private static final String TOPIC = "raw-two-leaders";
    private static MirrorTestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = MirrorTestCluster.builder().name("raw-reader").brokers(2).withExtension(false).start();
        List<Integer> brokers = List.copyOf(cluster.brokerIds());
        try (Admin admin = cluster.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(TOPIC, Map.of(0, List.of(brokers.get(0)), 1, List.of(brokers.get(1))))));
        }
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    void oneReaderReadsPartitionsLedByDifferentBrokers() throws Exception {
        List<TopicPartition> partitions = List.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1));
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(cluster.bootstrapServers(), Map.of())) {
            for (TopicPartition tp : partitions) {
                for (int i = 0; i < 3; i++) {
                    producer.send(new ProducerRecord<>(TOPIC, tp.partition(), null, Workloads.bytes(tp + "/" + i))).get();
                }
            }
        }
        assertNotEquals(cluster.leaderOf(partitions.get(0)), cluster.leaderOf(partitions.get(1)), "two leaders");

        try (Admin admin = cluster.admin();
             RawLogReader reader = new RawLogReader(admin, cluster.clientProperties(), "raw-reader-test", Duration.ofSeconds(30))) {
            for (TopicPartition tp : partitions) {
                List<String> values = new ArrayList<>();
                RawLogReader.BatchStream batches = reader.stream(tp, 0, reader.range(tp).highWatermark());
                while (batches.hasNext()) {
                    StoredBatch batch = batches.next();
                    for (StoredRecord r : batch.records()) {
                        values.add(StandardCharsets.UTF_8.decode(r.value()).toString());
                    }
                }
                assertEquals(List.of(tp + "/0", tp + "/1", tp + "/2"), values);
            }
        }
    }
}
