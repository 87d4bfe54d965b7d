package io.clustermirror.broker.auth;

import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.SyncedTopicConfigsRecord;
import org.apache.kafka.common.config.ConfigResource;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Which config changes a node that applies them (the active KRaft controller) refuses, so that no config change destroys
 * a read-only mirror topic's data, whoever asks (pure; {@link MirrorConfigPolicy} applies it).
 *
 * <p>The authorizer sees who asks but not the values; this rule sees the values, after the authorizer let the request
 * through. Rules, on the node's loaded mirror image:
 * <ul>
 *   <li>A read-only mirror topic ({@link MirrorAwareAuthorizer#readOnlyMirrorOf}) takes only what its mirror's metadata
 *       sync sets: each config set to exactly the source's value the sync declared ({@link SyncedTopicConfigsRecord}),
 *       and a config removed only if the mirror copies it and the source does not set it. A config the mirror never copies
 *       (such as {@code min.insync.replicas}, {@code unclean.leader.election.enable}, or one of
 *       {@code mirror.topic.properties.exclude}) is not changed at all while the topic is read-only. So a request that only
 *       looks like the sync's (its client id copied) can at most apply the values the sync applies anyway.</li>
 *   <li>A broker-level default that reaches topics without an override ({@link #TOPIC_CONFIG_OF_BROKER_DEFAULT}, at the
 *       cluster level or for one broker) is not changed while a read-only mirror topic lacks a topic-level value of it from
 *       the sync: that change would reach the mirror topic's data although the source never asked for it.
 *       {@code unclean.leader.election.enable=false} is always allowed: it loses nothing.</li>
 *   <li>Before the node has loaded the mirror state it cannot tell mirror topics from others: it refuses those changes
 *       on every topic but internal ones ({@code __}), and every change of such a broker-level default (fail closed).</li>
 * </ul>
 * Every other change is allowed.
 */
final class MirrorConfigRule {
    /** Broker-level defaults (dynamic broker configs) and the topic config each stands for where a topic sets none. */
    static final Map<String, String> TOPIC_CONFIG_OF_BROKER_DEFAULT = Map.of(
        "log.retention.ms", "retention.ms",
        "log.retention.minutes", "retention.ms",
        "log.retention.hours", "retention.ms",
        "log.retention.bytes", "retention.bytes",
        "log.cleanup.policy", "cleanup.policy",
        "log.local.retention.ms", "local.retention.ms",
        "log.local.retention.bytes", "local.retention.bytes",
        "unclean.leader.election.enable", "unclean.leader.election.enable",
        "min.insync.replicas", "min.insync.replicas");
    /** How many topics a refusal names. */
    private static final int TOPICS_NAMED = 5;

    private MirrorConfigRule() {
    }

    /**
     * Why the change must be refused; empty if it may be applied.
     *
     * @param loaded  the node's mirror image once loaded; empty before
     * @param altered the configs the change sets, by name (null: the config is removed), as Kafka's policy receives them
     */
    static Optional<String> refusal(Optional<MirrorImage> loaded, ConfigResource resource, Map<String, String> altered) {
        return switch (resource.type()) {
            case TOPIC -> topicRefusal(loaded, resource.name(), altered);
            case BROKER -> brokerDefaultRefusal(loaded, resource, altered);
            default -> Optional.empty();
        };
    }

    private static Optional<String> topicRefusal(Optional<MirrorImage> loaded, String topic, Map<String, String> altered) {
        if (altered.isEmpty()) {
            return Optional.empty();
        }
        if (loaded.isEmpty()) {
            return topic.startsWith("__") ? Optional.empty() : Optional.of("this controller has not loaded the Cluster Mirror state "
                + "yet, so it cannot tell whether topic '" + topic + "' is a mirror topic; retry in a few seconds");
        }
        MirrorImage image = loaded.get();
        Optional<String> readOnlyMirror = MirrorAwareAuthorizer.readOnlyMirrorOf(image, topic);
        if (readOnlyMirror.isEmpty()) {
            return Optional.empty();
        }
        String mirror = readOnlyMirror.get();
        String readOnly = "topic '" + topic + "' is a read-only mirror topic of cluster mirror '" + mirror + "': ";
        String wayOut = " To change it, change it on the source topic (the metadata sync copies it), or stop the topic first "
            + "(kafka-cluster-mirrors.sh --stop --mirror " + mirror + " --topics " + topic + ")";
        Optional<MirrorRecord> record = image.mirror(mirror);
        if (record.isEmpty()) {
            return Optional.of(readOnly + "this controller does not know the mirror's settings yet; retry in a few seconds");
        }
        MirrorConfig config = MirrorConfig.validate(mirror, record.get().configs());
        Optional<SyncedTopicConfigsRecord> synced = syncedBy(image, topic, mirror);
        for (Map.Entry<String, String> change : new TreeMap<>(altered).entrySet()) {
            String name = change.getKey();
            if (config.isTopicConfigExcluded(name)) {
                return Optional.of(readOnly + "the mirror never copies '" + name + "' from the source, so nobody may change it "
                    + "while the topic is read-only." + wayOut);
            }
            if (synced.isEmpty()) {
                return Optional.of(readOnly + "only its metadata sync changes its configs, to the source's values, and it has not "
                    + "declared them yet; retry in a few seconds." + wayOut);
            }
            if (!Objects.equals(synced.get().configs().get(name), change.getValue())) {
                return Optional.of(readOnly + "only its metadata sync changes its configs, and '" + name + "' would then not be "
                    + (change.getValue() == null ? "the source's value (the source sets it)" : "the source's value") + "."
                    + wayOut);
            }
        }
        return Optional.empty();
    }

    private static Optional<String> brokerDefaultRefusal(Optional<MirrorImage> loaded, ConfigResource resource,
                                                         Map<String, String> altered) {
        String where = resource.name().isEmpty() ? "the cluster-wide default" : "the default of broker " + resource.name();
        for (Map.Entry<String, String> change : new TreeMap<>(altered).entrySet()) {
            String topicConfig = TOPIC_CONFIG_OF_BROKER_DEFAULT.get(change.getKey());
            if (topicConfig == null || (topicConfig.equals("unclean.leader.election.enable") && "false".equals(change.getValue()))) {
                continue;
            }
            if (loaded.isEmpty()) {
                return Optional.of("changing " + where + " '" + change.getKey() + "' could reach the data of read-only mirror "
                    + "topics, and this controller has not loaded the Cluster Mirror state yet to tell; retry in a few seconds");
            }
            List<String> exposed = exposedMirrorTopics(loaded.get(), topicConfig);
            if (!exposed.isEmpty()) {
                return Optional.of("changing " + where + " '" + change.getKey() + "' would change '" + topicConfig + "' of "
                    + exposed.size() + " read-only mirror topic(s) that take it from the broker default ("
                    + String.join(", ", exposed.subList(0, Math.min(TOPICS_NAMED, exposed.size())))
                    + (exposed.size() > TOPICS_NAMED ? ", ..." : "") + "), deleting or risking data the source still has. Set '"
                    + topicConfig + "' on those source topics (the metadata sync copies it), or stop mirroring them, then retry");
            }
        }
        return Optional.empty();
    }

    /** The read-only mirror topics, by name, that get {@code topicConfig} from the broker default: the sync sets none. */
    private static List<String> exposedMirrorTopics(MirrorImage image, String topicConfig) {
        return image.topics().keySet().stream().sorted()
            .filter(topic -> MirrorAwareAuthorizer.readOnlyMirrorOf(image, topic)
                .map(mirror -> syncedBy(image, topic, mirror).map(s -> s.configs().get(topicConfig)).isEmpty())
                .orElse(false))
            .toList();
    }

    /** What the topic's mirror declared it sets (a declaration of another mirror, left from before, does not count). */
    private static Optional<SyncedTopicConfigsRecord> syncedBy(MirrorImage image, String topic, String mirror) {
        return image.syncedTopicConfigs(topic).filter(s -> s.mirror().equals(mirror));
    }
}
