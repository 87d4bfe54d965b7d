package io.clustermirror.common;

import com.google.re2j.Pattern;
import org.apache.kafka.common.resource.ResourceType;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A mirror's validated configuration: the source connection (any Kafka client config: bootstrap.servers,
 * security.protocol, ssl.*, sasl.*, ...) plus the mirror's own {@code mirror.*} settings.
 *
 * <p>Invariants: {@code bootstrap.servers} is present and non-blank; every {@code mirror.*} key is one of
 * {@link #KNOWN_MIRROR_KEYS}, with a value of the right type; every other key is a Kafka client config, and never
 * {@code config.providers*}. Only password configs ({@link #isPassword}) may hold secrets: as references to a
 * config provider of the destination brokers ({@code ${file:/path:key}}), sealed for the brokers
 * ({@link io.clustermirror.common.secrets.SealingKey}), or inline in clear, which only a client that is about to
 * seal them accepts ({@link #isInlineSecret}). References and sealed values are resolved only when a broker builds a
 * client ({@link io.clustermirror.common.secrets.BrokerClientConfigs#clientProperties}): every other value is used
 * as written.
 */
public final class MirrorConfig {
    public static final String BOOTSTRAP_SERVERS = "bootstrap.servers";
    public static final String FETCH_MAX_BYTES = "mirror.fetch.max.bytes";
    public static final String FETCH_PARTITION_MAX_BYTES = "mirror.fetch.partition.max.bytes";
    public static final String FETCH_MIN_BYTES = "mirror.fetch.min.bytes";
    public static final String FETCH_MAX_WAIT_MS = "mirror.fetch.max.wait.ms";
    public static final String FETCH_ISOLATION_LEVEL = "mirror.fetch.isolation.level";
    public static final String FETCH_BACKOFF_MS = "mirror.fetch.backoff.ms";
    /**
     * The link throttle: bytes per second that each destination broker's fetchers of the mirror receive from the source
     * at most (per broker and mirror). Unlimited by default ({@link Long#MAX_VALUE}).
     */
    public static final String FETCH_RATE_LIMIT_BYTES_PER_SEC = "mirror.fetch.rate.limit.bytes.per.sec";
    /** Delay before the first automatic retry of a FAILED partition; later retries double it, with jitter. */
    public static final String PARTITION_RETRY_BACKOFF_MS = "mirror.partition.retry.backoff.ms";
    /** Upper bound of the delay between automatic retries of a FAILED partition (and of a fetcher's backoff, at most 30 s). */
    public static final String PARTITION_RETRY_BACKOFF_MAX_MS = "mirror.partition.retry.backoff.max.ms";
    /**
     * Automatic retries of a FAILED partition in a row; after the last one fails it stays FAILED until {@code --recover}
     * (or a pause and resume, or a new leader). A failed stop is always retried: a stop must complete.
     */
    public static final String PARTITION_RETRIES = "mirror.partition.retries";
    public static final String STATE_PERSIST_INTERVAL_MS = "mirror.state.persist.interval.ms";
    public static final String METADATA_REFRESH_INTERVAL_MS = "mirror.metadata.refresh.interval.ms";
    /**
     * What a partition does when the source deleted records it had not mirrored yet (retention or deleteRecords moved
     * the source's log start past the mirror's position): {@code continue} (the default: the range is reported and
     * skipped) or {@code fail} (the partition stops in FAILED, naming the range).
     */
    public static final String SOURCE_DATA_LOSS_POLICY = "mirror.source.data.loss.policy";
    /**
     * What the destination does with a change on the source that would delete mirrored data on the destination: a move
     * of the source's log start (DeleteRecords, retention), a topic config that deletes sooner (shorter retention or
     * compaction lag, a cleanup policy that adds compaction or deletion), a partition growth beyond
     * {@link #PARTITIONS_MAX_GROWTH}. {@code hold} (the default): apply it only after {@link #SOURCE_DESTRUCTIVE_HOLD_MS}
     * or when an operator applies it ({@code --apply-held}), keeping the data readable meanwhile, so that a compromised or
     * mis-operated source cannot destroy its disaster-recovery copy at once; {@code apply}: follow the source at once.
     */
    public static final String SOURCE_DESTRUCTIVE_POLICY = "mirror.source.destructive.policy";
    /** How long a held destructive change of the source waits before the destination applies it (default 24 hours). */
    public static final String SOURCE_DESTRUCTIVE_HOLD_MS = "mirror.source.destructive.hold.ms";
    /**
     * Under {@link #SOURCE_DESTRUCTIVE_POLICY} {@code hold}: the most partitions the sync adds to a mirror topic at once
     * (default 100); a larger growth of the source topic is held like a destructive change.
     */
    public static final String PARTITIONS_MAX_GROWTH = "mirror.partitions.max.growth";
    /** Auto-discovery: comma-separated regexes of source topic names that start mirroring without a command. */
    public static final String TOPICS_INCLUDE = "mirror.topics.include";
    public static final String TOPICS_EXCLUDE = "mirror.topics.exclude";
    /**
     * Comma-separated regexes of consumer group ids whose committed offsets the metadata sync copies: every group
     * by default ({@code .*}), less those matching {@link #GROUPS_EXCLUDE}; an empty value turns group sync off.
     */
    public static final String GROUPS_INCLUDE = "mirror.groups.include";
    public static final String GROUPS_EXCLUDE = "mirror.groups.exclude";
    /** Comma-separated regexes of topic config names never copied, on top of {@link #NEVER_COPIED_TOPIC_CONFIGS}. */
    public static final String TOPIC_PROPERTIES_EXCLUDE = "mirror.topic.properties.exclude";
    /**
     * Comma-separated regexes over ACL resource names (a topic, group, transactional id, ... name; the prefix of a
     * PREFIXED pattern; {@code *} for the wildcard): of the source ACLs the {@code mirror.acl.sync.*} settings
     * select, those whose resource name fully matches one are created on the destination. {@code .*} by default; an
     * empty value turns ACL sync off. An entry that is exactly {@value #CLUSTER_RESOURCE_NAME} also selects the CLUSTER
     * resource type, as before {@link #ACL_SYNC_RESOURCE_TYPES} existed.
     */
    public static final String ACL_INCLUDE = "mirror.acl.include";
    /** The name of the CLUSTER resource in ACLs, the entry of {@link #ACL_INCLUDE} that selects cluster ACLs. */
    public static final String CLUSTER_RESOURCE_NAME = "kafka-cluster";
    /** {@code true}: the ACL sync copies DENY entries too (default {@code false}: a source DENY could lock clients out). */
    public static final String ACL_SYNC_DENY = "mirror.acl.sync.deny";
    /**
     * {@code true}: the ACL sync copies ACLs on the {@code *} resource and ACLs of wildcard principals ({@code User:*})
     * too (default {@code false}: they reach every resource or every client of the destination).
     */
    public static final String ACL_SYNC_WILDCARD = "mirror.acl.sync.wildcard";
    /**
     * {@code true}: the ACL sync copies topic and group ACLs whose resource the mirror does not mirror or sync too
     * (default {@code false}: only mirrored topics, synced groups and prefixes inside them).
     */
    public static final String ACL_SYNC_UNMIRRORED = "mirror.acl.sync.unmirrored";
    /** The resource types whose ACLs the sync copies (comma-separated, default {@code TOPIC,GROUP}). */
    public static final String ACL_SYNC_RESOURCE_TYPES = "mirror.acl.sync.resource.types";
    /** The values {@link #ACL_SYNC_RESOURCE_TYPES} accepts. */
    public static final List<String> ACL_SYNC_RESOURCE_TYPE_NAMES =
        List.of("TOPIC", "GROUP", "TRANSACTIONAL_ID", "USER", "DELEGATION_TOKEN", "CLUSTER");

    /** Every accepted {@code mirror.*} key with its default (null: no default). */
    public static final Map<String, String> KNOWN_MIRROR_KEYS = Map.ofEntries(
        Map.entry(FETCH_MAX_BYTES, String.valueOf(50 * 1024 * 1024)),
        Map.entry(FETCH_PARTITION_MAX_BYTES, String.valueOf(1024 * 1024)),
        Map.entry(FETCH_MIN_BYTES, "1"),
        Map.entry(FETCH_MAX_WAIT_MS, "500"),
        Map.entry(FETCH_ISOLATION_LEVEL, "read_committed"),
        Map.entry(FETCH_BACKOFF_MS, "100"),
        Map.entry(FETCH_RATE_LIMIT_BYTES_PER_SEC, String.valueOf(Long.MAX_VALUE)),
        Map.entry(PARTITION_RETRY_BACKOFF_MS, "1000"),
        Map.entry(PARTITION_RETRY_BACKOFF_MAX_MS, "300000"),
        Map.entry(PARTITION_RETRIES, "10"),
        Map.entry(STATE_PERSIST_INTERVAL_MS, "5000"),
        Map.entry(METADATA_REFRESH_INTERVAL_MS, "30000"),
        Map.entry(SOURCE_DATA_LOSS_POLICY, "continue"),
        Map.entry(SOURCE_DESTRUCTIVE_POLICY, "hold"),
        Map.entry(SOURCE_DESTRUCTIVE_HOLD_MS, String.valueOf(24 * 60 * 60 * 1000L)),
        Map.entry(PARTITIONS_MAX_GROWTH, "100"),
        Map.entry(TOPICS_INCLUDE, ""),
        Map.entry(TOPICS_EXCLUDE, "__.*"),
        Map.entry(GROUPS_INCLUDE, ".*"),
        Map.entry(GROUPS_EXCLUDE, ""),
        Map.entry(TOPIC_PROPERTIES_EXCLUDE, ""),
        Map.entry(ACL_INCLUDE, ".*"),
        Map.entry(ACL_SYNC_DENY, "false"),
        Map.entry(ACL_SYNC_WILDCARD, "false"),
        Map.entry(ACL_SYNC_UNMIRRORED, "false"),
        Map.entry(ACL_SYNC_RESOURCE_TYPES, "TOPIC,GROUP")
    );

    /**
     * Source topic configs never copied to the destination, whatever {@link #TOPIC_PROPERTIES_EXCLUDE} says:
     * they describe the source's brokers, replicas and append policy, not the data (replication throttle lists,
     * {@code min.insync.replicas}, {@code unclean.leader.election.enable}, the {@code message.timestamp.*}
     * type and limits), or they were removed in Kafka 4.0 and a destination refuses them
     * ({@code message.format.version}, set on topics of older sources). Used both when a topic starts mirroring
     * and by the periodic metadata sync.
     */
    public static final Set<String> NEVER_COPIED_TOPIC_CONFIGS = Set.of(
        "leader.replication.throttled.replicas", "follower.replication.throttled.replicas",
        "min.insync.replicas", "unclean.leader.election.enable",
        "message.timestamp.type", "message.timestamp.difference.max.ms",
        "message.timestamp.before.max.ms", "message.timestamp.after.max.ms",
        "message.format.version");

    private final String name;
    private final Map<String, String> configs;

    private MirrorConfig(String name, Map<String, String> configs) {
        this.name = name;
        this.configs = Map.copyOf(configs);
    }

    /**
     * Validates a mirror name and its configs.
     *
     * @throws ClusterMirrorException with {@link MirrorError#INVALID_CONFIG} naming the bad key and what to do
     */
    public static MirrorConfig validate(String name, Map<String, String> configs) {
        return MirrorConfigValidator.validate(name, configs);
    }

    /** For the validator only: the configs are already checked. */
    static MirrorConfig trusted(String name, Map<String, String> configs) {
        return new MirrorConfig(name, configs);
    }

    public String name() {
        return name;
    }

    /** The configs as given (secrets included: never log or print these; see {@link #redacted()}). */
    public Map<String, String> originals() {
        return configs;
    }

    /** The configs with sensitive values replaced by {@code [hidden]}, safe to print and log. */
    public Map<String, String> redacted() {
        return MirrorConfigValidator.redact(configs);
    }

    public String bootstrapServers() {
        return configs.get(BOOTSTRAP_SERVERS);
    }

    /**
     * The Kafka client configs for connections to the source (every key except {@code mirror.*}) as stored:
     * provider references unresolved and secrets sealed. Clients are built from
     * {@link io.clustermirror.common.secrets.BrokerClientConfigs#clientProperties} instead; a value of a config that
     * is not a password ({@link #isPassword}) is the same in both.
     */
    public Map<String, String> storedClientConfigs() {
        Map<String, String> client = new HashMap<>();
        configs.forEach((k, v) -> {
            if (!k.startsWith("mirror.")) {
                client.put(k, v);
            }
        });
        return client;
    }

    /** True if {@code key} is a client config of type PASSWORD ({@code sasl.jaas.config}, {@code ssl.*.password}, ...). */
    public static boolean isPassword(String key) {
        return MirrorConfigValidator.isPassword(key);
    }

    /**
     * True if {@code value} of {@code key} is a secret in clear: the value of a password config that is neither sealed
     * nor refers to a config provider. Clients seal these before sending a config; brokers refuse them.
     */
    public static boolean isInlineSecret(String key, String value) {
        return isPassword(key) && !SealedForm.isSealed(value) && !MirrorConfigValidator.hasProviderReference(value);
    }

    /**
     * True if {@code key} names classes that a client loads: a client config of type CLASS, or a list of classes
     * ({@code interceptor.classes}, {@code metric.reporters}, {@code partition.assignment.strategy}).
     */
    public static boolean isClassTyped(String key) {
        return MirrorConfigValidator.isClassTyped(key);
    }

    public String getString(String mirrorKey) {
        String v = configs.get(mirrorKey);
        return v != null ? v : KNOWN_MIRROR_KEYS.get(mirrorKey);
    }

    public int getInt(String mirrorKey) {
        return Integer.parseInt(getString(mirrorKey).trim());
    }

    public long getLong(String mirrorKey) {
        return Long.parseLong(getString(mirrorKey).trim());
    }

    /**
     * The comma-separated regular expressions of a pattern-list key ({@link #TOPICS_INCLUDE},
     * {@link #GROUPS_EXCLUDE}, {@link #ACL_INCLUDE}, ...), blanks dropped; empty when unset. Each pattern must
     * match a whole name (a plain name matches itself); matching takes linear time ({@link NamePatterns}).
     */
    public List<Pattern> patterns(String mirrorKey) {
        String value = getString(mirrorKey);
        return value == null || value.isBlank() ? List.of()
            : Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).map(NamePatterns::compile).toList();
    }

    /** True if {@code name} fully matches one of the patterns of {@code mirrorKey}. */
    public boolean matchesAny(String mirrorKey, String name) {
        return patterns(mirrorKey).stream().anyMatch(p -> p.matcher(name).matches());
    }

    /**
     * True if one entry of the pattern list {@code mirrorKey}, as written (blanks around it dropped), is exactly
     * {@code name}: the name is listed on purpose, not merely matched by a wider pattern.
     */
    public boolean listsExactly(String mirrorKey, String name) {
        return patterns(mirrorKey).stream().anyMatch(p -> p.pattern().equals(name));
    }

    /**
     * True if a source topic config is never copied to the destination: one of
     * {@link #NEVER_COPIED_TOPIC_CONFIGS}, or a match of {@link #TOPIC_PROPERTIES_EXCLUDE}.
     */
    public boolean isTopicConfigExcluded(String configName) {
        return NEVER_COPIED_TOPIC_CONFIGS.contains(configName) || matchesAny(TOPIC_PROPERTIES_EXCLUDE, configName);
    }

    /** True if a boolean mirror key ({@link #ACL_SYNC_DENY}, ...) is {@code true}. */
    public boolean isTrue(String mirrorKey) {
        return "true".equals(getString(mirrorKey).trim());
    }

    /** The resource types of {@link #ACL_SYNC_RESOURCE_TYPES}, upper-cased (the validator accepts any case). */
    public Set<ResourceType> aclSyncResourceTypes() {
        return Arrays.stream(getString(ACL_SYNC_RESOURCE_TYPES).split(",")).map(String::trim).filter(s -> !s.isEmpty())
            .map(s -> ResourceType.valueOf(s.toUpperCase(Locale.ROOT))).collect(Collectors.toUnmodifiableSet());
    }

    /** True for {@code fail} of {@link #SOURCE_DATA_LOSS_POLICY}: a partition stops when the source deleted unmirrored records. */
    public boolean failOnSourceDataLoss() {
        return "fail".equals(getString(SOURCE_DATA_LOSS_POLICY));
    }

    /**
     * How long a destructive change of the source waits before the destination applies it: 0 under the policy
     * {@code apply}, {@link #SOURCE_DESTRUCTIVE_HOLD_MS} under {@code hold}.
     */
    public long destructiveHoldMs() {
        return holdsDestructiveChanges() ? getLong(SOURCE_DESTRUCTIVE_HOLD_MS) : 0;
    }

    /** True under {@link #SOURCE_DESTRUCTIVE_POLICY} {@code hold}. */
    public boolean holdsDestructiveChanges() {
        return !"apply".equals(getString(SOURCE_DESTRUCTIVE_POLICY));
    }

    /** True for {@code read_committed} (the default): the mirror stops at the source's last stable offset. */
    public boolean readCommitted() {
        return "read_committed".equals(getString(FETCH_ISOLATION_LEVEL));
    }
}
