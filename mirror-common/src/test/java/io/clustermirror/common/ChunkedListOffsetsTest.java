package io.clustermirror.common;

import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.MockAdminClient;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ChunkedListOffsetsTest {
    private static final Node BROKER = new Node(0, "localhost", 9092);

    /** Kafka's mock admin client, recording how many partitions each ListOffsets call asked for. */
    private static final class RecordingAdmin extends MockAdminClient {
        final List<Integer> callSizes = new ArrayList<>();

        RecordingAdmin(String topic, int partitions) {
            super(List.of(BROKER), BROKER);
            List<TopicPartitionInfo> infos = IntStream.range(0, partitions)
                .mapToObj(p -> new TopicPartitionInfo(p, BROKER, List.of(BROKER), List.of(BROKER))).toList();
            addTopic(false, topic, infos, Map.of());
            Map<TopicPartition, Long> ends = new HashMap<>();
            IntStream.range(0, partitions).forEach(p -> ends.put(new TopicPartition(topic, p), 2L * p));
            updateEndOffsets(ends);
        }

        @Override
        public synchronized ListOffsetsResult listOffsets(Map<TopicPartition, OffsetSpec> specs, ListOffsetsOptions options) {
            callSizes.add(specs.size());
            return super.listOffsets(specs, options);
        }
    }

    private static Map<TopicPartition, OffsetSpec> latest(String topic, int partitions) {
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        IntStream.range(0, partitions).forEach(p -> specs.put(new TopicPartition(topic, p), OffsetSpec.latest()));
        return specs;
    }

    @Test
    void manyPartitionsAreAskedInCallsOfAThousandAndEveryOneIsAnswered() throws Exception {
        try (RecordingAdmin admin = new RecordingAdmin("orders", 2_500)) {
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> all =
                ChunkedListOffsets.all(admin, latest("orders", 2_500), new ListOffsetsOptions()).get();

            assertEquals(List.of(500, 1_000, 1_000), admin.callSizes.stream().sorted().toList());
            assertEquals(2_500, all.size());
            IntStream.range(0, 2_500).forEach(p -> assertEquals(2L * p, all.get(new TopicPartition("orders", p)).offset()));
        }
    }
}
