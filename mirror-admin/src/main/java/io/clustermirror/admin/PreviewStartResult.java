package io.clustermirror.admin;

import org.apache.kafka.common.KafkaFuture;

import java.util.List;

/** The result of {@link ClusterMirrorAdmin#previewStartMirrorTopics}: a dry-run of a start, which changes nothing. */
public class PreviewStartResult {
    private final KafkaFuture<List<StartPreview>> future;

    /** For {@link ClusterMirrorAdmin} implementations and tests. */
    public PreviewStartResult(KafkaFuture<List<StartPreview>> future) {
        this.future = future;
    }

    /**
     * A future of what the start would do to each partition of the selected stopped topics, ordered by topic and
     * partition. Fails as the start would refuse (e.g. {@code UNKNOWN_CLUSTER_MIRROR}, {@code MIRROR_TOPIC_NOT_STOPPED}
     * for a topic whose partitions have not finished stopping).
     */
    public KafkaFuture<List<StartPreview>> partitions() {
        return future;
    }
}
