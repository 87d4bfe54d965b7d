package io.clustermirror.broker.fetch;

import io.clustermirror.common.ChunkedListOffsets;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/** {@link SourceMetadata} through an Admin client to the source, each call bounded by the source's request timeout. */
final class AdminSourceMetadata implements SourceMetadata {
    private final Admin admin;
    private final int requestTimeoutMs;

    AdminSourceMetadata(Admin admin, int requestTimeoutMs) {
        this.admin = admin;
        this.requestTimeoutMs = requestTimeoutMs;
    }

    @Override
    public Map<String, CompletableFuture<TopicDescription>> describeTopics(Set<String> topics) {
        Map<String, CompletableFuture<TopicDescription>> out = new HashMap<>();
        admin.describeTopics(topics, new DescribeTopicsOptions().timeoutMs(requestTimeoutMs)).topicNameValues()
            .forEach((topic, description) -> out.put(topic, completable(description)));
        return out;
    }

    @Override
    public Map<TopicPartition, CompletableFuture<Long>> offsets(Set<TopicPartition> partitions, OffsetSpec spec) {
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        partitions.forEach(tp -> specs.put(tp, spec));
        ListOffsetsOptions options = new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED);
        options.timeoutMs(requestTimeoutMs);
        Map<TopicPartition, KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo>> results =
            ChunkedListOffsets.partitionResults(admin, specs, options);
        Map<TopicPartition, CompletableFuture<Long>> out = new HashMap<>();
        partitions.forEach(tp -> out.put(tp, completable(results.get(tp)).thenApply(ListOffsetsResult.ListOffsetsResultInfo::offset)));
        return out;
    }

    private static <T> CompletableFuture<T> completable(KafkaFuture<T> future) {
        return future.toCompletionStage().toCompletableFuture();
    }

    @Override
    public void close() {
        admin.close(Duration.ZERO);
    }
}
