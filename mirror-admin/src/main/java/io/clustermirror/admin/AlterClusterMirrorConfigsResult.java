package io.clustermirror.admin;

import org.apache.kafka.common.KafkaFuture;

/** The result of {@link ClusterMirrorAdmin#alterClusterMirrorConfigs}. */
public class AlterClusterMirrorConfigsResult {
    private final KafkaFuture<Void> future;

    /** For {@link ClusterMirrorAdmin} implementations and tests. */
    public AlterClusterMirrorConfigsResult(KafkaFuture<Void> future) {
        this.future = future;
    }

    /**
     * A future that completes when the mirror controller has stored the new configs (the brokers then move the mirror's
     * source clients to them), or fails with a {@link io.clustermirror.common.ClusterMirrorException} and changes nothing
     * (e.g. {@code UNKNOWN_CLUSTER_MIRROR}, {@code INVALID_CONFIG}, {@code SOURCE_CLUSTER_UNREACHABLE}).
     */
    public KafkaFuture<Void> all() {
        return future;
    }
}
