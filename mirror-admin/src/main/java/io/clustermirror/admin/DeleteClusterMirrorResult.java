package io.clustermirror.admin;

import org.apache.kafka.common.KafkaFuture;

/** The result of {@link ClusterMirrorAdmin#deleteClusterMirror}. */
public class DeleteClusterMirrorResult {
    private final KafkaFuture<Void> future;

    /** For {@link ClusterMirrorAdmin} implementations and tests. */
    public DeleteClusterMirrorResult(KafkaFuture<Void> future) {
        this.future = future;
    }

    /**
     * A future that completes when the mirror controller has deleted the mirror, or fails with a
     * {@link io.clustermirror.common.ClusterMirrorException} (e.g. {@code UNKNOWN_CLUSTER_MIRROR},
     * {@code CLUSTER_MIRROR_NOT_EMPTY}).
     */
    public KafkaFuture<Void> all() {
        return future;
    }
}
