package io.clustermirror.broker.controller;

import io.clustermirror.broker.fetch.TestClusters;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KafkaDestinationClusterTest {
    private static KafkaClusterTestKit cluster;
    private static Admin admin;
    private static KafkaDestinationCluster destination;

    @BeforeAll
    static void startTheCluster() throws Exception {
        cluster = TestClusters.start("destination", 1, Map.of());
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers()));
        destination = new KafkaDestinationCluster(admin, "destination-test");
    }

    @AfterAll
    static void stopTheCluster() throws Exception {
        admin.close();
        cluster.close();
    }

    @Test
    void aTopicWithinOneRequestIsCreatedInOne() {
        assertEquals(List.of(1), KafkaDestinationCluster.creationSteps(1));
        assertEquals(List.of(5000), KafkaDestinationCluster.creationSteps(5000));
    }

    @Test
    void aBiggerTopicIsCreatedSmallerAndGrownInRequestsTheControllerTakes() {
        // 10,000 partitions in one request would be 10,001 records and more: Kafka's controller refuses it.
        assertEquals(List.of(5000, 10000), KafkaDestinationCluster.creationSteps(10000));
        assertEquals(List.of(5000, 10000, 12001), KafkaDestinationCluster.creationSteps(12001));
    }

    @Test
    void manyTopicsShareARequestUpToItsPartitions() {
        List<DestinationCluster.NewTopicSpec> thousandOfTen = IntStream.range(0, 1000)
            .mapToObj(i -> new DestinationCluster.NewTopicSpec("t" + i, 10, Map.of())).toList();
        List<List<DestinationCluster.NewTopicSpec>> requests = KafkaDestinationCluster.requests(thousandOfTen);
        assertEquals(List.of(500, 500), requests.stream().map(List::size).toList(), "5,000 partitions per request");
        assertEquals(thousandOfTen, requests.stream().flatMap(List::stream).toList(), "in their order");

        List<DestinationCluster.NewTopicSpec> mixed = List.of(spec("a", 4000), spec("big", 12001), spec("b", 999), spec("c", 2));
        // big's first step (5,000) fills a request alone; b fits after it no more, c does after b.
        assertEquals(List.of(List.of("a"), List.of("big"), List.of("b", "c")), KafkaDestinationCluster.requests(mixed).stream()
            .map(r -> r.stream().map(DestinationCluster.NewTopicSpec::topic).toList()).toList());
    }

    @Test
    void describeShowsTheTopicsThatExistWithTheirOffsetsInOneCall() throws Exception {
        admin.createTopics(List.of(new NewTopic("described", 2, (short) 1))).all().get();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>("described", 1, null, "v" + i)).get();
            }
        }
        Map<String, DestinationCluster.Topic> described = destination.describe(List.of("described", "absent"));
        assertEquals(Set.of("described"), described.keySet(), "a topic that does not exist is absent");
        assertEquals(List.of(new DestinationCluster.Log(0, 0), new DestinationCluster.Log(0, 3)), described.get("described").logs());
        assertEquals(Map.of(), destination.describe(List.of()));
    }

    @Test
    void aCreateThatFailsForOneTopicLeavesNoneBehind() throws Exception {
        ClusterMirrorException e = assertThrows(ClusterMirrorException.class, () -> destination.create(List.of(
            spec("created-then-deleted", 2), new DestinationCluster.NewTopicSpec("refused", 1, Map.of("cleanup.policy", "bogus")))));
        assertEquals(MirrorError.UNKNOWN_SERVER_ERROR, e.error());
        assertTrue(e.getMessage().contains("'refused'"), e.getMessage());
        TestUtils.waitFor(() -> destination.describe(List.of("created-then-deleted", "refused")).isEmpty(), TestUtils.DEFAULT_TIMEOUT,
            "neither topic is left");

        destination.create(List.of(spec("x", 3), spec("y", 1)));
        Map<String, DestinationCluster.Topic> made = TestUtils.waitForValue(() -> {
            Map<String, DestinationCluster.Topic> d = destination.describe(List.of("x", "y"));
            return d.size() == 2 ? Optional.of(d) : Optional.empty();
        }, TestUtils.DEFAULT_TIMEOUT, "both topics created");
        assertEquals(3, made.get("x").partitions());
        assertEquals(1, made.get("y").partitions());
    }

    private static DestinationCluster.NewTopicSpec spec(String topic, int partitions) {
        return new DestinationCluster.NewTopicSpec(topic, partitions, Map.of());
    }
}
