package io.clustermirror.admin;

import org.apache.kafka.common.KafkaFuture;

import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;

/** The result of {@link ClusterMirrorAdmin#listClusterMirrors}. */
public class ListClusterMirrorsResult {
    private final KafkaFuture<Collection<ClusterMirrorListing>> future;

    /** For {@link ClusterMirrorAdmin} implementations and tests. */
    public ListClusterMirrorsResult(KafkaFuture<Collection<ClusterMirrorListing>> future) {
        this.future = future;
    }

    /** A future of the mirrors, sorted by name. */
    public KafkaFuture<Collection<ClusterMirrorListing>> listings() {
        return future;
    }

    /** A future of the mirrors' names, sorted. */
    public KafkaFuture<List<String>> names() {
        return future.thenApply(listings ->
            listings.stream().map(ClusterMirrorListing::name).collect(Collectors.toList()));
    }
}
