package io.clustermirror.broker.controller;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.compat.BoundedClients;
import io.clustermirror.common.image.MirrorImageReader;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * {@link SourceCluster} through a short-lived Admin client built from the mirror's own client configs, as this broker
 * resolves them: a config it cannot use fails the first question with INVALID_CONFIG, so CREATE refuses it.
 */
final class KafkaSourceCluster implements SourceCluster {
    private static final long TIMEOUT_MS = 15_000;

    private final BrokerClientConfigs clientConfigs;

    KafkaSourceCluster(BrokerClientConfigs clientConfigs) {
        this.clientConfigs = clientConfigs;
    }

    @Override
    public String clusterId(MirrorConfig config) {
        return call(config, admin -> admin.describeCluster().clusterId().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
    }

    @Override
    public Set<String> topicNames(MirrorConfig config) {
        return call(config, admin -> admin.listTopics().names().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
    }

    @Override
    public Map<String, SourceTopic> describe(MirrorConfig config, Collection<String> topics) {
        return call(config, admin -> {
            Map<String, TopicDescription> descriptions =
                admin.describeTopics(topics).allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            Map<ConfigResource, Config> configs = admin.describeConfigs(topics.stream()
                    .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList())
                .all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            Map<String, SourceTopic> result = new HashMap<>();
            for (TopicDescription d : descriptions.values()) {
                Config c = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, d.name()));
                Map<String, String> explicit = c == null ? Map.of() : c.entries().stream()
                    .filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG && e.value() != null)
                    .collect(Collectors.toMap(ConfigEntry::name, ConfigEntry::value));
                result.put(d.name(), new SourceTopic(d.name(), d.topicId().toString(), d.partitions().size(), explicit));
            }
            return result;
        });
    }

    @Override
    public MirrorImage mirrorImage(MirrorConfig config) {
        try {
            return MirrorImageReader.read(clientConfigs.clientProperties(config), clientConfigs.sourceResponseBound(config.name()),
                java.time.Duration.ofMillis(TIMEOUT_MS));
        } catch (org.apache.kafka.common.KafkaException e) {
            throw unreachable(config, e);
        }
    }

    private interface AdminCall<T> {
        T apply(Admin admin) throws ExecutionException, InterruptedException, TimeoutException;
    }

    private <T> T call(MirrorConfig config, AdminCall<T> call) {
        Properties props = clientConfigs.clientProperties(config);
        props.putIfAbsent(CommonClientConfigs.CLIENT_ID_CONFIG, "cluster-mirror-controller-" + config.name());
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS);
        try {
            io.clustermirror.common.ListenerProbe.check(props);
        } catch (io.clustermirror.common.ListenerProbe.TlsListenerException e) {
            throw unreachable(config, e);
        }
        try (Admin admin = BoundedClients.admin(props, clientConfigs.sourceResponseBound(config.name()))) {
            return call.apply(admin);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (cause instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
                throw new ClusterMirrorException(MirrorError.UNKNOWN_TOPIC_OR_PARTITION,
                    "a topic was deleted on the source cluster of mirror '" + config.name() + "' while starting: " + cause.getMessage());
            }
            throw unreachable(config, cause);
        } catch (TimeoutException e) {
            throw unreachable(config, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unreachable(config, e);
        } catch (org.apache.kafka.common.KafkaException e) {
            throw unreachable(config, e);
        }
    }

    private static ClusterMirrorException unreachable(MirrorConfig config, Throwable cause) {
        if (cause instanceof io.clustermirror.common.ListenerProbe.TlsListenerException) {
            return new ClusterMirrorException(MirrorError.INVALID_CONFIG, "the source cluster of mirror '" + config.name()
                + "': " + cause.getMessage(), cause);
        }
        String source = "the source cluster of mirror '" + config.name() + "' at " + config.bootstrapServers();
        String why = " (" + cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage()) + ")";
        if (cause instanceof org.apache.kafka.common.errors.AuthenticationException) {
            return new ClusterMirrorException(MirrorError.SOURCE_CLUSTER_UNREACHABLE, "authentication to " + source + " failed" + why
                + "; check the mirror's credentials (its sasl.* and ssl.* configs)", cause);
        }
        if (cause instanceof org.apache.kafka.common.errors.AuthorizationException) {
            return new ClusterMirrorException(MirrorError.SOURCE_CLUSTER_UNREACHABLE, "the mirror's principal is not authorized on "
                + source + why + "; it needs READ and DESCRIBE_CONFIGS on the mirrored topics there", cause);
        }
        return new ClusterMirrorException(MirrorError.SOURCE_CLUSTER_UNREACHABLE, "cannot reach " + source + " within "
            + TIMEOUT_MS / 1000 + " s" + why + "; check bootstrap.servers and the security configs of the mirror, and that the source is up",
            cause);
    }
}
