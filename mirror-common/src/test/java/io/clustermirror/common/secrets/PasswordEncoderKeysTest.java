package io.clustermirror.common.secrets;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import org.junit.jupiter.api.Test;

import java.util.Base64;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PasswordEncoderKeysTest {
    private static final String SECRET = "first-encoder-secret";
    private static final String NEW_SECRET = "second-encoder-secret";
    private static final String PLAINTEXT = "canary-4f1b0e";
    private static final byte[] CONTEXT = SealingKey.context("dr", "ssl.key.password", "source:9092");

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
        assertTrue(SealingKey.isSealed(sealed) && sealed.contains(keys.sealingKey().id()), sealed);
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
        for (byte[] elsewhere : new byte[][] {SealingKey.context("evil", "ssl.key.password", "source:9092"),
                SealingKey.context("dr", "ssl.keystore.password", "source:9092"),
                SealingKey.context("dr", "ssl.key.password", "attacker:9092")}) {
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

        String resealed = rotating.reseal("ssl.key.password", sealedBefore, CONTEXT);
        assertFalse(rotating.needsResealing(resealed));
        PasswordEncoderKeys after = PasswordEncoderKeys.derive(NEW_SECRET, Optional.empty());
        assertEquals(PLAINTEXT, after.open("ssl.key.password", resealed, CONTEXT));
        assertThrows(ClusterMirrorException.class, () -> after.open("ssl.key.password", sealedBefore, CONTEXT));
    }
}
