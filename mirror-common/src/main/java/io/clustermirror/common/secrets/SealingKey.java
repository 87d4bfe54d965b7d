package io.clustermirror.common.secrets;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The public key of a destination cluster's password encoder: clients seal the inline secrets of a mirror config
 * with it before the config leaves them, so that a secret is never in clear in {@code __mirror_commands} or
 * {@code __mirror_metadata}. Only brokers that hold {@code cluster.mirror.password.encoder.secret} (or the old
 * secret it replaced) can open them ({@link PasswordEncoderKeys}). The active mirror controller publishes the key in
 * {@code __mirror_metadata}, which only the extension writes.
 *
 * <p>A sealed value reads {@value #SEALED_PREFIX}{@code <key id>:<base64url payload>}; it is bound to the mirror,
 * the config key and the source's {@code bootstrap.servers} ({@link #context}), so it cannot be replayed into
 * another mirror that points at another cluster.
 */
public final class SealingKey {
    public static final String SEALED_PREFIX = "sealed:v1:";

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

    /** True if {@code value} is a sealed secret (of any key). */
    public static boolean isSealed(String value) {
        return value != null && value.startsWith(SEALED_PREFIX);
    }

    /** The key id a sealed value names, if it is sealed at all. */
    static Optional<String> keyIdOf(String value) {
        if (!isSealed(value)) {
            return Optional.empty();
        }
        int end = value.indexOf(':', SEALED_PREFIX.length());
        return end < 0 ? Optional.empty() : Optional.of(value.substring(SEALED_PREFIX.length(), end));
    }

    /** What a sealed value of {@code configKey} in mirror {@code mirror} reading {@code bootstrapServers} is bound to. */
    public static byte[] context(String mirror, String configKey, String bootstrapServers) {
        return (mirror + '\n' + configKey + '\n' + bootstrapServers).getBytes(StandardCharsets.UTF_8);
    }

    /** Seals {@code plaintext} for the brokers holding this key's secret; only they can read it. */
    public String seal(String plaintext, byte[] context) {
        byte[] payload = X25519Sealing.seal(publicKey, plaintext.getBytes(StandardCharsets.UTF_8), context);
        return SEALED_PREFIX + id + ':' + Base64.getUrlEncoder().withoutPadding().encodeToString(payload);
    }

    /**
     * The configs of mirror {@code mirror} with every inline secret ({@link MirrorConfig#isInlineSecret}) sealed for
     * this key; everything else as given.
     */
    public Map<String, String> sealInlineSecrets(String mirror, Map<String, String> configs) {
        return sealInlineSecrets(mirror, configs, configs.get(MirrorConfig.BOOTSTRAP_SERVERS));
    }

    /**
     * Configs to set on mirror {@code mirror}, whose {@code bootstrap.servers} will be {@code bootstrapServers}, with
     * every inline secret sealed for this key; everything else as given.
     */
    public Map<String, String> sealInlineSecrets(String mirror, Map<String, String> configs, String bootstrapServers) {
        Map<String, String> sealed = new HashMap<>(configs);
        configs.forEach((key, value) -> {
            if (MirrorConfig.isInlineSecret(key, value)) {
                sealed.put(key, seal(value, context(mirror, key, bootstrapServers)));
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
            + "leaves the client), or give the value as a reference to a config provider that the destination brokers "
            + "define (" + BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG + "), e.g. ${file:/etc/mirror/secrets.properties:"
            + configKey + "}");
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
