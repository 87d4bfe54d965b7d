package io.clustermirror.common.compat;

import org.apache.kafka.clients.MockClient;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** The fetch session of {@link NetworkSourceEndpoint} over Kafka's {@link MockClient}. */
class NetworkSourceEndpointTest {
    private static final Uuid TOPIC_ID = Uuid.fromString("x9yd0nJ0RBSuX8oeqmvg4A");
    private static final Map<Uuid, String> TOPIC_NAMES = Map.of(TOPIC_ID, "t");
    private static final TopicPartition P0 = new TopicPartition("t", 0);
    private static final TopicPartition P1 = new TopicPartition("t", 1);
    private static final int SESSION = 77;
    private static final int PARTITION_MAX_BYTES = 1 << 16;
    private static final EndpointSettings SETTINGS = new EndpointSettings(500, 1, 1 << 20, IsolationLevel.READ_COMMITTED,
        30_000L, 30_000, 1 << 21);

    private final MockTime time = new MockTime();
    private final Node node = new Node(1, "source-1", 9092);
    private final MockClient client = new MockClient(time, List.of(node));
    private final NetworkSourceEndpoint endpoint = new NetworkSourceEndpoint(node, client, SETTINGS, time,
        LogPrefix.of("[test] "));
    private final List<FetchRequest> sent = new ArrayList<>();

    @Test
    void oneSessionCarriesOnlyWhatChangedUntilItIsReset() {
        respond(Map.of(P0, 3L, P1, 0L));
        SourceEndpoint.Outcome first = endpoint.fetch(Map.of(P0, at(0), P1, at(0)));
        FetchRequest full = sent.get(0);
        assertEquals(FetchMetadata.INITIAL, full.metadata());
        assertEquals(Set.of(P0, P1), partitions(full));
        assertEquals(-1, full.replicaId(), "a consumer fetch");
        assertEquals(SETTINGS.maxWaitMs(), full.maxWait());
        assertEquals(SETTINGS.maxBytes(), full.maxBytes());
        assertEquals(SETTINGS.isolationLevel(), full.isolationLevel());
        Map<TopicPartition, FetchedPartition> fetched = assertInstanceOf(SourceEndpoint.Fetched.class, first).partitions();
        assertEquals(Set.of(P0, P1), fetched.keySet());
        assertEquals(3L, fetched.get(P0).highWatermark());
        assertEquals(Errors.NONE, fetched.get(P0).error());
        assertEquals(0, fetched.get(P0).records().remaining());
        assertEquals(SESSION, endpoint.sessionId());

        // Only the partition whose offset moved is sent; the session keeps the other.
        respond(Map.of(P0, 5L));
        endpoint.fetch(Map.of(P0, at(3), P1, at(0)));
        FetchRequest incremental = sent.get(1);
        assertEquals(new FetchMetadata(SESSION, 1), incremental.metadata());
        assertEquals(Set.of(P0), partitions(incremental));
        assertEquals(3L, incremental.fetchData(TOPIC_NAMES).values().iterator().next().fetchOffset);

        // A partition left out is forgotten by the session.
        respond(Map.of());
        endpoint.fetch(Map.of(P0, at(3)));
        FetchRequest forgetting = sent.get(2);
        assertEquals(new FetchMetadata(SESSION, 2), forgetting.metadata());
        assertEquals(Set.of(), partitions(forgetting));
        assertEquals(List.of(P1), forgetting.forgottenTopics(TOPIC_NAMES).stream().map(TopicIdPartition::topicPartition).toList());

        // After a reset the next request starts over: a full one that closes the old session.
        endpoint.resetSession(new IllegalStateException("response not handled to its end"));
        respond(Map.of(P0, 3L));
        endpoint.fetch(Map.of(P0, at(3)));
        FetchRequest fresh = sent.get(3);
        assertEquals(FetchMetadata.INITIAL_EPOCH, fresh.metadata().epoch());
        assertEquals(Set.of(P0), partitions(fresh));
    }

    @Test
    void aTopLevelErrorIsASessionErrorAndTheNextRequestIsFull() {
        respond(Map.of(P0, 0L));
        endpoint.fetch(Map.of(P0, at(0)));
        client.prepareResponse(this::capture,
            FetchResponse.of(Errors.FETCH_SESSION_ID_NOT_FOUND, 0, 0, new LinkedHashMap<>(), List.of()));
        SourceEndpoint.Outcome outcome = endpoint.fetch(Map.of(P0, at(0)));
        assertEquals(new SourceEndpoint.SessionError(Errors.FETCH_SESSION_ID_NOT_FOUND), outcome);

        respond(Map.of(P0, 0L));
        endpoint.fetch(Map.of(P0, at(0)));
        assertEquals(FetchMetadata.INITIAL, sent.get(2).metadata());
        assertEquals(Set.of(P0), partitions(sent.get(2)));
    }

    @Test
    void aDisconnectIsUnreachable() {
        client.prepareResponse(this::capture,
            FetchResponse.of(Errors.NONE, 0, SESSION, new LinkedHashMap<>(), List.of()), true);
        assertEquals(new SourceEndpoint.Unreachable("disconnected"), endpoint.fetch(Map.of(P0, at(0))));
    }

    private static FetchPosition at(long offset) {
        return new FetchPosition(TOPIC_ID, offset, PARTITION_MAX_BYTES, Optional.empty());
    }

    /** The next fetch gets a response of session {@link #SESSION} with these partitions and high watermarks. */
    private void respond(Map<TopicPartition, Long> highWatermarks) {
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> data = new LinkedHashMap<>();
        highWatermarks.forEach((tp, hw) -> data.put(new TopicIdPartition(TOPIC_ID, tp),
            new FetchResponseData.PartitionData().setPartitionIndex(tp.partition()).setHighWatermark(hw)
                .setRecords(MemoryRecords.EMPTY)));
        client.prepareResponse(this::capture,
            FetchResponse.of(Errors.NONE, 0, SESSION, data, List.of()));
    }

    private boolean capture(AbstractRequest body) {
        sent.add((FetchRequest) body);
        return true;
    }

    private static Set<TopicPartition> partitions(FetchRequest request) {
        Set<TopicPartition> out = new HashSet<>();
        request.fetchData(TOPIC_NAMES).keySet().forEach(tip -> out.add(tip.topicPartition()));
        return out;
    }
}
