package io.clustermirror.common.secrets;

import io.clustermirror.common.SealedForm;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import org.junit.jupiter.api.Test;

import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PasswordEncoderKeysTest {
    private static final String SECRET = "first-encoder-secret-7Kq2xVw9LpZ4mR8t";
    private static final String NEW_SECRET = "second-encoder-secret-3Hn6yBf1QjT5cW0s";
    private static final String PLAINTEXT = "canary-4f1b0e";
    private static final Map<String, String> CONFIGS = Map.of(MirrorConfig.BOOTSTRAP_SERVERS, "source:9092",
        "security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-512", "ssl.truststore.location", "/etc/mirror/truststore.p12");
    private static final byte[] CONTEXT = SealingKey.context("dr", "ssl.key.password", CONFIGS);

    @Test
    void everyBrokerWithTheSameSecretDerivesTheSameKeyAndNothingElseDoes() {
        SealingKey key = PasswordEncoderKeys.derive(SECRET, Optional.empty()).sealingKey();
        assertEquals(key, PasswordEncoderKeys.derive(SECRET, Optional.empty()).sealingKey());
        assertEquals(key, SealingKey.decode(key.encoded()));
        assertNotEquals(key, PasswordEncoderKeys.derive(NEW_SECRET, Optional.empty()).sealingKey());
    }

    @Test
    void aSealedValueHidesThePlaintextAndOpensOnlyWithTheSecret() {
        PasswordEncoderKeys keys = PasswordEncoderKeys.derive(SECRET, Optional.empty());
        String sealed = SealingKey.decode(keys.sealingKey().encoded()).seal(PLAINTEXT, CONTEXT);
        assertTrue(SealedForm.isSealed(sealed) && sealed.contains(keys.sealingKey().id()), sealed);
        assertFalse(sealed.contains(PLAINTEXT));
        assertNotEquals(sealed, keys.sealingKey().seal(PLAINTEXT, CONTEXT), "every sealing is fresh");
        assertEquals(PLAINTEXT, keys.open("ssl.key.password", sealed, CONTEXT));

        ClusterMirrorException other = assertThrows(ClusterMirrorException.class, () ->
            PasswordEncoderKeys.derive(NEW_SECRET, Optional.empty()).open("ssl.key.password", sealed, CONTEXT));
        assertEquals(MirrorError.INVALID_CONFIG, other.error());
        assertTrue(other.getMessage().contains("ssl.key.password") && other.getMessage().contains(PasswordEncoderKeys.OLD_SECRET_CONFIG),
            other.getMessage());
    }

    /** Bound to mirror, config and source: a sealed value copied elsewhere (to send it to another cluster) does not open. */
    @Test
    void aSealedValueOpensOnlyWhereItWasSealedFor() {
        PasswordEncoderKeys keys = PasswordEncoderKeys.derive(SECRET, Optional.empty());
        String sealed = keys.sealingKey().seal(PLAINTEXT, CONTEXT);
        for (byte[] elsewhere : new byte[][] {SealingKey.context("evil", "ssl.key.password", CONFIGS),
                SealingKey.context("dr", "ssl.keystore.password", CONFIGS),
                SealingKey.context("dr", "ssl.key.password", with(MirrorConfig.BOOTSTRAP_SERVERS, "attacker:9092"))}) {
            ClusterMirrorException e = assertThrows(ClusterMirrorException.class, () -> keys.open("ssl.key.password", sealed, elsewhere));
            assertFalse(e.getMessage().contains(PLAINTEXT), e.getMessage());
        }
    }

    @Test
    void anAlteredPayloadDoesNotOpen() {
        PasswordEncoderKeys keys = PasswordEncoderKeys.derive(SECRET, Optional.empty());
        String sealed = keys.sealingKey().seal(PLAINTEXT, CONTEXT);
        int payloadStart = sealed.lastIndexOf(':') + 1;
        byte[] payload = Base64.getUrlDecoder().decode(sealed.substring(payloadStart));
        payload[payload.length - 1] ^= 1;
        String altered = sealed.substring(0, payloadStart) + Base64.getUrlEncoder().withoutPadding().encodeToString(payload);
        assertThrows(ClusterMirrorException.class, () -> keys.open("ssl.key.password", altered, CONTEXT));
    }

    /** Rotation: with the old secret kept as the old one, old values open and are re-sealed for the new key. */
    @Test
    void rotationOpensOldValuesAndResealsThemForTheNewKey() {
        PasswordEncoderKeys before = PasswordEncoderKeys.derive(SECRET, Optional.empty());
        String sealedBefore = before.sealingKey().seal(PLAINTEXT, CONTEXT);
        PasswordEncoderKeys rotating = PasswordEncoderKeys.derive(NEW_SECRET, Optional.of(SECRET));
        assertEquals(PLAINTEXT, rotating.open("ssl.key.password", sealedBefore, CONTEXT));
        assertTrue(rotating.needsResealing(sealedBefore));

        String resealed = rotating.reseal("ssl.key.password", sealedBefore, CONTEXT, CONTEXT);
        assertFalse(rotating.needsResealing(resealed));
        PasswordEncoderKeys after = PasswordEncoderKeys.derive(NEW_SECRET, Optional.empty());
        assertEquals(PLAINTEXT, after.open("ssl.key.password", resealed, CONTEXT));
        assertThrows(ClusterMirrorException.class, () -> after.open("ssl.key.password", sealedBefore, CONTEXT));
    }

    /** The rule of each weak secret: too short, a short word repeated, too little entropy (a 128-bit hex string has ~116). */
    @Test
    void aWeakSecretIsRefusedNamingTheRuleAndNeverTheSecret() {
        for (String weak : List.of("short-secret-1", "passwordpasswordpasswordpasswordpassword", "a".repeat(64),
                "9f2c4e1ab8d07e5c3a6b9d2e8f1c4a70")) {
            assertFalse(PasswordEncoderKeys.isStrong(weak), weak);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PasswordEncoderKeys.derive(weak, Optional.empty()));
            assertTrue(e.getMessage().contains(PasswordEncoderKeys.SECRET_CONFIG + " is too weak")
                && e.getMessage().contains(PasswordEncoderKeys.STRENGTH_RULE), e.getMessage());
            assertFalse(e.getMessage().contains(weak), "the error shows the secret");
        }
        for (String strong : List.of(SECRET, NEW_SECRET, "K8p2vXq9LmZ4rT7wN1sB6yH3dF0gJ5cA", "correct horse battery staple on a moonlit quay")) {
            assertTrue(PasswordEncoderKeys.isStrong(strong), strong);
        }
    }

    /** A weak old secret is what a cluster rotates away from: it must still open what was sealed for it. */
    @Test
    void aWeakOldSecretIsAcceptedSoThatItCanBeRotatedAway() {
        String weak = "weak-old-secret";
        String sealedForWeak = new SealingKey(X25519Sealing.publicKeyOf(X25519Sealing.derivePrivateKey(weak))).seal(PLAINTEXT, CONTEXT);
        PasswordEncoderKeys rotating = PasswordEncoderKeys.derive(SECRET, Optional.of(weak));
        assertTrue(rotating.needsResealing(sealedForWeak));
        assertEquals(PLAINTEXT, rotating.open("ssl.key.password", rotating.reseal("ssl.key.password", sealedForWeak, CONTEXT, CONTEXT), CONTEXT));
    }

    /**
     * Bound to how the source is reached: a password sealed for SASL_SSL with SCRAM and the operator's truststore does not
     * open in a config that sends it in clear, over PLAIN, to a server another truststore vouches for, or without
     * hostname verification.
     */
    @Test
    void aSealedValueDoesNotOpenWithAnotherProtocolMechanismOrTruststore() {
        PasswordEncoderKeys keys = PasswordEncoderKeys.derive(SECRET, Optional.empty());
        String sealed = keys.sealingKey().seal(PLAINTEXT, CONTEXT);
        for (Map<String, String> replayed : List.of(with("security.protocol", "SASL_PLAINTEXT"), with("sasl.mechanism", "PLAIN"),
                with("ssl.truststore.location", "/tmp/attacker.p12"), with("ssl.truststore.type", "PEM"),
                with("ssl.endpoint.identification.algorithm", ""), with("sasl.oauthbearer.token.endpoint.url", "https://attacker"))) {
            assertThrows(ClusterMirrorException.class, () -> keys.open("ssl.key.password", sealed,
                SealingKey.context("dr", "ssl.key.password", replayed)), replayed.toString());
        }
        assertEquals(PLAINTEXT, keys.open("ssl.key.password", sealed, SealingKey.context("dr", "ssl.key.password", CONFIGS)));
    }

    /** A value of the previous release opens with what it was bound to, and is sealed again in the current form. */
    @Test
    void aValueOfThePreviousReleaseOpensAndIsResealedBoundToTheConnection() {
        PasswordEncoderKeys keys = PasswordEncoderKeys.derive(SECRET, Optional.empty());
        String current = keys.sealingKey().seal(PLAINTEXT, CONTEXT);
        String v1 = reformatAsPrevious(keys);
        assertTrue(SealedForm.isSealed(v1) && keys.needsResealing(v1), v1);
        assertFalse(keys.needsResealing(current));
        byte[] openWith = SealingKey.contextOf(v1, "dr", "ssl.key.password", CONFIGS);
        assertEquals(PLAINTEXT, keys.open("ssl.key.password", v1, openWith));
        String resealed = keys.reseal("ssl.key.password", v1, openWith, CONTEXT);
        assertTrue(resealed.startsWith(SealedForm.CURRENT_PREFIX) && !keys.needsResealing(resealed), resealed);
        assertEquals(PLAINTEXT, keys.open("ssl.key.password", resealed, SealingKey.contextOf(resealed, "dr", "ssl.key.password", CONFIGS)));
    }

    /** What the previous release wrote: the v1 prefix, and the payload bound to mirror, config key and bootstrap.servers. */
    private static String reformatAsPrevious(PasswordEncoderKeys keys) {
        String sealed = keys.sealingKey().seal(PLAINTEXT, SealingKey.previousContext("dr", "ssl.key.password", "source:9092"));
        return SealedForm.PREVIOUS_PREFIX + sealed.substring(SealedForm.CURRENT_PREFIX.length());
    }

    private static Map<String, String> with(String key, String value) {
        Map<String, String> configs = new HashMap<>(CONFIGS);
        configs.put(key, value);
        return configs;
    }
}
