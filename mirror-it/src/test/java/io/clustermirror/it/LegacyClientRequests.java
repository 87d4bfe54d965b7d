package io.clustermirror.it;

import io.clustermirror.testsupport.TestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.AlterConfigsResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.RequestHeader;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Requests that today's Java clients no longer send but brokers still serve, for other clients and older versions:
 * each sent as such a client sends it, over a plain socket, its error thrown as that client surfaces it.
 */
final class LegacyClientRequests {
    private LegacyClientRequests() {
    }

    /**
     * AlterConfigs (it replaces the resource's whole config), what {@code Admin.alterConfigs} sent until Kafka 4.0 removed
     * that deprecated method: sent to a broker, which forwards it to the controller. The error is thrown as that
     * method's future failed: {@link ApiError#exception()}.
     */
    static void alterConfigs(TestCluster cluster, String topic, Map<String, String> configs) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        List<AlterConfigsRequest.ConfigEntry> entries = configs.entrySet().stream()
            .map(e -> new AlterConfigsRequest.ConfigEntry(e.getKey(), e.getValue())).toList();
        AlterConfigsResponse response = (AlterConfigsResponse) roundTrip(anyBroker(cluster),
            new AlterConfigsRequest.Builder(Map.of(resource, new AlterConfigsRequest.Config(entries)), false)
                .build(ApiKeys.ALTER_CONFIGS.latestVersion()));
        ApiError error = response.errors().get(resource);
        if (error.isFailure()) {
            throw error.exception();
        }
    }

    /**
     * A transactional client below transaction version 2 (a client older than Kafka 4.0, or any client of a cluster at
     * {@code transaction.version} 1) adds a partition to its transaction with AddPartitionsToTxn before it produces to
     * it: FindCoordinator, InitProducerId, then AddPartitionsToTxn v3 for partition 0 of the topic, at the versions such a
     * client sends. A partition the coordinator refuses is thrown as the producer surfaces it, a
     * {@link TopicAuthorizationException} naming the topic; an added partition's transaction is aborted (EndTxn).
     */
    static void addPartitionToTransaction(TestCluster cluster, String topic, String transactionalId) throws Exception {
        // FindCoordinator creates the transaction state topic on first use: retried until a loaded coordinator answers.
        record Coordinated(Node coordinator, InitProducerIdResponseData producer) {
        }
        Coordinated c = TestUtils.waitForValue(() -> {
            FindCoordinatorResponse found = (FindCoordinatorResponse) roundTrip(anyBroker(cluster), new FindCoordinatorRequest.Builder(
                new FindCoordinatorRequestData().setKeyType(FindCoordinatorRequest.CoordinatorType.TRANSACTION.id())
                    .setCoordinatorKeys(List.of(transactionalId))).build((short) 4));
            FindCoordinatorResponseData.Coordinator coordinator = found.coordinators().get(0);
            if (coordinator.errorCode() != Errors.NONE.code()) {
                return Optional.empty();
            }
            Node node = new Node(coordinator.nodeId(), coordinator.host(), coordinator.port());
            InitProducerIdResponse init = (InitProducerIdResponse) roundTrip(node, new InitProducerIdRequest.Builder(
                new InitProducerIdRequestData().setTransactionalId(transactionalId).setTransactionTimeoutMs(60_000)
                    .setProducerId(-1).setProducerEpoch((short) -1)).build((short) 4));
            return init.error() == Errors.NONE ? Optional.of(new Coordinated(node, init.data())) : Optional.empty();
        }, MirrorAssertions.TIMEOUT, "a transaction coordinator and a producer id for " + transactionalId);

        TopicPartition tp = new TopicPartition(topic, 0);
        long producerId = c.producer().producerId();
        short epoch = c.producer().producerEpoch();
        AddPartitionsToTxnResponse added = (AddPartitionsToTxnResponse) roundTrip(c.coordinator(),
            AddPartitionsToTxnRequest.Builder.forClient(transactionalId, producerId, epoch, List.of(tp)).build((short) 3));
        Errors error = added.errors().get(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID).get(tp);
        if (error == Errors.TOPIC_AUTHORIZATION_FAILED) {
            throw new TopicAuthorizationException(Set.of(topic));
        } else if (error != Errors.NONE) {
            throw error.exception();
        }
        EndTxnResponse ended = (EndTxnResponse) roundTrip(c.coordinator(), new EndTxnRequest.Builder(new EndTxnRequestData()
            .setTransactionalId(transactionalId).setProducerId(producerId).setProducerEpoch(epoch).setCommitted(false), false)
            .build((short) 4));
        assertEquals(Errors.NONE, ended.error(), "the abort of transaction " + transactionalId);
    }

    private static Node anyBroker(TestCluster cluster) {
        String[] hostPort = cluster.bootstrapServers().split(",")[0].split(":");
        return new Node(-1, hostPort[0], Integer.parseInt(hostPort[1]));
    }

    /** Sends one request to a node on a new connection and returns its response. */
    private static AbstractResponse roundTrip(Node node, AbstractRequest request) throws IOException {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), "legacy-client-requests", 1);
        ByteBuffer sent = request.serializeWithHeader(header);
        byte[] bytes = new byte[sent.remaining()];
        sent.get(bytes);
        byte[] received;
        try (Socket socket = new Socket(node.host(), node.port())) {
            socket.setSoTimeout(30_000);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(bytes.length);
            out.write(bytes);
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            received = new byte[in.readInt()];
            in.readFully(received);
        }
        return AbstractResponse.parseResponse(ByteBuffer.wrap(received), header);
    }
}
