package io.clustermirror.broker.controller;

import io.clustermirror.common.InternalTopics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * Creates missing internal topics (see {@link InternalTopics#newTopic}; concurrent creations are harmless) and checks the
 * configs of existing ones ({@link InternalTopics#misconfigurations}).
 */
final class InternalTopicsInitializer {
    private static final Logger log = LoggerFactory.getLogger(InternalTopicsInitializer.class);

    private InternalTopicsInitializer() {
    }

    /**
     * Creates the missing topics and fails if an existing one has a config that can lose the mirror state, after logging
     * each such config at ERROR with its fix: whoever calls this must not act on state that may be incomplete.
     *
     * @throws IllegalStateException naming the topics and configs to fix
     */
    static void ensureExistWithSafeConfigs(Admin admin, Collection<String> topics)
            throws ExecutionException, InterruptedException, TimeoutException {
        Set<String> existing = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(30, TimeUnit.SECONDS);
        List<String> found = topics.stream().filter(existing::contains).toList();
        create(admin, topics.stream().filter(t -> !existing.contains(t)).toList());
        if (found.contains(InternalTopics.STATE)) {
            alignStateSegmentSize(admin);
        }
        List<InternalTopics.Misconfiguration> problems = found.isEmpty() ? List.of() : misconfigurations(admin, found);
        problems.forEach(InternalTopicsInitializer::logMisconfiguration);
        if (!problems.isEmpty()) {
            throw new IllegalStateException("the configs of the mirror's internal topics can lose mirror state: " + problems.stream()
                .map(p -> p.topic() + " " + p.config() + "=" + p.actual() + " (needs " + p.expected() + ")").collect(Collectors.joining(", ")));
        }
    }

    /** Creates the topics as {@link InternalTopics#newTopic} says; one created concurrently by another node is fine. */
    private static void create(Admin admin, Collection<String> topics) throws ExecutionException, InterruptedException, TimeoutException {
        if (topics.isEmpty()) {
            return;
        }
        int brokers = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size();
        for (String topic : topics) {
            try {
                admin.createTopics(List.of(InternalTopics.newTopic(topic, brokers))).all().get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
        }
    }

    /**
     * Gives a {@link InternalTopics#STATE} that an earlier version created, at the broker's {@code segment.bytes}, the
     * segment size of a new one ({@link InternalTopics#STATE_SEGMENT_BYTES}, why there). A size set on the topic itself is
     * the operator's and stays. Best effort: the size only bounds how much a replay of the topic reads.
     */
    private static void alignStateSegmentSize(Admin admin) throws InterruptedException {
        ConfigResource state = new ConfigResource(ConfigResource.Type.TOPIC, InternalTopics.STATE);
        String segmentBytes = String.valueOf(InternalTopics.STATE_SEGMENT_BYTES);
        try {
            ConfigEntry entry = admin.describeConfigs(List.of(state)).all().get(30, TimeUnit.SECONDS).get(state)
                .get(TopicConfig.SEGMENT_BYTES_CONFIG);
            if (entry != null && entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
                return;
            }
            admin.incrementalAlterConfigs(Map.of(state, List.of(new AlterConfigOp(
                new ConfigEntry(TopicConfig.SEGMENT_BYTES_CONFIG, segmentBytes), AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
            log.info("Set {}={} on {} (it had {} from the broker's defaults), so that the log cleaner keeps it near its live "
                + "records and a describe reads little more than those", TopicConfig.SEGMENT_BYTES_CONFIG, segmentBytes,
                InternalTopics.STATE, entry == null ? "no value" : entry.value());
        } catch (ExecutionException | TimeoutException e) {
            log.warn("Could not set {}={} on {} ({}): until it is set, every describe reads up to a whole segment of superseded "
                + "state records per partition; set it with: kafka-configs.sh --bootstrap-server <broker> --alter --entity-type "
                + "topics --entity-name {} --add-config {}={}", TopicConfig.SEGMENT_BYTES_CONFIG, segmentBytes, InternalTopics.STATE,
                e.getCause() != null ? e.getCause() : e, InternalTopics.STATE, TopicConfig.SEGMENT_BYTES_CONFIG, segmentBytes);
        }
    }

    /** The configs of the given (existing) internal topics that can lose mirror state. */
    static List<InternalTopics.Misconfiguration> misconfigurations(Admin admin, Collection<String> topics)
            throws ExecutionException, InterruptedException, TimeoutException {
        List<ConfigResource> resources = topics.stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
        Map<ConfigResource, Config> configs = admin.describeConfigs(resources).all().get(30, TimeUnit.SECONDS);
        List<InternalTopics.Misconfiguration> problems = new ArrayList<>();
        configs.forEach((resource, config) -> problems.addAll(InternalTopics.misconfigurations(resource.name(),
            config.entries().stream().filter(e -> e.value() != null).collect(Collectors.toMap(ConfigEntry::name, ConfigEntry::value)))));
        return problems;
    }

    static void logMisconfiguration(InternalTopics.Misconfiguration problem) {
        log.error("Cluster Mirror cannot trust its state: {}. Until then the mirror controller does not run (no command is "
            + "processed) and mirror topics stay read-only", problem.message());
    }
}
