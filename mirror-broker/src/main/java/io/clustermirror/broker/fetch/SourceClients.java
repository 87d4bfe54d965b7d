package io.clustermirror.broker.fetch;

import io.clustermirror.common.ListenerProbe;
import io.clustermirror.common.compat.LogPrefix;
import io.clustermirror.common.compat.BoundedClients;
import io.clustermirror.common.compat.NetworkSourceEndpoint;
import io.clustermirror.common.compat.ResponseBound;
import io.clustermirror.common.compat.SourceEndpoint;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Makes the clients one mirror uses on this broker to talk to its source cluster, all with the mirror's client configs
 * (security included): a {@link SourceEndpoint} per source broker for the fetchers and the coordinator's
 * {@link SourceMetadata} through an {@link Admin} client, which reads no response above the broker's bound. The client
 * configs may hold secrets: never logged.
 */
final class SourceClients implements AutoCloseable {
    private final String mirror;
    private final Properties sourceClientProperties;
    private final String clientId;
    private final FetchSettings settings;
    private final ResponseBound adminBound;
    private final LogPrefix logPrefix;
    private final Time time;
    /** The fetchers' connection metrics: kept out of the broker's registry, as a consumer's would be. */
    private final Metrics networkMetrics;

    /** @param time the mirror's clock: the endpoints' timeouts and the connection metrics */
    SourceClients(String mirror, Properties sourceClientProperties, ResponseBound adminBound, int localNodeId,
                  FetchSettings settings, LogPrefix logPrefix, Time time) {
        this.mirror = mirror;
        this.sourceClientProperties = sourceClientProperties;
        String configuredId = sourceClientProperties.getProperty(CommonClientConfigs.CLIENT_ID_CONFIG);
        this.clientId = (configuredId == null || configuredId.isBlank() ? "cluster-mirror-" + mirror : configuredId)
            + "-" + localNodeId;
        this.settings = settings;
        this.adminBound = adminBound;
        this.logPrefix = logPrefix;
        this.time = time;
        this.networkMetrics = new Metrics(time);
    }

    /** An endpoint to one source broker over its own {@link org.apache.kafka.clients.NetworkClient}. */
    SourceEndpoint endpoint(Node node) {
        Map<String, String> tags = new HashMap<>();
        tags.put("mirror", mirror);
        tags.put("source-broker", String.valueOf(node.id()));
        return NetworkSourceEndpoint.to(node, sourceClientProperties, clientId, settings.endpointSettings(), networkMetrics,
            "cluster-mirror-fetcher", tags, logPrefix, time);
    }

    /**
     * A new client to the source cluster's metadata, with the source's request timeout.
     *
     * @throws ListenerProbe.TlsListenerException if the configs name a TLS listener without TLS (or the reverse)
     */
    SourceMetadata metadata() {
        Properties props = new Properties();
        props.putAll(sourceClientProperties);
        ListenerProbe.check(props);
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId + "-admin");
        return new AdminSourceMetadata(BoundedClients.admin(props, adminBound), settings.sourceRequestTimeoutMs());
    }

    @Override
    public void close() {
        Utils.closeQuietly(networkMetrics, "cluster mirror network metrics");
    }
}
