package io.clustermirror.common.secrets;

import io.clustermirror.common.SealedForm;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A destination broker's keys for sealed secrets, derived from {@value #SECRET_CONFIG} and, during a rotation,
 * {@value #OLD_SECRET_CONFIG} (as Kafka's {@code password.encoder.secret} and {@code password.encoder.old.secret}).
 * Every broker of the cluster must have the same secrets: they derive the same keys, and nothing secret is stored.
 *
 * <p>Values sealed for the current key or the old one open; {@link #needsResealing} tells which ones the controller
 * re-seals for the current key, after which the old secret can go.
 *
 * <p>The public key is published, so whoever reads it can guess secrets offline: a secret must be strong
 * ({@link #STRENGTH_RULE}). A weak old secret is only warned about, so that a cluster can rotate away from it.
 */
public final class PasswordEncoderKeys {
    public static final String SECRET_CONFIG = "cluster.mirror.password.encoder.secret";
    public static final String OLD_SECRET_CONFIG = "cluster.mirror.password.encoder.old.secret";
    static final int MIN_SECRET_CHARS = 32;
    static final int MIN_DISTINCT_CHARS = 10;
    static final int MIN_ENTROPY_BITS = 128;
    /** What a secret must be, as operators read it in the error and in docs/security.md. */
    public static final String STRENGTH_RULE = "at least " + MIN_SECRET_CHARS + " characters, at least " + MIN_DISTINCT_CHARS
        + " different ones, and at least " + MIN_ENTROPY_BITS + " bits of estimated entropy (its length times the Shannon entropy "
        + "of its characters' frequencies): generate one with 'openssl rand -base64 32'";
    private static final Logger log = LoggerFactory.getLogger(PasswordEncoderKeys.class);

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
     * @throws IllegalArgumentException if {@code secret} is not {@linkplain #isStrong strong}, naming the rule, never the secret
     */
    public static PasswordEncoderKeys derive(String secret, Optional<String> oldSecret) {
        if (secret == null || !isStrong(secret)) {
            throw new IllegalArgumentException(SECRET_CONFIG + " is too weak: every broker publishes the public key derived from "
                + "it, so a weak secret can be guessed offline and the mirrors' encrypted passwords read. It needs " + STRENGTH_RULE
                + ". To replace a weak secret, set " + OLD_SECRET_CONFIG + " to it and " + SECRET_CONFIG + " to the new one "
                + "(docs/security.md, 'Rotating the encoder secret')");
        }
        Optional<String> old = oldSecret.filter(s -> !s.isEmpty());
        if (old.isPresent() && !isStrong(old.get())) {
            log.warn("{} is weak (a secret needs {}); it is accepted only to rotate away from it: remove it once the mirror "
                + "controller has logged that it re-encrypted the mirrors' secrets with the current key", OLD_SECRET_CONFIG, STRENGTH_RULE);
        }
        return new PasswordEncoderKeys(KeyPair.derive(secret), old.map(KeyPair::derive));
    }

    /**
     * True if {@code secret} follows {@link #STRENGTH_RULE}. The entropy estimate is that of a string whose characters are
     * drawn independently with the frequencies they have in it; the distinct-character floor catches a short word repeated.
     */
    static boolean isStrong(String secret) {
        int length = secret.codePointCount(0, secret.length());
        if (length < MIN_SECRET_CHARS) {
            return false;
        }
        Map<Integer, Integer> counts = new HashMap<>();
        secret.codePoints().forEach(c -> counts.merge(c, 1, Integer::sum));
        if (counts.size() < MIN_DISTINCT_CHARS) {
            return false;
        }
        double bitsPerChar = 0;
        for (int count : counts.values()) {
            double p = (double) count / length;
            bitsPerChar -= p * Math.log(p) / Math.log(2);
        }
        return bitsPerChar * length >= MIN_ENTROPY_BITS;
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
            payload = Base64.getUrlDecoder().decode(sealed.substring(SealedForm.CURRENT_PREFIX.length() + keyId.length() + 1));
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

    /**
     * True if {@code value} is sealed, but not for the current key, or in the previous release's form, bound to less:
     * the controller re-seals it.
     */
    public boolean needsResealing(String value) {
        return SealingKey.isPreviousForm(value)
            || SealingKey.keyIdOf(value).filter(id -> !id.equals(current.publicKey().id())).isPresent();
    }

    /** The value opened with {@code openContext} and sealed again for the current key and {@code sealContext}. */
    public String reseal(String configKey, String sealed, byte[] openContext, byte[] sealContext) {
        return current.publicKey().seal(open(configKey, sealed, openContext), sealContext);
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
