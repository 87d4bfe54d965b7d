package io.clustermirror.admin;

import org.apache.kafka.common.KafkaFuture;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** The result of {@link ClusterMirrorAdmin#describeClusterMirrors}. */
public class DescribeClusterMirrorsResult {
    private final Map<String, KafkaFuture<ClusterMirrorDescription>> futures;

    /** For {@link ClusterMirrorAdmin} implementations and tests; the map's order is kept. */
    public DescribeClusterMirrorsResult(Map<String, KafkaFuture<ClusterMirrorDescription>> futures) {
        this.futures = new LinkedHashMap<>(futures);
    }

    /**
     * A future per requested mirror, in the requested order. One fails with a {@link io.clustermirror.common.ClusterMirrorException}
     * ({@code UNKNOWN_CLUSTER_MIRROR}) for a name that is not a mirror, without affecting the others.
     */
    public Map<String, KafkaFuture<ClusterMirrorDescription>> describedMirrors() {
        return Collections.unmodifiableMap(futures);
    }

    /** A future of all descriptions in the requested order, which fails if any mirror's fails. */
    public KafkaFuture<Map<String, ClusterMirrorDescription>> all() {
        return KafkaFuture.allOf(futures.values().toArray(new KafkaFuture<?>[0])).thenApply(ignored -> {
            Map<String, ClusterMirrorDescription> descriptions = new LinkedHashMap<>();
            // Every future is done and succeeded here, so getNow never blocks nor throws.
            futures.forEach((name, future) -> descriptions.put(name, getNow(future)));
            return descriptions;
        });
    }

    private static ClusterMirrorDescription getNow(KafkaFuture<ClusterMirrorDescription> future) {
        try {
            return future.getNow(null);
        } catch (Exception e) {
            throw new IllegalStateException("unreachable: allOf succeeded", e);
        }
    }
}
