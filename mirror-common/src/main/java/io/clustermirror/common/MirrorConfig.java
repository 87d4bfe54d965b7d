package io.clustermirror.common;

import java.util.Map;
import java.util.Properties;

/**
 * A mirror's validated configuration: the source connection (any Kafka client config: bootstrap.servers,
 * security.protocol, ssl.*, sasl.*, ...) plus the mirror's own {@code mirror.*} settings.
 *
 * <p>Invariants: {@code bootstrap.servers} is present and non-blank; every {@code mirror.*} key is one of
 * {@link #KNOWN_MIRROR_KEYS}, with a value of the right type; every other key is a Kafka client config.
 * Values may use ConfigProvider syntax ({@code ${file:/path:key}}), resolved only when a client is built.
 */
public final class MirrorConfig {
    public static final String BOOTSTRAP_SERVERS = "bootstrap.servers";
    public static final String FETCH_MAX_BYTES = "mirror.fetch.max.bytes";
    public static final String FETCH_PARTITION_MAX_BYTES = "mirror.fetch.partition.max.bytes";
    public static final String FETCH_MIN_BYTES = "mirror.fetch.min.bytes";
    public static final String FETCH_MAX_WAIT_MS = "mirror.fetch.max.wait.ms";
    public static final String FETCH_ISOLATION_LEVEL = "mirror.fetch.isolation.level";
    public static final String FETCH_BACKOFF_MS = "mirror.fetch.backoff.ms";
    public static final String PARTITION_RETRY_BACKOFF_MS = "mirror.partition.retry.backoff.ms";
    public static final String PARTITION_RETRY_BACKOFF_MAX_MS = "mirror.partition.retry.backoff.max.ms";
    public static final String STATE_PERSIST_INTERVAL_MS = "mirror.state.persist.interval.ms";
    public static final String METADATA_REFRESH_INTERVAL_MS = "mirror.metadata.refresh.interval.ms";
    public static final String TOPICS_INCLUDE = "mirror.topics.include";
    public static final String TOPICS_EXCLUDE = "mirror.topics.exclude";
    public static final String GROUPS_INCLUDE = "mirror.groups.include";
    public static final String GROUPS_EXCLUDE = "mirror.groups.exclude";
    public static final String TOPIC_PROPERTIES_EXCLUDE = "mirror.topic.properties.exclude";
    public static final String ACL_INCLUDE = "mirror.acl.include";

    /** Every accepted {@code mirror.*} key with its default (null: no default). */
    public static final Map<String, String> KNOWN_MIRROR_KEYS = Map.ofEntries(
        Map.entry(FETCH_MAX_BYTES, String.valueOf(50 * 1024 * 1024)),
        Map.entry(FETCH_PARTITION_MAX_BYTES, String.valueOf(1024 * 1024)),
        Map.entry(FETCH_MIN_BYTES, "1"),
        Map.entry(FETCH_MAX_WAIT_MS, "500"),
        Map.entry(FETCH_ISOLATION_LEVEL, "read_committed"),
        Map.entry(FETCH_BACKOFF_MS, "100"),
        Map.entry(PARTITION_RETRY_BACKOFF_MS, "1000"),
        Map.entry(PARTITION_RETRY_BACKOFF_MAX_MS, "60000"),
        Map.entry(STATE_PERSIST_INTERVAL_MS, "5000"),
        Map.entry(METADATA_REFRESH_INTERVAL_MS, "30000"),
        Map.entry(TOPICS_INCLUDE, ""),
        Map.entry(TOPICS_EXCLUDE, "__.*"),
        Map.entry(GROUPS_INCLUDE, ""),
        Map.entry(GROUPS_EXCLUDE, ""),
        Map.entry(TOPIC_PROPERTIES_EXCLUDE, ""),
        Map.entry(ACL_INCLUDE, "")
    );

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

    /** Kafka client properties for connections to the source (every key except {@code mirror.*}). */
    public Properties sourceClientProperties() {
        Properties p = new Properties();
        configs.forEach((k, v) -> {
            if (!k.startsWith("mirror.")) {
                p.put(k, v);
            }
        });
        return p;
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

    /** True for {@code read_committed} (the default): the mirror stops at the source's last stable offset. */
    public boolean readCommitted() {
        return "read_committed".equals(getString(FETCH_ISOLATION_LEVEL));
    }
}
