package io.clustermirror.it;

import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.PartitionVerification;
import io.clustermirror.testkit.MirrorTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How fast {@code --verify} reads and compares: a large lz4 topic is mirrored, then verified once, and the bytes compared
 * per second are printed. Run only on request ({@code -Dverify.throughput.mib=1024}): it writes that much to each cluster.
 */
@EnabledIfSystemProperty(named = "verify.throughput.mib", matches = "\\d+")
class VerifyThroughputTest {
    private static final int PARTITIONS = 4;
    private static final int VALUE_BYTES = 1024;

    @Test
    void verifyALargeLz4Topic() throws Exception {
        long targetBytes = Long.getLong("verify.throughput.mib") * 1024 * 1024;
        String topic = "verify-throughput";
        try (ClusterPair clusters = ClusterPair.start(MirrorTestCluster.builder().name("throughput-source").brokers(1),
                MirrorTestCluster.builder().name("throughput-destination").brokers(1))) {
            try (Admin admin = clusters.source.admin()) {
                admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
            }
            clusters.mirrors.createClusterMirror("throughput", MirrorAssertions.mirrorConfig(clusters.source)).all().get();
            clusters.mirrors.startMirrorTopics("throughput", List.of(topic), List.of()).all().get();
            // Half random, half repeated: lz4 stores about 55% of it, so the produced bytes exceed the target.
            Random random = new Random(42);
            long produced = 0;
            try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.source.bootstrapServers(), Map.of(
                    ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4", ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024,
                    ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
                for (long i = 0; produced < targetBytes * 2; i++) {
                    byte[] value = new byte[VALUE_BYTES];
                    random.nextBytes(value);
                    Arrays.fill(value, VALUE_BYTES / 2, VALUE_BYTES, (byte) 'x');
                    producer.send(new ProducerRecord<>(topic, (int) (i % PARTITIONS), null, value));
                    produced += VALUE_BYTES;
                }
            }
            MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, topic, PARTITIONS);
            long startNs = System.nanoTime();
            List<PartitionVerification> result = clusters.mirrors.verifyMirrorTopics("throughput", List.of(topic), List.of(),
                new Properties(), new MirrorTopicsOptions()).partitions().get();
            double seconds = (System.nanoTime() - startNs) / 1e9;
            long bytes = result.stream().mapToLong(PartitionVerification::bytes).sum();
            long batches = result.stream().mapToLong(PartitionVerification::batches).sum();
            assertTrue(result.stream().allMatch(PartitionVerification::identical), result.toString());
            System.out.printf("verify throughput: %d MiB stored (%d batches, %d MiB produced) compared in %.1f s: %.0f MiB/s%n",
                bytes >> 20, batches, produced >> 20, seconds, bytes / seconds / (1 << 20));
        }
    }
}
