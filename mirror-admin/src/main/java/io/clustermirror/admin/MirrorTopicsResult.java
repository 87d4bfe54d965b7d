package io.clustermirror.admin;

import org.apache.kafka.common.KafkaFuture;

import java.util.List;

/**
 * The result of an operation on a mirror's topics: {@link ClusterMirrorAdmin#startMirrorTopics},
 * {@link ClusterMirrorAdmin#stopMirrorTopics}, {@link ClusterMirrorAdmin#pauseMirrorTopics} or
 * {@link ClusterMirrorAdmin#resumeMirrorTopics}.
 */
public class MirrorTopicsResult {
    private final KafkaFuture<List<String>> future;

    /** For {@link ClusterMirrorAdmin} implementations and tests. */
    public MirrorTopicsResult(KafkaFuture<List<String>> future) {
        this.future = future;
    }

    /**
     * A future of the topics the operation applied to, once the mirror controller has recorded the new
     * desired state. Partitions then move to it on their own: follow them with
     * {@link ClusterMirrorAdmin#describeClusterMirrors}. Fails with a
     * {@link io.clustermirror.common.ClusterMirrorException} (e.g. {@code UNKNOWN_CLUSTER_MIRROR},
     * {@code TOPIC_NOT_IN_CLUSTER_MIRROR}, {@code MIRROR_TOPIC_NOT_PAUSED}).
     */
    public KafkaFuture<List<String>> topics() {
        return future;
    }

    /** A future that completes when {@link #topics()} does. */
    public KafkaFuture<Void> all() {
        return future.thenApply(topics -> null);
    }
}
