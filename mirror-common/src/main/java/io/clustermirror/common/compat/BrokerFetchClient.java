package io.clustermirror.common.compat;

import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NetworkClientUtils;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * Consumer Fetch requests (replica id -1, read_uncommitted) to one broker over a hand-made Kafka network client with
 * the cluster's client configs, TLS and SASL included: the records come back exactly as the broker stores them,
 * never decompressed or re-encoded as a consumer would. Sessionless, one partition a request: for reads that look at
 * a log, not for the mirroring data path. Not thread-safe; close it after use.
 */
public final class BrokerFetchClient implements AutoCloseable {
    private final Node node;
    private final NetworkClient client;
    private final Time time = Time.SYSTEM;

    private BrokerFetchClient(Node node, NetworkClient client) {
        this.node = node;
        this.client = client;
    }

    /**
     * @param clientProperties Kafka client configs of the cluster (may hold secrets: never logged)
     * @param maxResponseBytes the largest response the client reads: a larger size prefix (a TLS record read as a Kafka
     *                         size, a corrupt stream) closes the connection instead of allocating it
     * @param tags             metric tags of the connection
     * @param logPrefix        what the client's log lines start with
     */
    public static BrokerFetchClient to(Node node, Properties clientProperties, String clientId, int requestTimeoutMs,
                                       int maxResponseBytes, Metrics metrics, String metricGroup, Map<String, String> tags,
                                       String logPrefix) {
        return new BrokerFetchClient(node, networkClient(node, clientProperties, clientId, requestTimeoutMs, maxResponseBytes,
            metrics, metricGroup, tags, LogPrefix.of(logPrefix)));
    }

    /**
     * A network client to one broker with the cluster's client configs, as {@link #to} makes; the connection metrics
     * go to {@code metrics} under {@code metricGroup} with {@code tags}.
     */
    static NetworkClient networkClient(Node node, Properties clientProperties, String clientId, int requestTimeoutMs,
                                       int maxResponseBytes, Metrics metrics, String metricGroup, Map<String, String> tags,
                                       LogPrefix logPrefix) {
        Object logContext = logPrefix.logContext();
        Map<String, Object> props = new HashMap<>();
        clientProperties.forEach((k, v) -> props.put((String) k, v));
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        ConsumerConfig cc = new QuietConsumerConfig(props);
        Time time = Time.SYSTEM;
        ChannelBuilder channelBuilder = KafkaClientShapes.channelBuilder(cc, time, logContext);
        Selector selector = KafkaClientShapes.selector(maxResponseBytes, cc.getLong(ConsumerConfig.CONNECTIONS_MAX_IDLE_MS_CONFIG),
            metrics, time, metricGroup, tags, channelBuilder, logContext);
        return KafkaClientShapes.networkClient(selector, new ManualMetadataUpdater(List.of(node)), clientId,
            cc.getLong(ConsumerConfig.RECONNECT_BACKOFF_MS_CONFIG),
            cc.getLong(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG),
            cc.getInt(ConsumerConfig.SEND_BUFFER_CONFIG),
            cc.getInt(ConsumerConfig.RECEIVE_BUFFER_CONFIG),
            requestTimeoutMs,
            cc.getLong(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG),
            cc.getLong(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG),
            time, logContext);
    }

    /**
     * Fetches the batches of {@code tp} (the topic with id {@code topicId}) from {@code offset}, at most about
     * {@code maxBytes} (the first batch is returned whole whatever the limit).
     *
     * @param timeoutMs how long to wait for a connection and the response
     * @throws TimeoutException when no connection is ready within the timeout
     * @throws KafkaException   when the broker answers with a top-level error or no data for the partition, or the
     *                          connection breaks
     */
    public FetchedPartition fetch(TopicPartition tp, Uuid topicId, long offset, int maxBytes, long timeoutMs) {
        Map<TopicPartition, FetchRequest.PartitionData> data = Map.of(tp, new FetchRequest.PartitionData(topicId, offset,
            FetchRequest.INVALID_LOG_START_OFFSET, maxBytes, Optional.empty(), Optional.empty()));
        FetchRequest.Builder request = FetchRequest.Builder.forConsumer(ApiKeys.FETCH.latestVersion(), 0, 0, data)
            .isolationLevel(IsolationLevel.READ_UNCOMMITTED)
            .setMaxBytes(maxBytes);
        try {
            if (!NetworkClientUtils.awaitReady(client, node, time, Math.max(1, timeoutMs))) {
                throw new TimeoutException("no connection to broker " + node.id() + " within " + timeoutMs + " ms");
            }
            ClientRequest req = client.newClientRequest(String.valueOf(node.id()), request, time.milliseconds(), true);
            ClientResponse resp = NetworkClientUtils.sendAndReceive(client, req, time);
            FetchResponse response = (FetchResponse) resp.responseBody();
            if (response.error() != Errors.NONE) {
                throw new KafkaException("fetch from broker " + node.id() + " failed with " + response.error().name());
            }
            FetchResponseData.PartitionData pd = response.responseData(Map.of(topicId, tp.topic()),
                resp.requestHeader().apiVersion()).get(tp);
            if (pd == null) {
                throw new KafkaException("broker " + node.id() + " returned no data for " + tp);
            }
            return fetched(pd);
        } catch (IOException e) {
            throw new KafkaException("reading " + tp + " from broker " + node.id() + " failed: " + e.getMessage(), e);
        }
    }

    /** A partition of a fetch response in our terms. */
    static FetchedPartition fetched(FetchResponseData.PartitionData pd) {
        Optional<FetchedPartition.EpochEnd> diverging = FetchResponse.divergingEpoch(pd)
            .map(d -> new FetchedPartition.EpochEnd(d.epoch(), d.endOffset()));
        return new FetchedPartition(Errors.forCode(pd.errorCode()), pd.highWatermark(), pd.lastStableOffset(),
            pd.logStartOffset(), diverging, KafkaClientShapes.recordsBuffer(pd));
    }

    @Override
    public void close() {
        Utils.closeQuietly(client, "the network client to broker " + node.id());
    }

    /** The client configs, parsed without logging them (the values may hold secrets). */
    private static final class QuietConsumerConfig extends ConsumerConfig {
        QuietConsumerConfig(Map<String, Object> props) {
            super(props, false);
        }
    }
}
