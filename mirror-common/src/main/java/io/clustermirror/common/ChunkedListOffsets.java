package io.clustermirror.common;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Kafka's {@link Admin#listOffsets} in calls of at most {@link #PARTITIONS_PER_CALL} partitions, with the results of one
 * call. The admin client keeps a call's partitions in immutable maps and sets ({@code Map.of}, {@code Set.copyOf}: open
 * addressing with linear probing), where the hash codes of one topic's partitions are consecutive integers, so that its
 * lookups run into each other and a call of n partitions costs about n² probes. A describe of 50,000 partitions spent
 * three minutes there; calls of a thousand keep the cost linear in the partitions.
 */
public final class ChunkedListOffsets {
    /** The most partitions in one ListOffsets call of the admin client. */
    public static final int PARTITIONS_PER_CALL = 1_000;

    private ChunkedListOffsets() {
    }

    /** Each partition's result, as {@link ListOffsetsResult#partitionResult} of one call would give it. */
    public static Map<TopicPartition, KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo>> partitionResults(
            Admin admin, Map<TopicPartition, OffsetSpec> specs, ListOffsetsOptions options) {
        Map<TopicPartition, KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo>> results = new HashMap<>();
        List<Map.Entry<TopicPartition, OffsetSpec>> entries = new ArrayList<>(specs.entrySet());
        for (int from = 0; from < entries.size(); from += PARTITIONS_PER_CALL) {
            Map<TopicPartition, OffsetSpec> call = new HashMap<>();
            entries.subList(from, Math.min(entries.size(), from + PARTITIONS_PER_CALL)).forEach(e -> call.put(e.getKey(), e.getValue()));
            ListOffsetsResult result = admin.listOffsets(call, options);
            call.keySet().forEach(tp -> results.put(tp, result.partitionResult(tp)));
        }
        return results;
    }

    /** Every partition's result, failing as {@link ListOffsetsResult#all} of one call does if any partition fails. */
    public static KafkaFuture<Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo>> all(
            Admin admin, Map<TopicPartition, OffsetSpec> specs, ListOffsetsOptions options) {
        Map<TopicPartition, KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo>> results = partitionResults(admin, specs, options);
        return KafkaFuture.allOf(results.values().toArray(new KafkaFuture<?>[0])).thenApply(done -> {
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> all = new HashMap<>();
            // Every future has completed successfully here: join returns at once.
            results.forEach((tp, future) -> all.put(tp, future.toCompletionStage().toCompletableFuture().join()));
            return all;
        });
    }
}
