package io.clustermirror.admin;

import org.apache.kafka.common.KafkaFuture;

import java.util.List;

/** The result of {@link ClusterMirrorAdmin#verifyMirrorTopics}: an integrity check, which changes nothing. */
public class VerifyMirrorTopicsResult {
    private final KafkaFuture<List<PartitionVerification>> future;

    /** For {@link ClusterMirrorAdmin} implementations and tests. */
    public VerifyMirrorTopicsResult(KafkaFuture<List<PartitionVerification>> future) {
        this.future = future;
    }

    /**
     * A future of the check of each partition of the selected topics, ordered by topic and partition. A partition that
     * differs or cannot be read does not fail it; it fails when the selection does (e.g. {@code UNKNOWN_CLUSTER_MIRROR},
     * {@code TOPIC_NOT_IN_CLUSTER_MIRROR}, {@code INVALID_REQUEST} for a compacted topic) or a cluster cannot be reached.
     */
    public KafkaFuture<List<PartitionVerification>> partitions() {
        return future;
    }

    /** A future of whether every selected partition is identical on both sides. */
    public KafkaFuture<Boolean> allIdentical() {
        return future.thenApply(partitions -> partitions.stream().allMatch(PartitionVerification::identical));
    }
}
