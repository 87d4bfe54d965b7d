package io.clustermirror.common.compat;

import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.internals.KafkaFutureImpl;

/**
 * A {@link KafkaFuture} that its maker completes later, as Kafka's own Admin results are. Kafka's public API has no way
 * to make an incomplete one; its implementation class is internal (the same in every supported line).
 */
public final class PendingFuture<T> {
    private final KafkaFutureImpl<T> future = new KafkaFutureImpl<>();

    /** What the caller waits on. */
    public KafkaFuture<T> future() {
        return future;
    }

    public void complete(T value) {
        future.complete(value);
    }

    public void fail(Throwable cause) {
        future.completeExceptionally(cause);
    }
}
