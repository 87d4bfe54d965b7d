package io.clustermirror.common.secrets;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * A destination broker's keys for sealed secrets, derived from {@value #SECRET_CONFIG} and, during a rotation,
 * {@value #OLD_SECRET_CONFIG} (as Kafka's {@code password.encoder.secret} and {@code password.encoder.old.secret}).
 * Every broker of the cluster must have the same secrets: they derive the same keys, and nothing secret is stored.
 *
 * <p>Values sealed for the current key or the old one open; {@link #needsResealing} tells which ones the controller
 * re-seals for the current key, after which the old secret can go.
 */
public final class PasswordEncoderKeys {
    public static final String SECRET_CONFIG = "cluster.mirror.password.encoder.secret";
    public static final String OLD_SECRET_CONFIG = "cluster.mirror.password.encoder.old.secret";

    private record KeyPair(byte[] privateKey, SealingKey publicKey) {
        static KeyPair derive(String secret) {
            byte[] privateKey = X25519Sealing.derivePrivateKey(secret);
            return new KeyPair(privateKey, new SealingKey(X25519Sealing.publicKeyOf(privateKey)));
        }
    }

    private final KeyPair current;
    private final Optional<KeyPair> old;

    private PasswordEncoderKeys(KeyPair current, Optional<KeyPair> old) {
        this.current = current;
        this.old = old;
    }

    /**
     * @param secret    the current secret (required)
     * @param oldSecret the secret it replaces, while values sealed for it may remain
     */
    public static PasswordEncoderKeys derive(String secret, Optional<String> oldSecret) {
        if (secret == null || secret.isEmpty()) {
            throw new IllegalArgumentException(SECRET_CONFIG + " is empty");
        }
        return new PasswordEncoderKeys(KeyPair.derive(secret), oldSecret.filter(s -> !s.isEmpty()).map(KeyPair::derive));
    }

    /** The key clients seal with. */
    public SealingKey sealingKey() {
        return current.publicKey();
    }

    /**
     * Opens a sealed value.
     *
     * @param configKey the config it is the value of (for the error message)
     * @throws ClusterMirrorException INVALID_CONFIG if neither secret's key sealed it for this context, naming the key
     *                                ids, never a value
     */
    public String open(String configKey, String sealed, byte[] context) {
        String keyId = SealingKey.keyIdOf(sealed).orElseThrow(() -> unreadable(configKey, "it is not a sealed value"));
        KeyPair pair = keyPairs().stream().filter(p -> p.publicKey().id().equals(keyId)).findFirst().orElseThrow(() ->
            unreadable(configKey, "it was encrypted with key " + keyId + ", but the destination brokers hold " + keyIds()
                + "; set " + OLD_SECRET_CONFIG + " to the secret it was encrypted with, or give the value again"));
        byte[] payload;
        try {
            payload = Base64.getUrlDecoder().decode(sealed.substring(SealingKey.SEALED_PREFIX.length() + keyId.length() + 1));
        } catch (IllegalArgumentException e) {
            throw unreadable(configKey, "its payload is not base64url");
        }
        try {
            return new String(X25519Sealing.open(pair.privateKey(), pair.publicKey().publicKey(), payload, context),
                StandardCharsets.UTF_8);
        } catch (GeneralSecurityException e) {
            throw unreadable(configKey, "it was encrypted for another mirror, config or source, or it was altered");
        }
    }

    /** True if {@code value} is sealed, but not for the current key: the controller re-seals it. */
    public boolean needsResealing(String value) {
        return SealingKey.keyIdOf(value).filter(id -> !id.equals(current.publicKey().id())).isPresent();
    }

    /** The value re-sealed for the current key (same context). */
    public String reseal(String configKey, String sealed, byte[] context) {
        return current.publicKey().seal(open(configKey, sealed, context), context);
    }

    private List<KeyPair> keyPairs() {
        List<KeyPair> pairs = new ArrayList<>();
        pairs.add(current);
        old.ifPresent(pairs::add);
        return pairs;
    }

    private List<String> keyIds() {
        return keyPairs().stream().map(p -> p.publicKey().id()).toList();
    }

    private static ClusterMirrorException unreadable(String configKey, String why) {
        return new ClusterMirrorException(MirrorError.INVALID_CONFIG, "cannot decrypt config '" + configKey + "': " + why);
    }
}
