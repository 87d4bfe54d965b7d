package io.clustermirror.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * PKCS12 keystores and truststores for TLS tests, made with the JDK's own {@code keytool}: each keystore holds a new EC
 * key pair with a self-signed certificate, valid for {@code localhost}, and a truststore trusts the certificates of the
 * keystores it is made from. Passwords are random, handed to keytool through its environment, and never printed.
 */
public final class Keystores {
    private static final Path KEYTOOL = Path.of(System.getProperty("java.home"), "bin", "keytool");
    private static final String PASSWORD_VARIABLE = "STORE_PASSWORD";
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A PKCS12 store and its password (a secret: never print it). */
    public record Store(Path path, String password) {
        @Override
        public String toString() {
            return "Store(" + path + ")";
        }
    }

    private Keystores() {
    }

    /**
     * 256 random bits, base64url (43 characters): strong enough for any secret a test sets, including a password-encoder
     * secret, which the brokers refuse when weak.
     */
    public static String newPassword() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** A keystore whose key pair's certificate names {@code dname} and is valid for localhost and 127.0.0.1. */
    public static Store keystore(Path dir, String name, String dname) throws IOException, InterruptedException {
        Store store = new Store(dir.resolve(name + ".p12"), newPassword());
        keytool(store.password(), "-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1",
            "-dname", dname, "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2",
            "-storetype", "PKCS12", "-keystore", store.path().toString());
        return store;
    }

    /** A truststore holding the certificate of each of {@code trusted}. */
    public static Store truststore(Path dir, String name, Store... trusted) throws IOException, InterruptedException {
        Store store = new Store(dir.resolve(name + ".p12"), newPassword());
        for (Store keystore : trusted) {
            String alias = keystore.path().toFile().getName().replace(".p12", "");
            Path certificate = dir.resolve(alias + ".pem");
            keytool(keystore.password(), "-exportcert", "-rfc", "-alias", alias, "-keystore", keystore.path().toString(),
                "-file", certificate.toString());
            keytool(store.password(), "-importcert", "-noprompt", "-alias", alias, "-file", certificate.toString(),
                "-storetype", "PKCS12", "-keystore", store.path().toString());
        }
        return store;
    }

    private static void keytool(String password, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(KEYTOOL.toString()));
        command.addAll(List.of(args));
        command.add("-storepass:env");
        command.add(PASSWORD_VARIABLE);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put(PASSWORD_VARIABLE, password);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException("keytool " + args[0] + " failed: " + output.replace(password, "[hidden]"));
        }
    }
}
