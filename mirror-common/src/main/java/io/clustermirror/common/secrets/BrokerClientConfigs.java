package io.clustermirror.common.secrets;

import io.clustermirror.common.SealedForm;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.compat.ClientInternals;
import io.clustermirror.common.compat.ResponseBound;
import org.apache.kafka.common.config.ConfigTransformer;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.provider.ConfigProvider;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.stream.Collectors;

/**
 * What a destination broker allows a mirror config to use, and the one place where a mirror config becomes the
 * properties of a client of the source ({@link #clientProperties}): config providers, allowed client classes and
 * the password-encoder keys all come from the broker's own server properties, never from a mirror config.
 *
 * <ul>
 *   <li>{@value #CONFIG_PROVIDERS_CONFIG}{@code =<names>}, {@code ...<name>.class}, {@code ...<name>.param.<key>}:
 *       the config providers that {@code ${name:path:key}} references in a mirror config's password values refer to
 *       (as a Kafka Connect worker's {@code config.providers}).</li>
 *   <li>{@value #ALLOWED_CLIENT_CLASSES_CONFIG}: the classes a mirror config may name in a class-typed client config
 *       ({@link MirrorConfig#isClassTyped}); none by default.</li>
 *   <li>{@value PasswordEncoderKeys#SECRET_CONFIG} and {@value PasswordEncoderKeys#OLD_SECRET_CONFIG}: the keys
 *       that open sealed secrets ({@link PasswordEncoderKeys}).</li>
 *   <li>{@value #SOURCE_MAX_RESPONSE_BYTES_CONFIG}: the largest response a client of a source reads
 *       ({@link #sourceResponseBound}), {@value #DEFAULT_SOURCE_MAX_RESPONSE_BYTES} bytes by default.</li>
 * </ul>
 *
 * <p>Invariant: no resolved or decrypted value ever leaves {@link #clientProperties} other than in the returned
 * properties: errors name the config key and the provider, never a value, and nothing here logs a value.
 * Thread-safe once built.
 */
public final class BrokerClientConfigs implements AutoCloseable {
    public static final String CONFIG_PROVIDERS_CONFIG = "cluster.mirror.config.providers";
    public static final String ALLOWED_CLIENT_CLASSES_CONFIG = "cluster.mirror.allowed.client.classes";
    public static final String SOURCE_MAX_RESPONSE_BYTES_CONFIG = "cluster.mirror.source.max.response.bytes";
    /**
     * 100 MiB: above the largest response a Kafka source legitimately sends the admin clients and consumers (metadata of a
     * cluster with many thousand partitions, a consumer fetch of 50 MiB); the fetchers' own bound follows
     * mirror.fetch.max.bytes.
     */
    public static final int DEFAULT_SOURCE_MAX_RESPONSE_BYTES = 100 * 1024 * 1024;
    private static final int MIN_SOURCE_MAX_RESPONSE_BYTES = 1024 * 1024;
    private static final Logger log = LoggerFactory.getLogger(BrokerClientConfigs.class);

    private final Map<String, ConfigProvider> providers;
    private final ConfigTransformer transformer;
    private final Set<String> allowedClasses;
    private final Optional<PasswordEncoderKeys> keys;
    private final int sourceMaxResponseBytes;

    BrokerClientConfigs(Map<String, ConfigProvider> providers, Set<String> allowedClasses, Optional<PasswordEncoderKeys> keys,
                                int sourceMaxResponseBytes) {
        this.providers = Map.copyOf(providers);
        this.transformer = new ConfigTransformer(this.providers);
        this.allowedClasses = Set.copyOf(allowedClasses);
        this.keys = keys;
        this.sourceMaxResponseBytes = sourceMaxResponseBytes;
    }

    /**
     * Reads the settings from a broker's server properties and instantiates and configures its config providers.
     *
     * @throws IllegalArgumentException if a provider is named without a class, or its class cannot be loaded or
     *                                  configured, or {@value #SOURCE_MAX_RESPONSE_BYTES_CONFIG} is not a number of bytes
     *                                  from 1 MiB (the broker then refuses to start the extension)
     */
    public static BrokerClientConfigs fromBrokerConfigs(Map<String, ?> brokerConfigs) {
        int sourceMaxResponseBytes = sourceMaxResponseBytes(value(brokerConfigs, SOURCE_MAX_RESPONSE_BYTES_CONFIG));
        Map<String, ConfigProvider> providers = new TreeMap<>();
        try {
            for (String name : list(value(brokerConfigs, CONFIG_PROVIDERS_CONFIG))) {
                providers.put(name, provider(brokerConfigs, name));
            }
        } catch (RuntimeException e) {
            providers.values().forEach(p -> Utils.closeQuietly(p, "config provider"));
            throw e;
        }
        Optional<PasswordEncoderKeys> keys = Optional.ofNullable(value(brokerConfigs, PasswordEncoderKeys.SECRET_CONFIG))
            .filter(s -> !s.isEmpty())
            .map(secret -> PasswordEncoderKeys.derive(secret,
                Optional.ofNullable(value(brokerConfigs, PasswordEncoderKeys.OLD_SECRET_CONFIG))));
        Set<String> allowed = Set.copyOf(list(value(brokerConfigs, ALLOWED_CLIENT_CLASSES_CONFIG)));
        log.info("Mirror configs may refer to config providers {}, name client classes {}; inline secrets {}", providers.keySet(),
            allowed, keys.map(k -> "are encrypted with key " + k.sealingKey().id()).orElse("are refused (no "
                + PasswordEncoderKeys.SECRET_CONFIG + ")"));
        return new BrokerClientConfigs(providers, allowed, keys, sourceMaxResponseBytes);
    }

    private static int sourceMaxResponseBytes(String value) {
        if (value == null || value.isBlank()) {
            return DEFAULT_SOURCE_MAX_RESPONSE_BYTES;
        }
        try {
            int bytes = Integer.parseInt(value.trim());
            if (bytes >= MIN_SOURCE_MAX_RESPONSE_BYTES) {
                return bytes;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new IllegalArgumentException(SOURCE_MAX_RESPONSE_BYTES_CONFIG + "=" + value + " is not a number of bytes from "
            + MIN_SOURCE_MAX_RESPONSE_BYTES + " (1 MiB) to " + Integer.MAX_VALUE + "; remove it for the default of "
            + DEFAULT_SOURCE_MAX_RESPONSE_BYTES + " (100 MiB)");
    }

    /**
     * The largest response every admin client and consumer of the source of {@code mirror} reads; a larger one closes
     * the connection with an error that names the mirror and what to do.
     */
    public ResponseBound sourceResponseBound(String mirror) {
        return new ResponseBound(sourceMaxResponseBytes, "the source of mirror '" + mirror + "'",
            "If the source is a Kafka cluster, check that the mirror's bootstrap.servers and security.protocol name a listener"
                + " of it that speaks that protocol; if its responses are legitimately this large, raise "
                + SOURCE_MAX_RESPONSE_BYTES_CONFIG + " on every destination broker.");
    }

    /** The key clients seal inline secrets with; empty when the broker has no password-encoder secret. */
    public Optional<SealingKey> sealingKey() {
        return keys.map(PasswordEncoderKeys::sealingKey);
    }

    /**
     * The properties of a client of the mirror's source: its client configs with provider references resolved and
     * sealed secrets opened. Called whenever a client is built, and at create, to refuse a config the brokers cannot
     * use before it is stored.
     *
     * @throws ClusterMirrorException INVALID_CONFIG naming the config key (and provider) when a class is not allowed,
     *                                a reference cannot be resolved, a sealed value cannot be opened, or a secret is
     *                                inline in clear
     */
    public Properties clientProperties(MirrorConfig config) {
        Properties props = new Properties();
        // Sorted: the first error reported does not depend on map iteration order.
        new TreeMap<>(config.storedClientConfigs()).forEach((key, value) -> {
            checkClassesAllowed(key, value);
            String resolved;
            if (SealedForm.isSealed(value)) {
                resolved = keys.orElseThrow(() -> new ClusterMirrorException(MirrorError.INVALID_CONFIG, "config '" + key
                        + "' is encrypted, but the destination brokers have no " + PasswordEncoderKeys.SECRET_CONFIG
                        + " to decrypt it; set it (with the secret it was encrypted with) on every destination broker"))
                    .open(key, value, SealingKey.contextOf(value, config.name(), key, config.originals()));
            } else if (MirrorConfig.isInlineSecret(key, value)) {
                throw SealingKey.inlineSecretRefused(key);
            } else if (ConfigTransformer.DEFAULT_PATTERN.matcher(value).find()) {
                resolved = resolve(key, value);
            } else {
                resolved = value;
            }
            if (key.equals(SaslConfigs.SASL_JAAS_CONFIG)) {
                checkJaas(resolved);
            }
            props.put(key, resolved);
        });
        return props;
    }

    /**
     * The configs of a stored mirror with every value sealed for an old key, or in the previous release's form, sealed
     * again for the current key and form; the same map when none is.
     */
    public Map<String, String> resealed(String mirror, Map<String, String> configs) {
        if (keys.isEmpty() || configs.values().stream().noneMatch(keys.get()::needsResealing)) {
            return configs;
        }
        Map<String, String> resealed = new HashMap<>(configs);
        configs.forEach((key, value) -> {
            if (keys.get().needsResealing(value)) {
                resealed.put(key, keys.get().reseal(key, value, SealingKey.contextOf(value, mirror, key, configs),
                    SealingKey.context(mirror, key, configs)));
            }
        });
        return resealed;
    }

    private void checkClassesAllowed(String key, String value) {
        if (!MirrorConfig.isClassTyped(key)) {
            return;
        }
        List<String> refused = list(value).stream().filter(c -> !allowedClasses.contains(c)).toList();
        if (!refused.isEmpty()) {
            throw new ClusterMirrorException(MirrorError.INVALID_CONFIG, "config '" + key + "' names class(es) " + refused
                + " that the destination brokers do not allow: a mirror config may name only the classes listed in "
                + ALLOWED_CLIENT_CLASSES_CONFIG + " of every destination broker (now " + new TreeSet<>(allowedClasses) + ")");
        }
    }

    /** Resolves every reference in one value; errors name the key and the provider, never what it returned. */
    private String resolve(String key, String value) {
        Matcher references = ConfigTransformer.DEFAULT_PATTERN.matcher(value);
        while (references.find()) {
            String provider = references.group(1);
            if (!providers.containsKey(provider)) {
                throw new ClusterMirrorException(MirrorError.INVALID_CONFIG, "config '" + key + "' refers to config provider '"
                    + provider + "', which the destination brokers do not define; they define " + providers.keySet() + " ("
                    + CONFIG_PROVIDERS_CONFIG + " in their server properties)");
            }
        }
        String resolved;
        try {
            resolved = transformer.transform(Map.of(key, value)).data().get(key);
        } catch (RuntimeException e) {
            // The provider's message is left out: a provider may quote what it read.
            throw new ClusterMirrorException(MirrorError.INVALID_CONFIG, "config '" + key + "': its config provider failed to "
                + "resolve it (" + e.getClass().getSimpleName() + "); check the path and key it refers to exist on every "
                + "destination broker and are readable there");
        }
        references.reset();
        while (references.find()) {
            if (resolved.contains(references.group())) {
                throw new ClusterMirrorException(MirrorError.INVALID_CONFIG, "config '" + key + "': config provider '"
                    + references.group(1) + "' has no value for " + references.group() + " on this destination broker");
            }
        }
        return resolved;
    }

    /** Kafka's own JAAS parser may quote the text it failed on: the error says only that it failed. */
    private static void checkJaas(String jaas) {
        try {
            ClientInternals.checkJaasConfig(jaas);
        } catch (RuntimeException e) {
            throw new ClusterMirrorException(MirrorError.INVALID_CONFIG, "config '" + SaslConfigs.SASL_JAAS_CONFIG
                + "' is not a valid JAAS configuration (the details are not shown: they would quote the secret); expected "
                + "'<LoginModule class> required <option>=\"<value>\" ...;'");
        }
    }

    private static ConfigProvider provider(Map<String, ?> brokerConfigs, String name) {
        String prefix = CONFIG_PROVIDERS_CONFIG + "." + name + ".";
        String className = value(brokerConfigs, prefix + "class");
        if (className == null || className.isBlank()) {
            throw new IllegalArgumentException(CONFIG_PROVIDERS_CONFIG + " names provider '" + name + "', but " + prefix
                + "class is not set");
        }
        Map<String, String> params = new HashMap<>();
        brokerConfigs.keySet().stream().filter(k -> k.startsWith(prefix + "param."))
            .forEach(k -> params.put(k.substring((prefix + "param.").length()), value(brokerConfigs, k)));
        ConfigProvider provider;
        try {
            provider = Utils.newInstance(className.trim(), ConfigProvider.class);
        } catch (ClassNotFoundException | RuntimeException e) {
            throw new IllegalArgumentException("cannot create config provider '" + name + "' of class " + className.trim()
                + " (" + e.getClass().getSimpleName() + ")", e);
        }
        try {
            provider.configure(params);
        } catch (RuntimeException e) {
            Utils.closeQuietly(provider, "config provider " + name);
            // Its params may hold credentials (a vault token): the message is left out.
            throw new IllegalArgumentException("cannot configure config provider '" + name + "' (" + e.getClass().getSimpleName()
                + "); check " + prefix + "param.*");
        }
        return provider;
    }

    private static String value(Map<String, ?> configs, String key) {
        Object value = configs.get(key);
        return value instanceof Password password ? password.value() : value == null ? null : value.toString();
    }

    private static List<String> list(String value) {
        return value == null ? List.of()
            : Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toList());
    }

    @Override
    public void close() {
        providers.forEach((name, provider) -> Utils.closeQuietly(provider, "config provider " + name));
    }
}
