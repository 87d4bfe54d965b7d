package io.clustermirror.testkit;

import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The kit on plain clusters (no extension): what our own mirror tests rely on. */
class MirrorTestClusterTest {
    private static final Duration TIMEOUT = TestUtils.DEFAULT_TIMEOUT;

    @Test
    void threeBrokersSurviveABrokerRestart() throws Exception {
        Path logDir;
        try (MirrorTestCluster cluster = MirrorTestCluster.builder().name("three").brokers(3).start()) {
            assertEquals(Set.of(0, 1, 2), cluster.brokerIds());
            String bootstrap = cluster.bootstrapServers();
            TopicPartition tp = new TopicPartition("events", 0);
            try (Admin admin = cluster.admin()) {
                admin.createTopics(List.of(new NewTopic(tp.topic(), 1, (short) 3))).all().get();
            }
            produce(cluster, tp, 0, 10);
            assertEquals(expected(0, 10), consume(cluster, tp, 10));

            int leader = cluster.leaderOf(tp);
            for (int id : cluster.brokerIds()) {
                Path dir = cluster.partitionDir(id, tp);
                assertTrue(Files.isRegularFile(dir.resolve("00000000000000000000.log")), dir.toString());
            }

            cluster.shutdownBroker(leader);
            assertEquals(Set.of(leader), cluster.stoppedBrokers());
            assertTrue(cluster.leaderOf(tp) != leader, "controlled shutdown moves leadership");
            produce(cluster, tp, 10, 20);

            cluster.startBroker(leader);
            assertEquals(Set.of(), cluster.stoppedBrokers());
            assertEquals(bootstrap, cluster.bootstrapServers(), "ports survive restarts");
            waitForFullIsr(cluster, tp, 3);
            produce(cluster, tp, 20, 30);
            assertEquals(expected(0, 30), consume(cluster, tp, 30));

            cluster.restartBroker(cluster.leaderOf(tp));
            waitForFullIsr(cluster, tp, 3);
            assertEquals(expected(0, 30), consume(cluster, tp, 30));

            assertThrows(IllegalStateException.class, () -> cluster.startBroker(0), "broker 0 is running");
            logDir = cluster.partitionDir(0, tp).getParent();
        }
        assertFalse(Files.exists(logDir), "close deletes the data");
    }

    @ParameterizedTest(name = "{0} broker(s)")
    @ValueSource(ints = {1, 2})
    void transactionsAndGroupsWorkOnSmallClusters(int brokers) throws Exception {
        try (MirrorTestCluster cluster = MirrorTestCluster.builder().name("small").brokers(brokers).start()) {
            TopicPartition tp = new TopicPartition("payments", 0);
            try (Admin admin = cluster.admin()) {
                admin.createTopics(List.of(new NewTopic(tp.topic(), 1, (short) brokers))).all().get();
            }
            Properties props = producerProperties(cluster);
            props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-1");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), "k", "committed"));
                producer.commitTransaction();
            }
            Properties consumerProps = consumerProperties(cluster);
            consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, "g1");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
                consumer.assign(List.of(tp));
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(1)));
                assertEquals(1, consumer.committed(Set.of(tp)).get(tp).offset());
            }
            assertEquals(List.of("0:committed"), consume(cluster, tp, 1));
        }
    }

    @Test
    void rejectsAnEmptyCluster() {
        assertThrows(IllegalArgumentException.class, () -> MirrorTestCluster.builder().brokers(0));
    }

    private static List<String> expected(int from, int to) {
        List<String> records = new ArrayList<>();
        for (int i = from; i < to; i++) {
            records.add(i + ":v" + i);
        }
        return records;
    }

    private static void produce(MirrorTestCluster cluster, TopicPartition tp, int from, int to) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties(cluster))) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), "k" + i, "v" + i)).get();
            }
        }
    }

    /** Reads the partition from the start until {@code count} records came; "offset:value" each. */
    private static List<String> consume(MirrorTestCluster cluster, TopicPartition tp, int count) throws InterruptedException {
        List<String> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties(cluster))) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            TestUtils.waitFor(() -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                    records.add(r.offset() + ":" + r.value());
                }
                return records.size() >= count;
            }, TIMEOUT, count + " records from " + tp);
        }
        return records;
    }

    private static void waitForFullIsr(MirrorTestCluster cluster, TopicPartition tp, int replicas) throws InterruptedException {
        try (Admin admin = cluster.admin()) {
            TestUtils.waitFor(() -> {
                TopicDescription d = admin.describeTopics(Set.of(tp.topic())).allTopicNames().get().get(tp.topic());
                return Optional.ofNullable(d.partitions().get(tp.partition())).map(p -> p.isr().size() == replicas).orElse(false);
            }, TIMEOUT, "all " + replicas + " replicas of " + tp + " in the ISR");
        }
    }

    private static Properties producerProperties(MirrorTestCluster cluster) {
        Properties props = cluster.clientProperties();
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        return props;
    }

    private static Properties consumerProperties(MirrorTestCluster cluster) {
        Properties props = cluster.clientProperties();
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        return props;
    }
}
