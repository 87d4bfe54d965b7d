package io.clustermirror.admin;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;

import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.internals.KafkaFutureImpl;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

class DescribeClusterMirrorsResultTest {
    private static ClusterMirrorDescription description(String name) {
        return new ClusterMirrorDescription(name, Map.of("bootstrap.servers", "s:9092"), "Id", List.of());
    }

    @Test
    void allKeepsTheRequestedOrder() throws Exception {
        Map<String, KafkaFuture<ClusterMirrorDescription>> futures = new LinkedHashMap<>();
        for (String name : List.of("zeta", "alpha", "mid")) {
            futures.put(name, KafkaFuture.completedFuture(description(name)));
        }
        assertEquals(List.of("zeta", "alpha", "mid"),
            List.copyOf(new DescribeClusterMirrorsResult(futures).all().get().keySet()));
    }

    @Test
    void oneMissingMirrorFailsAllButNotTheOthers() throws Exception {
        KafkaFutureImpl<ClusterMirrorDescription> missing = new KafkaFutureImpl<>();
        missing.completeExceptionally(new ClusterMirrorException(MirrorError.UNKNOWN_CLUSTER_MIRROR, "no mirror named 'x'"));
        DescribeClusterMirrorsResult result = new DescribeClusterMirrorsResult(
            Map.of("dr", KafkaFuture.completedFuture(description("dr")), "x", missing));
        ExecutionException e = assertThrows(ExecutionException.class, () -> result.all().get());
        assertEquals(MirrorError.UNKNOWN_CLUSTER_MIRROR, assertInstanceOf(ClusterMirrorException.class, e.getCause()).error());
        assertEquals(description("dr"), result.describedMirrors().get("dr").get());
    }
}
