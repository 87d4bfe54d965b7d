package io.clustermirror.common.compat;

import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.FetchSessionHandler;
import org.apache.kafka.clients.KafkaClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * A {@link SourceEndpoint} over a Kafka network client ({@link org.apache.kafka.clients.NetworkClient} in production)
 * and Kafka's {@link FetchSessionHandler}, which decides what each request sends, forgets and expects back.
 */
public final class NetworkSourceEndpoint implements SourceEndpoint {
    private final Node node;
    private final KafkaClient client;
    private final FetchSessionHandler session;
    private final EndpointSettings settings;
    private final Time time;
    private volatile boolean closing;

    NetworkSourceEndpoint(Node node, KafkaClient client, EndpointSettings settings, Time time, LogPrefix logPrefix) {
        this.node = node;
        this.client = client;
        this.session = KafkaClientShapes.fetchSessionHandler(logPrefix.logContext(), node.id());
        this.settings = settings;
        this.time = time;
    }

    /**
     * An endpoint to {@code node} over its own network client with the source cluster's client configs.
     *
     * @param clientProperties Kafka client configs of the source cluster (may hold secrets: never logged)
     * @param metrics          where the connection's metrics go, under {@code metricGroup} with {@code tags}
     * @param time             the clock of the endpoint's connect and request deadlines
     */
    public static NetworkSourceEndpoint to(Node node, Properties clientProperties, String clientId, EndpointSettings settings,
                                           Metrics metrics, String metricGroup, Map<String, String> tags,
                                           LogPrefix logPrefix, Time time) {
        KafkaClient client = BrokerFetchClient.networkClient(node, clientProperties, clientId, settings.requestTimeoutMs(),
            settings.maxResponseBytes(), metrics, metricGroup, tags, logPrefix);
        return new NetworkSourceEndpoint(node, client, settings, time, logPrefix);
    }

    @Override
    public Node node() {
        return node;
    }

    @Override
    public Outcome fetch(Map<TopicPartition, FetchPosition> partitions) {
        Outcome connecting = connect();
        if (connecting != null) {
            return connecting;
        }
        FetchSessionHandler.Builder builder = session.newBuilder();
        partitions.forEach((tp, at) -> builder.add(tp, new FetchRequest.PartitionData(at.topicId(), at.fetchOffset(),
            FetchRequest.INVALID_LOG_START_OFFSET, at.maxBytes(), Optional.empty(), at.lastFetchedEpoch())));
        FetchSessionHandler.FetchRequestData data = builder.build();
        FetchRequest.Builder request = FetchRequest.Builder
            .forConsumer(ApiKeys.FETCH.latestVersion(), settings.maxWaitMs(), settings.minBytes(), data.toSend())
            .isolationLevel(settings.isolationLevel())
            .setMaxBytes(settings.maxBytes())
            .metadata(data.metadata())
            .removed(data.toForget())
            .replaced(data.toReplace());
        ClientResponse resp = sendAndWait(request);
        if (resp == null) {
            return new Closed();
        }
        if (resp.wasDisconnected() || resp.versionMismatch() != null || resp.authenticationException() != null) {
            String why = resp.wasDisconnected() ? "disconnected"
                : resp.versionMismatch() != null ? resp.versionMismatch().getMessage()
                : resp.authenticationException().getMessage();
            session.handleError(new RuntimeException(why));
            return new Unreachable(why);
        }
        FetchResponse response = (FetchResponse) resp.responseBody();
        short version = resp.requestHeader().apiVersion();
        if (!session.handleResponse(response, version)) {
            return new SessionError(response.error());
        }
        Map<TopicPartition, FetchedPartition> fetched = new LinkedHashMap<>();
        response.responseData(session.sessionTopicNames(), version)
            .forEach((tp, partition) -> fetched.put(tp, BrokerFetchClient.fetched(partition)));
        return new Fetched(fetched);
    }

    /** Connects if needed: null once ready, else why not. */
    private Outcome connect() {
        long now = time.milliseconds();
        if (client.isReady(node, now)) {
            return null;
        }
        long deadline = now + settings.connectTimeoutMs();
        while (!closing) {
            now = time.milliseconds();
            if (client.ready(node, now)) {
                return null;
            }
            // The client keeps an authentication failure until a connection is ready: it is this attempt's only
            // once the attempt has ended.
            AuthenticationException auth = client.connectionFailed(node) ? client.authenticationException(node) : null;
            if (auth != null) {
                return new AuthenticationFailed(auth);
            }
            if (client.connectionFailed(node) || now >= deadline) {
                return new Unreachable(now >= deadline ? "connection timed out" : "connection failed");
            }
            client.poll(Math.min(100L, Math.max(1L, deadline - now)), now);
        }
        return new Closed();
    }

    /** Sends the request and polls until its response (or a disconnect); null if closing. */
    private ClientResponse sendAndWait(FetchRequest.Builder request) {
        long now = time.milliseconds();
        ClientRequest req = client.newClientRequest(String.valueOf(node.id()), request, now, true);
        client.send(req, now);
        while (!closing) {
            List<ClientResponse> responses = client.poll(settings.requestTimeoutMs(), time.milliseconds());
            for (ClientResponse r : responses) {
                if (r.requestHeader().correlationId() == req.correlationId()) {
                    return r;
                }
            }
        }
        return null;
    }

    @Override
    public void resetSession(Throwable cause) {
        session.handleError(cause);
    }

    @Override
    public int sessionId() {
        return session.sessionId();
    }

    @Override
    public void initiateClose() {
        closing = true;
        client.wakeup();
    }

    @Override
    public void close() {
        Utils.closeQuietly(client, "the network client to source broker " + node.id());
    }
}
