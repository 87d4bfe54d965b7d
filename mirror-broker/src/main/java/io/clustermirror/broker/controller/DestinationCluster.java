package io.clustermirror.broker.controller;

import java.util.Collection;
import java.util.List;
import java.util.Map;

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

    /** A topic to create: its name, partition count and the configs set on it. */
    record NewTopicSpec(String topic, int partitions, Map<String, String> configs) {
        public NewTopicSpec {
            configs = Map.copyOf(configs);
        }
    }

    /**
     * The topics that exist among {@code topics}, with their partitions' offsets; a topic that does not exist is absent.
     * A few requests for all of them, whatever their number (a START of a thousand topics must not wait a thousand round
     * trips).
     */
    Map<String, Topic> describe(Collection<String> topics);

    /**
     * Creates the topics, all or none: if one cannot be created, those already created are deleted again before the
     * error is thrown.
     */
    void create(List<NewTopicSpec> topics);

    /** Grows a topic to {@code totalPartitions} partitions (an internal operation: allowed on mirror topics). */
    void createPartitions(String topic, int totalPartitions);
}
