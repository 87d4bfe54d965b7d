package io.clustermirror.common.secrets;

import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.interfaces.XECPublicKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPrivateKeySpec;
import java.security.spec.XECPublicKeySpec;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * The cryptography of sealed secrets (format version 1), with the JDK's providers only: an X25519 key pair derived
 * from the password-encoder secret (PBKDF2-HMAC-SHA512), and per value an ephemeral X25519 key agreement whose
 * shared secret gives, through HKDF-SHA256, the AES-256-GCM key of that value alone (ECIES).
 *
 * <p>A sealed payload is {@code ephemeral public key (32 bytes) | nonce (12) | ciphertext and 128-bit tag}. The
 * associated data binds it to where it was sealed for (see {@link SealingKey#context}): moved to another mirror,
 * config or source, it no longer opens. Nothing here ever puts a plaintext or key into an exception message.
 */
final class X25519Sealing {
    static final int KEY_BYTES = 32;
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final int PBKDF2_ITERATIONS = 100_000;
    // Fixed: every broker of a cluster must derive the same key pair from the same secret, with nothing stored.
    private static final byte[] PBKDF2_SALT = "io.clustermirror.password.encoder.v1".getBytes(StandardCharsets.UTF_8);
    private static final byte[] HKDF_INFO = "io.clustermirror.sealed.secret.v1".getBytes(StandardCharsets.UTF_8);
    private static final BigInteger BASE_POINT_U = BigInteger.valueOf(9);
    private static final SecureRandom RANDOM = new SecureRandom();

    private X25519Sealing() {
    }

    /** The X25519 private scalar derived from a password-encoder secret. */
    static byte[] derivePrivateKey(String secret) {
        char[] chars = secret.toCharArray();
        PBEKeySpec spec = new PBEKeySpec(chars, PBKDF2_SALT, PBKDF2_ITERATIONS, KEY_BYTES * 8);
        try {
            return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA512").generateSecret(spec).getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks PBKDF2WithHmacSHA512", e);
        } finally {
            spec.clearPassword();
            Arrays.fill(chars, '\0');
        }
    }

    /** The public key (little-endian u-coordinate) of a private scalar: X25519(k, 9), the agreement with the base point. */
    static byte[] publicKeyOf(byte[] privateKey) {
        try {
            return agree(privateKey(privateKey), publicKey(uToBytes(BASE_POINT_U)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks X25519", e);
        }
    }

    /** A short, stable name of a public key: the first 8 bytes of its SHA-256, in hex. */
    static String keyId(byte[] publicKey) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(publicKey), 0, 8);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks SHA-256", e);
        }
    }

    static byte[] seal(byte[] recipientPublicKey, byte[] plaintext, byte[] associatedData) {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("X25519");
            KeyPair ephemeral = generator.generateKeyPair();
            byte[] ephemeralPublic = uToBytes(((XECPublicKey) ephemeral.getPublic()).getU());
            byte[] shared = agree(ephemeral.getPrivate(), publicKey(recipientPublicKey));
            byte[] nonce = new byte[NONCE_BYTES];
            RANDOM.nextBytes(nonce);
            Cipher cipher = cipher(Cipher.ENCRYPT_MODE, shared, ephemeralPublic, recipientPublicKey, nonce, associatedData);
            byte[] ciphertext = cipher.doFinal(plaintext);
            return ByteBuffer.allocate(KEY_BYTES + NONCE_BYTES + ciphertext.length)
                .put(ephemeralPublic).put(nonce).put(ciphertext).array();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot seal a secret: " + e.getClass().getSimpleName());
        }
    }

    /** @throws GeneralSecurityException if the payload was not sealed for this key and associated data, or was altered */
    static byte[] open(byte[] privateKey, byte[] recipientPublicKey, byte[] payload, byte[] associatedData)
            throws GeneralSecurityException {
        if (payload.length < KEY_BYTES + NONCE_BYTES + TAG_BITS / 8) {
            throw new GeneralSecurityException("sealed payload too short");
        }
        byte[] ephemeralPublic = Arrays.copyOfRange(payload, 0, KEY_BYTES);
        byte[] nonce = Arrays.copyOfRange(payload, KEY_BYTES, KEY_BYTES + NONCE_BYTES);
        byte[] shared = agree(privateKey(privateKey), publicKey(ephemeralPublic));
        Cipher cipher = cipher(Cipher.DECRYPT_MODE, shared, ephemeralPublic, recipientPublicKey, nonce, associatedData);
        return cipher.doFinal(payload, KEY_BYTES + NONCE_BYTES, payload.length - KEY_BYTES - NONCE_BYTES);
    }

    private static Cipher cipher(int mode, byte[] shared, byte[] ephemeralPublic, byte[] recipientPublic, byte[] nonce,
                                 byte[] associatedData) throws GeneralSecurityException {
        byte[] salt = ByteBuffer.allocate(2 * KEY_BYTES).put(ephemeralPublic).put(recipientPublic).array();
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(mode, new SecretKeySpec(hkdfSha256(salt, shared), "AES"), new GCMParameterSpec(TAG_BITS, nonce));
        cipher.updateAAD(associatedData);
        return cipher;
    }

    /** HKDF-SHA256 (RFC 5869) with one output block: a 32-byte key. */
    private static byte[] hkdfSha256(byte[] salt, byte[] inputKey) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(salt, "HmacSHA256"));
        byte[] pseudoRandomKey = mac.doFinal(inputKey);
        mac.init(new SecretKeySpec(pseudoRandomKey, "HmacSHA256"));
        mac.update(HKDF_INFO);
        return mac.doFinal(new byte[] {1});
    }

    private static byte[] agree(PrivateKey privateKey, PublicKey publicKey) throws GeneralSecurityException {
        KeyAgreement agreement = KeyAgreement.getInstance("X25519");
        agreement.init(privateKey);
        agreement.doPhase(publicKey, true);
        return agreement.generateSecret();
    }

    private static PrivateKey privateKey(byte[] scalar) throws GeneralSecurityException {
        return KeyFactory.getInstance("X25519").generatePrivate(new XECPrivateKeySpec(NamedParameterSpec.X25519, scalar));
    }

    private static PublicKey publicKey(byte[] u) throws GeneralSecurityException {
        if (u.length != KEY_BYTES) {
            throw new GeneralSecurityException("an X25519 public key has " + KEY_BYTES + " bytes");
        }
        return KeyFactory.getInstance("X25519").generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, uFromBytes(u)));
    }

    /** RFC 7748: a u-coordinate is 32 bytes, little-endian. */
    private static BigInteger uFromBytes(byte[] littleEndian) {
        byte[] bigEndian = new byte[littleEndian.length];
        for (int i = 0; i < littleEndian.length; i++) {
            bigEndian[i] = littleEndian[littleEndian.length - 1 - i];
        }
        return new BigInteger(1, bigEndian);
    }

    private static byte[] uToBytes(BigInteger u) {
        byte[] bigEndian = u.toByteArray();
        byte[] littleEndian = new byte[KEY_BYTES];
        for (int i = 0; i < Math.min(KEY_BYTES, bigEndian.length); i++) {
            littleEndian[i] = bigEndian[bigEndian.length - 1 - i];
        }
        return littleEndian;
    }
}
