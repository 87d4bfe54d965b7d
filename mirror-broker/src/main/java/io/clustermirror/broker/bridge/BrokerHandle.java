package io.clustermirror.broker.bridge;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.record.internal.MemoryRecords;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The extension's only way into a running stock Kafka broker ({@code kafka.server.BrokerServer}).
 * Everything here that touches Kafka's Scala classes or uses reflection stays in this package, so a
 * Kafka upgrade is a change in one place.
 */
public final class BrokerHandle {
    private BrokerHandle() {
    }

    /** Wraps a {@code kafka.server.BrokerServer} (typed Object so callers need no Scala types). */
    public static BrokerHandle of(Object brokerServer) {
        throw new UnsupportedOperationException("TODO");
    }

    public int nodeId() {
        throw new UnsupportedOperationException("TODO");
    }

    public String clusterId() {
        throw new UnsupportedOperationException("TODO");
    }

    /** {@code host:port} of this broker's inter-broker listener, for the extension's clients to its own cluster. */
    public String localBootstrapServers() {
        throw new UnsupportedOperationException("TODO");
    }

    /** The broker's original configs (for {@code cluster.mirror.*} settings). */
    public java.util.Map<String, Object> brokerConfigs() {
        throw new UnsupportedOperationException("TODO");
    }

    /** Kafka's metrics registry of this broker (reported through JMX). */
    public Metrics metrics() {
        throw new UnsupportedOperationException("TODO");
    }

    /** Installs a metadata publisher that reports this broker's leadership changes. */
    public CompletableFuture<Void> installLeadershipListener(String name, LeadershipListener listener) {
        throw new UnsupportedOperationException("TODO");
    }

    /** The destination topic id, if the topic exists. */
    public Optional<Uuid> topicId(String topic) {
        throw new UnsupportedOperationException("TODO");
    }

    /** The local log's state if this broker is the partition's leader. */
    public Optional<LeaderLogState> leaderLogState(TopicPartition partition) {
        throw new UnsupportedOperationException("TODO");
    }

    /**
     * Appends source batches as-is at their own offsets on the local leader: stamps each batch's
     * partitionLeaderEpoch with {@code leaderEpoch} (outside the CRC), appends with the RAFT_LEADER origin
     * (no re-validation, offsets, compression and producer fields kept) and wakes waiting followers.
     *
     * @throws NotLeaderException if this broker is not the leader at {@code leaderEpoch}
     */
    public AppendResult appendAsLeader(TopicPartition partition, int leaderEpoch, MemoryRecords records)
            throws NotLeaderException {
        throw new UnsupportedOperationException("TODO");
    }

    public boolean isShutdown() {
        throw new UnsupportedOperationException("TODO");
    }
}
