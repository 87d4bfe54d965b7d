package io.clustermirror.broker.controller;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The controller's view of, and changes to, its own (destination) cluster's topics. */
interface DestinationCluster {
    /** A partition's log start offset and end offset (its high watermark: what consumers can read). */
    record Log(long startOffset, long endOffset) {
    }

    /** @param logs each partition's offsets, by partition index */
    record Topic(List<Log> logs) {
        public Topic {
            logs = List.copyOf(logs);
        }

        int partitions() {
            return logs.size();
        }

        /** True if any partition holds a record. */
        boolean holdsData() {
            return logs.stream().anyMatch(l -> l.endOffset() > l.startOffset());
        }
    }

    Optional<Topic> describe(String topic);

    void create(String topic, int partitions, Map<String, String> configs);

    void delete(String topic);

    /** Grows a topic to {@code totalPartitions} partitions (an internal operation: allowed on mirror topics). */
    void createPartitions(String topic, int totalPartitions);
}
