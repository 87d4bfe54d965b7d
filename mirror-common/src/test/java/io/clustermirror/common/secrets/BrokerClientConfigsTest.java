package io.clustermirror.common.secrets;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import org.apache.kafka.common.config.provider.FileConfigProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BrokerClientConfigsTest {
    private static final String BOOTSTRAP = "source:9092";
    private static final String CANARY = "canary-7d3e9a";
    private static final String ENCODER_SECRET = "first-encoder-secret-7Kq2xVw9LpZ4mR8t";
    private static final String OLD_SECRET = "old-encoder-secret-8Tj3wQz6NcV1pX5r";
    private static final String NEW_SECRET = "new-encoder-secret-2Lm7kHs4BvY9dG0e";
    private static final String JAAS_PREFIX = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"m\" password=\"";

    @TempDir
    Path dir;

    private static MirrorConfig config(String... keyValues) {
        Map<String, String> configs = new HashMap<>();
        configs.put(MirrorConfig.BOOTSTRAP_SERVERS, BOOTSTRAP);
        for (int i = 0; i < keyValues.length; i += 2) {
            configs.put(keyValues[i], keyValues[i + 1]);
        }
        return MirrorConfig.validate("dr", configs);
    }

    private BrokerClientConfigs withFileProvider(String... extraBrokerConfigs) throws IOException {
        Files.writeString(dir.resolve("secrets.properties"), "password=" + CANARY + "\n");
        Map<String, Object> broker = new HashMap<>(Map.of(
            BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG, "file",
            BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG + ".file.class", FileConfigProvider.class.getName(),
            BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG + ".file.param.allowed.paths", dir.toString()));
        for (int i = 0; i < extraBrokerConfigs.length; i += 2) {
            broker.put(extraBrokerConfigs[i], extraBrokerConfigs[i + 1]);
        }
        return BrokerClientConfigs.fromBrokerConfigs(broker);
    }

    private String reference(String file, String key) {
        return "${file:" + dir.resolve(file) + ":" + key + "}";
    }

    /** Refused with INVALID_CONFIG naming the config key, and never the canary. */
    private static ClusterMirrorException refused(Supplier<Properties> resolve, String key) {
        ClusterMirrorException e = assertThrows(ClusterMirrorException.class, resolve::get);
        assertEquals(MirrorError.INVALID_CONFIG, e.error());
        assertTrue(e.getMessage().contains("'" + key + "'"), e.getMessage());
        assertFalse(e.getMessage().contains(CANARY), "the error shows the resolved value");
        return e;
    }

    @Test
    void resolvesReferencesToTheBrokersProvidersWhenBuildingClientsOnly() throws IOException {
        try (BrokerClientConfigs broker = withFileProvider()) {
            MirrorConfig config = config("ssl.truststore.password", reference("secrets.properties", "password"),
                "sasl.jaas.config", JAAS_PREFIX + reference("secrets.properties", "password") + "\";");
            Properties props = broker.clientProperties(config);
            assertEquals(CANARY, props.getProperty("ssl.truststore.password"));
            assertEquals(JAAS_PREFIX + CANARY + "\";", props.getProperty("sasl.jaas.config"));
            assertEquals(BOOTSTRAP, props.getProperty(MirrorConfig.BOOTSTRAP_SERVERS));
            assertFalse(config.originals().toString().contains(CANARY), "the stored config keeps the reference");
        }
    }

    @Test
    void refusesReferencesTheBrokersCannotResolveNamingKeyAndProvider() throws IOException {
        try (BrokerClientConfigs broker = withFileProvider()) {
            String undefined = refused(() -> broker.clientProperties(config("ssl.key.password", "${env:HOME}")), "ssl.key.password")
                .getMessage();
            assertTrue(undefined.contains("'env'") && undefined.contains(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG), undefined);
            String missingKey = refused(() -> broker.clientProperties(config("ssl.key.password",
                reference("secrets.properties", "nothing"))), "ssl.key.password").getMessage();
            assertTrue(missingKey.contains("'file'"), missingKey);
            refused(() -> broker.clientProperties(config("ssl.key.password", reference("absent.properties", "password"))),
                "ssl.key.password");
            // FileConfigProvider's allowed.paths, set on the broker, keeps references inside the directory.
            refused(() -> broker.clientProperties(config("ssl.key.password", "${file:/etc/passwd:root}")), "ssl.key.password");
        }
    }

    /** Kafka's JAAS parser quotes what it failed on; a secret resolved into a broken JAAS line must not come back. */
    @Test
    void aJaasLineBrokenByItsResolvedValueIsRefusedWithoutQuotingIt() throws IOException {
        try (BrokerClientConfigs broker = withFileProvider()) {
            refused(() -> broker.clientProperties(config("sasl.jaas.config", reference("secrets.properties", "password"))),
                "sasl.jaas.config");
        }
    }

    @Test
    void classTypedConfigsNeedTheBrokersPermission() throws IOException {
        String handler = "com.example.LoginHandler";
        MirrorConfig config = config("sasl.login.callback.handler.class", handler, "interceptor.classes", "com.example.Spy");
        try (BrokerClientConfigs broker = withFileProvider()) {
            String message = refused(() -> broker.clientProperties(config), "interceptor.classes").getMessage();
            assertTrue(message.contains("com.example.Spy") && message.contains(BrokerClientConfigs.ALLOWED_CLIENT_CLASSES_CONFIG), message);
        }
        try (BrokerClientConfigs broker = withFileProvider(BrokerClientConfigs.ALLOWED_CLIENT_CLASSES_CONFIG, handler)) {
            refused(() -> broker.clientProperties(config), "interceptor.classes");
        }
        try (BrokerClientConfigs broker = withFileProvider(BrokerClientConfigs.ALLOWED_CLIENT_CLASSES_CONFIG,
                handler + ", com.example.Spy")) {
            assertEquals(handler, broker.clientProperties(config).getProperty("sasl.login.callback.handler.class"));
        }
    }

    @Test
    void anInlineSecretIsRefusedNamingBothWaysOut() throws IOException {
        try (BrokerClientConfigs broker = withFileProvider(PasswordEncoderKeys.SECRET_CONFIG, ENCODER_SECRET)) {
            String message = refused(() -> broker.clientProperties(config("sasl.jaas.config", JAAS_PREFIX + CANARY + "\";")),
                "sasl.jaas.config").getMessage();
            assertTrue(message.contains(PasswordEncoderKeys.SECRET_CONFIG) && message.contains(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG),
                message);
        }
    }

    @Test
    void opensSecretsSealedWithItsKeyAndRefusesThemWithoutTheSecret() throws IOException {
        Map<String, String> inline = Map.of(MirrorConfig.BOOTSTRAP_SERVERS, BOOTSTRAP, "sasl.jaas.config", JAAS_PREFIX + CANARY + "\";");
        try (BrokerClientConfigs broker = withFileProvider(PasswordEncoderKeys.SECRET_CONFIG, ENCODER_SECRET);
             BrokerClientConfigs without = withFileProvider()) {
            SealingKey key = broker.sealingKey().orElseThrow();
            assertTrue(without.sealingKey().isEmpty());
            MirrorConfig sealed = MirrorConfig.validate("dr", key.sealInlineSecrets("dr", inline));
            assertFalse(sealed.originals().toString().contains(CANARY));
            assertEquals(JAAS_PREFIX + CANARY + "\";", broker.clientProperties(sealed).getProperty("sasl.jaas.config"));
            String message = refused(() -> without.clientProperties(sealed), "sasl.jaas.config").getMessage();
            assertTrue(message.contains(PasswordEncoderKeys.SECRET_CONFIG), message);
        }
    }

    @Test
    void rotationReseals() throws IOException {
        Map<String, String> inline = Map.of(MirrorConfig.BOOTSTRAP_SERVERS, BOOTSTRAP, "ssl.key.password", CANARY);
        try (BrokerClientConfigs before = withFileProvider(PasswordEncoderKeys.SECRET_CONFIG, OLD_SECRET);
             BrokerClientConfigs rotating = withFileProvider(PasswordEncoderKeys.SECRET_CONFIG, NEW_SECRET,
                 PasswordEncoderKeys.OLD_SECRET_CONFIG, OLD_SECRET);
             BrokerClientConfigs after = withFileProvider(PasswordEncoderKeys.SECRET_CONFIG, NEW_SECRET)) {
            Map<String, String> stored = before.sealingKey().orElseThrow().sealInlineSecrets("dr", inline);
            assertSame(stored, before.resealed("dr", stored), "nothing to re-seal for the current key");
            Map<String, String> resealed = rotating.resealed("dr", stored);
            assertFalse(resealed.equals(stored));
            assertEquals(CANARY, after.clientProperties(MirrorConfig.validate("dr", resealed)).getProperty("ssl.key.password"));
            refused(() -> after.clientProperties(MirrorConfig.validate("dr", stored)), "ssl.key.password");
        }
    }

    @Test
    void aProviderWithoutAClassStopsTheBroker() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
            BrokerClientConfigs.fromBrokerConfigs(Map.of(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG, "vault")));
        assertTrue(e.getMessage().contains("cluster.mirror.config.providers.vault.class"), e.getMessage());
    }

    @Test
    void theSourceResponseBoundIs100MiBByDefaultAtLeast1MiBAndNamesTheMirror() {
        assertEquals(100 * 1024 * 1024, BrokerClientConfigs.fromBrokerConfigs(Map.of()).sourceResponseBound("m").maxBytes());
        var bound = BrokerClientConfigs.fromBrokerConfigs(Map.of(BrokerClientConfigs.SOURCE_MAX_RESPONSE_BYTES_CONFIG, "2097152"))
            .sourceResponseBound("m");
        assertEquals(2097152, bound.maxBytes());
        assertEquals("the source of mirror 'm'", bound.peer());
        assertTrue(bound.remedy().contains(BrokerClientConfigs.SOURCE_MAX_RESPONSE_BYTES_CONFIG), bound.remedy());
        for (String refused : List.of("1024", "-1", "lots", "3000000000")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
                BrokerClientConfigs.fromBrokerConfigs(Map.of(BrokerClientConfigs.SOURCE_MAX_RESPONSE_BYTES_CONFIG, refused)));
            assertTrue(e.getMessage().startsWith(BrokerClientConfigs.SOURCE_MAX_RESPONSE_BYTES_CONFIG + "=" + refused
                + " is not a number of bytes from 1048576"), e.getMessage());
        }
    }
}
