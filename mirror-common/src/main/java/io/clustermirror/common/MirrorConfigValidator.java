package io.clustermirror.common;

import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigTransformer;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checks mirror names and configs; see {@link MirrorConfig} for the rules.
 *
 * <p>Error messages name the offending key and what to do, and never contain the value of a sensitive
 * key (see {@link #isSensitive}).
 */
final class MirrorConfigValidator {
    static final String HIDDEN = "[hidden]";

    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9._-]{1,249}");
    private static final String MIRROR_PREFIX = "mirror.";
    private static final String CONFIG_PROVIDERS_PREFIX = "config.providers";
    /** Keys that take one of a few values, in the order the error message names them. */
    private static final Map<String, List<String>> CHOICE_KEYS = Map.of(
        MirrorConfig.FETCH_ISOLATION_LEVEL, List.of("read_committed", "read_uncommitted"),
        MirrorConfig.SOURCE_DATA_LOSS_POLICY, List.of("continue", "fail"),
        MirrorConfig.ACL_SYNC_DENY, List.of("true", "false"),
        MirrorConfig.ACL_SYNC_WILDCARD, List.of("true", "false"),
        MirrorConfig.ACL_SYNC_UNMIRRORED, List.of("true", "false"),
        MirrorConfig.SOURCE_DESTRUCTIVE_POLICY, List.of("hold", "apply"));

    /** Key fragments that mark a value as secret even when no client ConfigDef declares it a password. */
    private static final String[] SENSITIVE_FRAGMENTS = {"password", "secret", "sasl.jaas.config", "token"};

    /** Client configs of type LIST whose entries are class names (the other class-typed configs are of type CLASS). */
    static final Set<String> CLASS_LIST_CONFIGS = Set.of(
        ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG, CommonClientConfigs.METRIC_REPORTER_CLASSES_CONFIG,
        ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG);

    /** Every config the source connection may use: the union of the consumer, admin and producer ConfigDefs. */
    private static final Map<String, ConfigDef.ConfigKey> CLIENT_CONFIGS = clientConfigs();

    /** Numeric mirror keys with their inclusive bounds: zero is allowed only where it means "no wait". */
    private static final Map<String, Bounds> NUMERIC_KEYS = Map.ofEntries(
        Map.entry(MirrorConfig.FETCH_MAX_BYTES, Bounds.positiveInt()),
        Map.entry(MirrorConfig.FETCH_PARTITION_MAX_BYTES, Bounds.positiveInt()),
        Map.entry(MirrorConfig.FETCH_MIN_BYTES, Bounds.nonNegativeInt()),
        Map.entry(MirrorConfig.FETCH_MAX_WAIT_MS, Bounds.nonNegativeInt()),
        Map.entry(MirrorConfig.FETCH_BACKOFF_MS, Bounds.nonNegativeLong()),
        Map.entry(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC, Bounds.positiveLong()),
        Map.entry(MirrorConfig.PARTITION_RETRY_BACKOFF_MS, Bounds.nonNegativeLong()),
        Map.entry(MirrorConfig.PARTITION_RETRY_BACKOFF_MAX_MS, Bounds.positiveLong()),
        Map.entry(MirrorConfig.PARTITION_RETRIES, Bounds.nonNegativeInt()),
        Map.entry(MirrorConfig.STATE_PERSIST_INTERVAL_MS, Bounds.positiveLong()),
        Map.entry(MirrorConfig.METADATA_REFRESH_INTERVAL_MS, Bounds.positiveLong()),
        Map.entry(MirrorConfig.SOURCE_DESTRUCTIVE_HOLD_MS, Bounds.nonNegativeLong()),
        Map.entry(MirrorConfig.PARTITIONS_MAX_GROWTH, Bounds.positiveInt())
    );

    /** Keys whose value is a comma-separated list of Java regular expressions. */
    private static final Set<String> PATTERN_LIST_KEYS = Set.of(
        MirrorConfig.TOPICS_INCLUDE, MirrorConfig.TOPICS_EXCLUDE,
        MirrorConfig.GROUPS_INCLUDE, MirrorConfig.GROUPS_EXCLUDE,
        MirrorConfig.TOPIC_PROPERTIES_EXCLUDE, MirrorConfig.ACL_INCLUDE
    );

    private record Bounds(long min, long max) {
        static Bounds positiveInt() {
            return new Bounds(1, Integer.MAX_VALUE);
        }

        static Bounds nonNegativeInt() {
            return new Bounds(0, Integer.MAX_VALUE);
        }

        static Bounds positiveLong() {
            return new Bounds(1, Long.MAX_VALUE);
        }

        static Bounds nonNegativeLong() {
            return new Bounds(0, Long.MAX_VALUE);
        }
    }

    private MirrorConfigValidator() {
    }

    static MirrorConfig validate(String name, Map<String, String> configs) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw invalid("invalid mirror name '" + name + "': use 1 to 249 characters from [a-zA-Z0-9._-]");
        }
        if (configs == null) {
            configs = Map.of();
        }
        String bootstrap = configs.get(MirrorConfig.BOOTSTRAP_SERVERS);
        if (bootstrap == null || bootstrap.isBlank()) {
            throw invalid("missing required config '" + MirrorConfig.BOOTSTRAP_SERVERS
                + "': set it to the source cluster's brokers, e.g. host1:9092,host2:9092");
        }
        // Sorted, so that the first error reported does not depend on map iteration order.
        List<String> keys = new ArrayList<>(configs.keySet());
        keys.sort(Comparator.nullsFirst(Comparator.naturalOrder()));
        for (String key : keys) {
            String value = configs.get(key);
            if (key == null) {
                throw invalid("a config has no name: remove it");
            }
            if (value == null) {
                throw invalid("config '" + key + "' has no value: give it a value or leave it out");
            }
            if (key.startsWith(MIRROR_PREFIX)) {
                validateMirrorKey(key, value);
            } else if (key.startsWith(CONFIG_PROVIDERS_PREFIX)) {
                throw invalid("config '" + key + "' is not accepted: a mirror config cannot define config providers. The "
                    + "destination brokers define them (" + BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG + " in their server "
                    + "properties) and password configs refer to them as ${<provider>:<path>:<key>}");
            } else {
                validateClientKey(key, value);
            }
        }
        return MirrorConfig.trusted(name, configs);
    }

    static Map<String, String> redact(Map<String, String> configs) {
        Map<String, String> redacted = new TreeMap<>();
        configs.forEach((key, value) -> redacted.put(key,
            isSensitive(key) && !isProviderReference(value) ? HIDDEN : value));
        return Collections.unmodifiableMap(redacted);
    }

    /** True if the value of {@code key} is a secret: a client PASSWORD config or a key that looks like one. */
    static boolean isSensitive(String key) {
        ConfigDef.ConfigKey def = CLIENT_CONFIGS.get(key);
        if (def != null && def.type == ConfigDef.Type.PASSWORD) {
            return true;
        }
        String lower = key.toLowerCase(Locale.ROOT);
        return Stream.of(SENSITIVE_FRAGMENTS).anyMatch(lower::contains);
    }

    static boolean isPassword(String key) {
        ConfigDef.ConfigKey def = CLIENT_CONFIGS.get(key);
        return def != null && def.type == ConfigDef.Type.PASSWORD;
    }

    static boolean isClassTyped(String key) {
        ConfigDef.ConfigKey def = CLIENT_CONFIGS.get(key);
        return def != null && (def.type == ConfigDef.Type.CLASS || CLASS_LIST_CONFIGS.contains(key));
    }

    /** True if the value holds a ConfigProvider reference anywhere, as in a JAAS line's {@code password="${...}"}. */
    static boolean hasProviderReference(String value) {
        return value != null && ConfigTransformer.DEFAULT_PATTERN.matcher(value).find();
    }

    /** True if the whole value is a ConfigProvider reference such as {@code ${file:/etc/secrets:password}}. */
    static boolean isProviderReference(String value) {
        return value != null && ConfigTransformer.DEFAULT_PATTERN.matcher(value).matches();
    }

    private static void validateMirrorKey(String key, String value) {
        if (!MirrorConfig.KNOWN_MIRROR_KEYS.containsKey(key)) {
            throw invalid("unknown mirror config '" + key + "': use one of "
                + new TreeSet<>(MirrorConfig.KNOWN_MIRROR_KEYS.keySet()));
        }
        Bounds bounds = NUMERIC_KEYS.get(key);
        if (bounds != null) {
            validateNumber(key, value, bounds);
        } else if (CHOICE_KEYS.containsKey(key)) {
            if (!CHOICE_KEYS.get(key).contains(value)) {
                throw invalid("invalid value '" + value + "' for '" + key + "': use "
                    + String.join(" or ", CHOICE_KEYS.get(key)));
            }
        } else if (PATTERN_LIST_KEYS.contains(key)) {
            validatePatterns(key, value);
        } else if (key.equals(MirrorConfig.ACL_SYNC_RESOURCE_TYPES)) {
            validateResourceTypes(key, value);
        }
    }

    private static void validateResourceTypes(String key, String value) {
        for (String type : value.split(",")) {
            String name = type.trim().toUpperCase(Locale.ROOT);
            if (!name.isEmpty() && !MirrorConfig.ACL_SYNC_RESOURCE_TYPE_NAMES.contains(name)) {
                throw invalid("invalid resource type '" + type.trim() + "' in '" + key + "': use a comma-separated list of "
                    + String.join(", ", MirrorConfig.ACL_SYNC_RESOURCE_TYPE_NAMES) + " (default TOPIC,GROUP)");
            }
        }
    }

    private static void validateNumber(String key, String value, Bounds bounds) {
        long parsed;
        try {
            parsed = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw invalid("invalid value '" + value + "' for '" + key + "': expected a whole number");
        }
        if (parsed < bounds.min() || parsed > bounds.max()) {
            throw invalid("invalid value " + parsed + " for '" + key + "': use a number from "
                + bounds.min() + " to " + bounds.max()
                + (key.equals(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC) ? ", or delete the config for no limit" : ""));
        }
    }

    private static void validatePatterns(String key, String value) {
        for (String pattern : value.split(",")) {
            try {
                NamePatterns.compile(pattern.trim());
            } catch (IllegalArgumentException e) {
                throw invalid("invalid value for '" + key + "': " + e.getMessage()
                    + "; give a comma-separated list of regular expressions");
            }
        }
    }

    private static void validateClientKey(String key, String value) {
        ConfigDef.ConfigKey def = CLIENT_CONFIGS.get(key);
        if (def == null) {
            throw invalid("unknown config '" + key + "': use a Kafka client config for the source connection "
                + "(consumer, admin or producer) or one of the mirror.* configs "
                + new TreeSet<>(MirrorConfig.KNOWN_MIRROR_KEYS.keySet()));
        }
        boolean password = def.type == ConfigDef.Type.PASSWORD;
        // Kafka never prints a password's value; a resolved or decrypted value anywhere else could reach errors and logs.
        if (!password && hasProviderReference(value)) {
            throw invalid("config '" + key + "' refers to a config provider, which only password configs (such as "
                + "sasl.jaas.config or ssl.truststore.password) may do: write its value as it is");
        }
        if (!password && SealedForm.isSealed(value)) {
            throw invalid("config '" + key + "' holds an encrypted value, which only password configs may hold");
        }
        // References and sealed values are checked by the broker that resolves them; which classes a client may load
        // is the broker's decision too (BrokerClientConfigs).
        if (password || def.type == ConfigDef.Type.CLASS) {
            return;
        }
        try {
            Object parsed = ConfigDef.parseType(key, value, def.type);
            if (def.validator != null) {
                def.validator.ensureValid(key, parsed);
            }
        } catch (ConfigException e) {
            throw invalid("invalid value for '" + key + "': "
                + (isSensitive(key) ? "expected a " + def.type.name().toLowerCase(Locale.ROOT) : e.getMessage()));
        }
    }

    private static Map<String, ConfigDef.ConfigKey> clientConfigs() {
        Map<String, ConfigDef.ConfigKey> keys = new HashMap<>();
        Stream.of(ConsumerConfig.configDef(), AdminClientConfig.configDef(), ProducerConfig.configDef())
            .forEach(def -> def.configKeys().forEach(keys::putIfAbsent));
        return Map.copyOf(keys);
    }

    private static ClusterMirrorException invalid(String message) {
        return new ClusterMirrorException(MirrorError.INVALID_CONFIG, message);
    }
}
