package io.clustermirror.common.fetch;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.MetadataRecoveryStrategy;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Builds hand-made {@link NetworkClient}s that send consumer Fetch requests to one broker of a cluster, with the
 * cluster's client configs (security included).
 */
public final class FetchClients {
    private FetchClients() {
    }

    /**
     * @param clientProperties Kafka client configs of the cluster (may hold secrets: never logged)
     * @param maxResponseBytes the largest response the client reads: a larger size prefix (a TLS record read as a Kafka
     *                         size, a corrupt stream) closes the connection instead of allocating it
     * @param tags             metric tags of the connection
     */
    public static NetworkClient to(Node node, Properties clientProperties, String clientId, int requestTimeoutMs,
                                   int maxResponseBytes, Metrics metrics, String metricGroup, Map<String, String> tags,
                                   LogContext logContext) {
        Map<String, Object> props = new HashMap<>();
        clientProperties.forEach((k, v) -> props.put((String) k, v));
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        ConsumerConfig cc = new QuietConsumerConfig(props);
        Time time = Time.SYSTEM;
        ChannelBuilder channelBuilder = ClientUtils.createChannelBuilder(cc, time, logContext);
        Selector selector = new Selector(maxResponseBytes, cc.getLong(ConsumerConfig.CONNECTIONS_MAX_IDLE_MS_CONFIG),
            metrics, time, metricGroup, tags, false, channelBuilder, logContext);
        return new NetworkClient(selector, new ManualMetadataUpdater(List.of(node)), clientId, 1,
            cc.getLong(ConsumerConfig.RECONNECT_BACKOFF_MS_CONFIG),
            cc.getLong(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG),
            cc.getInt(ConsumerConfig.SEND_BUFFER_CONFIG),
            cc.getInt(ConsumerConfig.RECEIVE_BUFFER_CONFIG),
            requestTimeoutMs,
            cc.getLong(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG),
            cc.getLong(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG),
            time, true, new ApiVersions(), logContext, MetadataRecoveryStrategy.NONE);
    }

    /** The client configs, parsed without logging them (the values may hold secrets). */
    private static final class QuietConsumerConfig extends ConsumerConfig {
        QuietConsumerConfig(Map<String, Object> props) {
            super(props, false);
        }
    }
}
