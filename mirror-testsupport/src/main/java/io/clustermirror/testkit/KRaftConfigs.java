package io.clustermirror.testkit;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Server configs every test cluster sets, in-JVM or launched, so that it behaves the same at every size: no more
 * replicas than brokers, and a minimum ISR that survives the loss of one broker.
 */
public final class KRaftConfigs {
    private KRaftConfigs() {
    }

    /** The replication factor of a cluster of {@code brokers} brokers: 3, or all of them if fewer. */
    public static int replicationFactor(int brokers) {
        // A cluster of controllers only (a test of a node that must refuse to start) still needs a valid factor.
        return Math.max(1, Math.min(3, brokers));
    }

    /** The minimum ISR that goes with {@link #replicationFactor}: 2 of 3, otherwise 1. */
    public static int minInsyncReplicas(int brokers) {
        return replicationFactor(brokers) >= 3 ? 2 : 1;
    }

    /**
     * The internal topics' replication (consumer offsets, transaction state, share-group state), at
     * {@link #replicationFactor} and {@link #minInsyncReplicas}, so that groups and transactions work in 1- and
     * 2-broker clusters and across a broker restart; and no delay for a group's first rebalance.
     */
    public static Map<String, String> internalTopics(int brokers) {
        String replicationFactor = String.valueOf(replicationFactor(brokers));
        String minIsr = String.valueOf(minInsyncReplicas(brokers));
        Map<String, String> configs = new LinkedHashMap<>();
        configs.put("offsets.topic.replication.factor", replicationFactor);
        configs.put("transaction.state.log.replication.factor", replicationFactor);
        configs.put("transaction.state.log.min.isr", minIsr);
        configs.put("share.coordinator.state.topic.replication.factor", replicationFactor);
        configs.put("share.coordinator.state.topic.min.isr", minIsr);
        configs.put("group.initial.rebalance.delay.ms", "0");
        return configs;
    }
}
