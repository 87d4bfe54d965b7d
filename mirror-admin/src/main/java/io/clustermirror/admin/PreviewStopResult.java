package io.clustermirror.admin;

import org.apache.kafka.common.KafkaFuture;

import java.util.List;

/** The result of {@link ClusterMirrorAdmin#previewStopMirrorTopics}: a failover dry-run, which changes nothing. */
public class PreviewStopResult {
    private final KafkaFuture<List<StopPreview>> partitions;
    private final KafkaFuture<StopTransactions> transactions;

    /** For {@link ClusterMirrorAdmin} implementations and tests. */
    public PreviewStopResult(KafkaFuture<List<StopPreview>> partitions, KafkaFuture<StopTransactions> transactions) {
        this.partitions = partitions;
        this.transactions = transactions;
    }

    /**
     * A future of what the stop would do to each partition of the selected topics, ordered by topic and partition.
     * Fails as the stop itself would refuse the selection (e.g. {@code UNKNOWN_CLUSTER_MIRROR},
     * {@code TOPIC_NOT_IN_CLUSTER_MIRROR}, {@code MIRROR_TOPIC_NOT_MIRRORING} for a topic already stopped).
     */
    public KafkaFuture<List<StopPreview>> partitions() {
        return partitions;
    }

    /**
     * A future of the committed transactions a plain stop would split across the selected partitions, and of where a
     * consistent stop would cut them instead. Fails as {@link #partitions()} does.
     */
    public KafkaFuture<StopTransactions> transactions() {
        return transactions;
    }
}
