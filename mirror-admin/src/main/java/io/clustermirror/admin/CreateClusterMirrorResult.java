package io.clustermirror.admin;

import org.apache.kafka.common.KafkaFuture;

/** The result of {@link ClusterMirrorAdmin#createClusterMirror}. */
public class CreateClusterMirrorResult {
    private final KafkaFuture<Void> future;

    /** For {@link ClusterMirrorAdmin} implementations and tests. */
    public CreateClusterMirrorResult(KafkaFuture<Void> future) {
        this.future = future;
    }

    /**
     * A future that completes when the mirror controller has created the mirror, or fails with a
     * {@link io.clustermirror.common.ClusterMirrorException} (e.g. {@code CLUSTER_MIRROR_ALREADY_EXISTS},
     * {@code INVALID_CONFIG}, {@code SOURCE_CLUSTER_UNREACHABLE}).
     */
    public KafkaFuture<Void> all() {
        return future;
    }
}
