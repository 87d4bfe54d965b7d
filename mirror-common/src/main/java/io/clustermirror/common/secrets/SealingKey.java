package io.clustermirror.common.secrets;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.SealedForm;
import io.clustermirror.common.MirrorError;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The public key of a destination cluster's password encoder: clients seal the inline secrets of a mirror config
 * with it before the config leaves them, so that a secret is never in clear in {@code __mirror_commands} or
 * {@code __mirror_metadata}. Only brokers that hold {@code cluster.mirror.password.encoder.secret} (or the old
 * secret it replaced) can open them ({@link PasswordEncoderKeys}). The active mirror controller publishes the key in
 * {@code __mirror_metadata}, which only the extension writes.
 *
 * <p>A sealed value reads {@value SealedForm#CURRENT_PREFIX}{@code <key id>:<base64url payload>}; it is bound to the mirror,
 * the config key and how the source is reached ({@link #BOUND_CONFIGS}: its {@code bootstrap.servers}, security
 * protocol, SASL mechanism, token endpoint, truststore and hostname verification; {@link #context}), so it cannot be
 * replayed into another mirror, nor into a config that would send it over another protocol or to a server that another
 * truststore vouches for. A value of the previous release ({@value SealedForm#PREVIOUS_PREFIX}) is bound to the mirror, the config key
 * and {@code bootstrap.servers} only: it still opens, and the mirror controller seals it again in the current form
 * ({@link PasswordEncoderKeys#needsResealing}).
 */
public final class SealingKey {
    /**
     * The configs a sealed value is bound to. {@code ssl.truststore.certificates} is a password config, sealed itself:
     * its own sealed form changes at every sealing, so it is not bound here; a change of it, as of these, must give
     * every sealed value again ({@link #connectionBindingChanged}).
     */
    public static final List<String> BOUND_CONFIGS = List.of(MirrorConfig.BOOTSTRAP_SERVERS, "security.protocol", "sasl.mechanism",
        "sasl.oauthbearer.token.endpoint.url", "ssl.truststore.location", "ssl.truststore.type", "ssl.endpoint.identification.algorithm");
    private static final String TRUSTSTORE_CERTIFICATES = "ssl.truststore.certificates";

    private final byte[] publicKey;
    private final String id;

    SealingKey(byte[] publicKey) {
        this.publicKey = publicKey.clone();
        this.id = X25519Sealing.keyId(publicKey);
    }

    /** @throws IllegalArgumentException if {@code encoded} is not the {@link #encoded()} form of a key */
    public static SealingKey decode(String encoded) {
        byte[] bytes = Base64.getUrlDecoder().decode(encoded);
        if (bytes.length != X25519Sealing.KEY_BYTES) {
            throw new IllegalArgumentException("a sealing key has " + X25519Sealing.KEY_BYTES + " bytes, not " + bytes.length);
        }
        return new SealingKey(bytes);
    }

    /** The key, base64url: what the controller publishes. */
    public String encoded() {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(publicKey);
    }

    /** A short fingerprint of the key; sealed values name it, so that a broker knows which of its secrets opens them. */
    public String id() {
        return id;
    }

    byte[] publicKey() {
        return publicKey.clone();
    }

    /** True if {@code value} was sealed by the previous release, bound to less ({@value SealedForm#PREVIOUS_PREFIX}). */
    static boolean isPreviousForm(String value) {
        return value != null && value.startsWith(SealedForm.PREVIOUS_PREFIX);
    }

    /** The key id a sealed value names, if it is sealed at all. */
    static Optional<String> keyIdOf(String value) {
        if (!SealedForm.isSealed(value)) {
            return Optional.empty();
        }
        int end = value.indexOf(':', SealedForm.CURRENT_PREFIX.length());
        return end < 0 ? Optional.empty() : Optional.of(value.substring(SealedForm.CURRENT_PREFIX.length(), end));
    }

    /**
     * What a sealed value of {@code configKey} in mirror {@code mirror} with configs {@code configs} (after the command
     * that sets it) is bound to: each field length-prefixed, so that no two configs give the same bytes.
     */
    public static byte[] context(String mirror, String configKey, Map<String, String> configs) {
        StringBuilder context = new StringBuilder();
        append(context, SealedForm.CURRENT_PREFIX);
        append(context, mirror);
        append(context, configKey);
        for (String bound : BOUND_CONFIGS) {
            append(context, configs.containsKey(bound) ? "=" + configs.get(bound) : "unset");
        }
        return context.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void append(StringBuilder context, String field) {
        context.append(field.length()).append(':').append(field);
    }

    /** What a value sealed by the previous release ({@value SealedForm#PREVIOUS_PREFIX}) is bound to. */
    static byte[] previousContext(String mirror, String configKey, String bootstrapServers) {
        return (mirror + '\n' + configKey + '\n' + bootstrapServers).getBytes(StandardCharsets.UTF_8);
    }

    /** The context {@code sealed}, a value of {@code configKey} in mirror {@code mirror} with configs {@code configs}, opens with. */
    static byte[] contextOf(String sealed, String mirror, String configKey, Map<String, String> configs) {
        return isPreviousForm(sealed) ? previousContext(mirror, configKey, configs.get(MirrorConfig.BOOTSTRAP_SERVERS))
            : context(mirror, configKey, configs);
    }

    /**
     * The configs that a sealed value is bound to, or whose change lets it reach another server, that differ between
     * {@code before} and {@code after}; sorted.
     */
    public static List<String> connectionBindingChanged(Map<String, String> before, Map<String, String> after) {
        List<String> changed = new ArrayList<>();
        for (String key : BOUND_CONFIGS) {
            if (!Objects.equals(before.get(key), after.get(key))) {
                changed.add(key);
            }
        }
        if (!Objects.equals(before.get(TRUSTSTORE_CERTIFICATES), after.get(TRUSTSTORE_CERTIFICATES))) {
            changed.add(TRUSTSTORE_CERTIFICATES);
        }
        Collections.sort(changed);
        return changed;
    }

    /** Seals {@code plaintext} for the brokers holding this key's secret; only they can read it. */
    public String seal(String plaintext, byte[] context) {
        byte[] payload = X25519Sealing.seal(publicKey, plaintext.getBytes(StandardCharsets.UTF_8), context);
        return SealedForm.CURRENT_PREFIX + id + ':' + Base64.getUrlEncoder().withoutPadding().encodeToString(payload);
    }

    /**
     * The configs of mirror {@code mirror} with every inline secret ({@link MirrorConfig#isInlineSecret}) sealed for
     * this key; everything else as given.
     */
    public Map<String, String> sealInlineSecrets(String mirror, Map<String, String> configs) {
        return sealInlineSecrets(mirror, configs, configs);
    }

    /**
     * Configs to set on mirror {@code mirror}, whose configs will then be {@code configsAfter}, with every inline
     * secret sealed for this key; everything else as given.
     */
    public Map<String, String> sealInlineSecrets(String mirror, Map<String, String> configs, Map<String, String> configsAfter) {
        Map<String, String> sealed = new HashMap<>(configs);
        configs.forEach((key, value) -> {
            if (MirrorConfig.isInlineSecret(key, value)) {
                sealed.put(key, seal(value, context(mirror, key, configsAfter)));
            }
        });
        return sealed;
    }

    /**
     * The error for an inline secret where no broker can encrypt it; it names both ways out and never the value.
     */
    public static ClusterMirrorException inlineSecretRefused(String configKey) {
        return new ClusterMirrorException(MirrorError.INVALID_CONFIG, "config '" + configKey + "' holds a secret in clear, "
            + "which would then be stored in the destination's internal topics; either set "
            + PasswordEncoderKeys.SECRET_CONFIG + " on every destination broker (the secret is then encrypted before it "
            + "leaves the client), or " + providerReference(configKey));
    }

    /** The way out that needs no encryption: what the error for a refused inline secret ends with. */
    static String providerReference(String configKey) {
        return "give the value as a reference to a config provider that the destination brokers define ("
            + BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG + "), e.g. ${file:/etc/mirror/secrets.properties:" + configKey + "}";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SealingKey other && id.equals(other.id) && java.util.Arrays.equals(publicKey, other.publicKey);
    }

    @Override
    public int hashCode() {
        return id.hashCode();
    }

    @Override
    public String toString() {
        return "SealingKey(" + id + ")";
    }
}
