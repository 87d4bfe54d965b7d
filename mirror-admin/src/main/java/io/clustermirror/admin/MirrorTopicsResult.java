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
    private final KafkaFuture<StopTransactions> consistentCut;

    /** For {@link ClusterMirrorAdmin} implementations and tests: an operation that is no consistent stop. */
    public MirrorTopicsResult(KafkaFuture<List<String>> future) {
        this(future, KafkaFuture.completedFuture(null));
    }

    /** For {@link ClusterMirrorAdmin} implementations and tests: a consistent stop, and the cuts it chose. */
    public MirrorTopicsResult(KafkaFuture<List<String>> future, KafkaFuture<StopTransactions> consistentCut) {
        this.future = future;
        this.consistentCut = consistentCut;
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

    /**
     * For a consistent stop ({@link MirrorTopicsOptions#consistent(boolean)}): the committed transactions a plain stop
     * would have split, where the stop cuts each partition instead and the records that removes beyond a plain stop
     * (both as the partitions stood when the stop read them), completing with {@link #topics()}. A future of null for any
     * other operation.
     */
    public KafkaFuture<StopTransactions> consistentCut() {
        return consistentCut;
    }

    /** A future that completes when {@link #topics()} does. */
    public KafkaFuture<Void> all() {
        return future.thenApply(topics -> null);
    }
}
