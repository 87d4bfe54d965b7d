package io.clustermirror.broker.fetch;

import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The source metadata the {@link SourceLeaderCoordinator} reads ({@link AdminSourceMetadata} in a broker). Each call
 * returns at once with a result per topic or partition, which fails (as Kafka's Admin client reports it) when the source
 * refuses, or does not answer within its request timeout.
 */
interface SourceMetadata {
    /** The source's description of each topic: its id, partitions and their leaders. */
    Map<String, CompletableFuture<TopicDescription>> describeTopics(Set<String> topics);

    /** The offset {@code spec} names (earliest: the log start; latest: the log end) of each partition, read uncommitted. */
    Map<TopicPartition, CompletableFuture<Long>> offsets(Set<TopicPartition> partitions, OffsetSpec spec);

    /** Aborts the calls in flight and releases the client; the coordinator makes a new one for its next call. */
    void close();
}
