package io.clustermirror.broker.controller;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class KafkaDestinationClusterTest {

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
}
