package io.clustermirror.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.PartitionVerification;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The integrity check ({@code --verify}, {@link ClusterMirrorAdmin#verifyMirrorTopics}) on real clusters: it finds a
 * mirrored topic identical (every producer kind and codec, aborted transactions), compares a stopped topic only up to its
 * barrier, and names the partition and offset of a destination batch whose bytes were changed on disk.
 */
@MirrorClusterTest(source = "verify-source", destination = "verify-destination")
class MirrorVerifyTest {
    private static final String MIRROR = "verify";
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;

    @BeforeAll
    static void createTheMirror() throws Exception {
        clusters.mirrors.createClusterMirror(MIRROR, MirrorAssertions.mirrorConfig(clusters.source)).all().get();
    }

    @Test
    void aMirroredTopicIsIdenticalAndAStoppedOneIsComparedUpToItsBarrier() throws Exception {
        MirrorTestCluster source = clusters.source;
        MirrorTestCluster destination = clusters.destination;
        String topic = "verify-orders";
        int partitions = 3;
        Workloads.createTopic(source, topic, partitions, Map.of());
        Workloads.writeAllKinds(source.bootstrapServers(), topic, partitions, 4);
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, partitions);

        // No source configs given: the mirror's bootstrap.servers is used.
        List<PartitionVerification> mirrored = verify(topic, new Properties());
        assertEquals(partitions, mirrored.size(), mirrored.toString());
        try (Admin admin = source.admin()) {
            for (PartitionVerification v : mirrored) {
                long end = MirrorAssertions.endOffset(admin, new TopicPartition(topic, v.partition()));
                assertTrue(v.identical(), v.toString());
                assertEquals(0, v.verifiedFrom(), v.toString());
                assertEquals(end, v.verifiedTo(), "the whole mirrored log: " + v);
                assertTrue(v.batches() > 20 && v.bytes() > 0, v.toString());
            }
        }
        CliRun text = CliRun.run(destination.bootstrapServers(), "--verify", "--mirror", MIRROR, "--topics", topic,
            "--source-bootstrap-server", source.bootstrapServers());
        assertEquals(0, text.exit(), text.out() + text.err());
        assertTrue(text.out().contains(topic + "-0  IDENTICAL [0, " + mirrored.get(0).verifiedTo() + ")")
            && text.out().contains("3 of 3 partition(s) identical."), text.out());
        CliRun json = CliRun.run(destination.bootstrapServers(), "--verify", "--mirror", MIRROR, "--topics", topic, "--json");
        assertEquals(0, json.exit(), json.err());
        JsonNode root = new ObjectMapper().readTree(json.out());
        assertTrue(root.get("identical").asBoolean(), json.out());
        JsonNode first = root.get("partitions").get(0);
        assertEquals(topic, first.get("topic").asText());
        assertEquals(0, first.get("partition").asInt());
        assertEquals(0, first.get("verified_from").asLong());
        assertEquals(mirrored.get(0).verifiedTo(), first.get("verified_to").asLong());
        assertTrue(first.get("identical").asBoolean());
        assertTrue(first.get("first_difference_offset").isNull(), json.out());

        clusters.mirrors.stopMirrorTopics(MIRROR, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, topic, partitions, PartitionState.STOPPED);
        // After the failover both sides take new writes at the same offsets: the source's and the destination's own.
        Workloads.writeToEveryPartition(destination.bootstrapServers(), topic, partitions, "local", 6);
        Workloads.writeToEveryPartition(source.bootstrapServers(), topic, partitions, "late-source", 3);
        List<PartitionVerification> stopped = verify(topic, new Properties());
        try (Admin admin = destination.admin()) {
            for (PartitionVerification v : stopped) {
                long barrier = MirrorAssertions.describe(clusters.mirrors, MIRROR, topic, v.partition()).barrierOffset();
                assertTrue(v.identical(), v.toString());
                assertEquals(PartitionState.STOPPED, v.state());
                assertEquals(barrier, v.verifiedTo(), "compared up to the barrier only: " + v);
                assertTrue(MirrorAssertions.endOffset(admin, new TopicPartition(topic, v.partition())) > barrier + 6,
                    "the local writes follow the barrier");
            }
        }
    }

    @Test
    void aByteChangedInADestinationSegmentIsNamedByPartitionAndOffset() throws Exception {
        MirrorTestCluster source = clusters.source;
        MirrorTestCluster destination = clusters.destination;
        String topic = "verify-corrupt";
        TopicPartition tp = new TopicPartition(topic, 0);
        Workloads.createTopic(source, topic, 1, Map.of());
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(),
                Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
            for (int batch = 0; batch < 10; batch++) {
                for (int i = 0; i < 3; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, null, Workloads.bytes("value-" + batch + "-" + i)));
                }
                producer.flush();
            }
        }
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        assertTrue(verify(topic, new Properties()).get(0).identical(), "identical before the corruption");

        long corruptBatch = flipAByteOfARecordValue(destination.partitionDir(destination.leaderOf(tp), tp), "value-5-1");

        CliRun text = CliRun.run(destination.bootstrapServers(), "--verify", "--mirror", MIRROR, "--topics", topic);
        assertEquals(1, text.exit(), text.out() + text.err());
        assertTrue(text.out().contains(topic + "-0  DIFFERS at offset " + corruptBatch + ": destination batch [" + corruptBatch)
            && text.out().contains("fails its CRC check"), text.out());
        CliRun json = CliRun.run(destination.bootstrapServers(), "--verify", "--mirror", MIRROR, "--topics", topic, "--json");
        assertEquals(1, json.exit(), json.err());
        JsonNode partition = new ObjectMapper().readTree(json.out()).get("partitions").get(0);
        assertFalse(partition.get("identical").asBoolean(), json.out());
        assertEquals(corruptBatch, partition.get("first_difference_offset").asLong(), json.out());
        assertEquals(0, partition.get("verified_from").asLong(), json.out());
    }

    @Test
    void compactedTopicsAreRefused() throws Exception {
        String topic = "verify-compacted";
        Workloads.createTopic(clusters.source, topic, 1, Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
        clusters.mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of()).all().get();
        CliRun run = CliRun.run(clusters.destination.bootstrapServers(), "--verify", "--mirror", MIRROR, "--topics", topic);
        assertEquals(1, run.exit(), run.out());
        assertTrue(run.err().startsWith("INVALID_REQUEST: cannot verify compacted topics: " + topic + " (cleanup.policy=compact"),
            run.err());
    }

    private static List<PartitionVerification> verify(String topic, Properties sourceConfigs) throws Exception {
        return clusters.mirrors.verifyMirrorTopics(MIRROR, List.of(topic), List.of(), sourceConfigs, new MirrorTopicsOptions())
            .partitions().get();
    }

    /**
     * Flips one byte of the record value {@code value} in the replica's segment, as a disk fault would; the broker serves
     * the file as it is. Returns the base offset of the batch holding it.
     */
    private static long flipAByteOfARecordValue(Path partitionDir, String value) throws Exception {
        Path segment;
        try (Stream<Path> files = Files.list(partitionDir)) {
            segment = files.filter(f -> f.getFileName().toString().endsWith(".log")).sorted().findFirst().orElseThrow();
        }
        byte[] bytes = Files.readAllBytes(segment);
        byte[] needle = value.getBytes(StandardCharsets.UTF_8);
        int position = 0;
        for (MutableRecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)).batches()) {
            int at = indexOf(bytes, needle, position, position + batch.sizeInBytes());
            if (at >= 0) {
                try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE)) {
                    channel.write(ByteBuffer.wrap(new byte[] {(byte) (bytes[at + needle.length - 1] ^ 0x01)}),
                        at + needle.length - 1);
                }
                return batch.baseOffset();
            }
            position += batch.sizeInBytes();
        }
        throw new AssertionError("no batch of " + segment + " holds the value " + value);
    }

    private static int indexOf(byte[] bytes, byte[] needle, int from, int to) {
        for (int i = from; i + needle.length <= to; i++) {
            if (Arrays.equals(bytes, i, i + needle.length, needle, 0, needle.length)) {
                return i;
            }
        }
        return -1;
    }
}
