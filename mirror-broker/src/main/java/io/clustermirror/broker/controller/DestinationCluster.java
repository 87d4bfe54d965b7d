package io.clustermirror.broker.controller;

import java.util.Map;
import java.util.Optional;

/** The controller's view of, and changes to, its own (destination) cluster's topics. */
interface DestinationCluster {
    /**
     * @param partitions partition count
     * @param holdsData  true if any partition has a log end offset above its log start offset
     */
    record Topic(int partitions, boolean holdsData) {
    }

    Optional<Topic> describe(String topic);

    void create(String topic, int partitions, Map<String, String> configs);

    void delete(String topic);

    /** Grows a topic to {@code totalPartitions} partitions (an internal operation: allowed on mirror topics). */
    void createPartitions(String topic, int totalPartitions);
}
