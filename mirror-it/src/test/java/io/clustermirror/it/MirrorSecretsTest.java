package io.clustermirror.it;

import io.clustermirror.common.SealedForm;
import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorError;
import io.clustermirror.broker.auth.MirrorAwareAuthorizer;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SealingKeyRecord;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import io.clustermirror.common.secrets.PasswordEncoderKeys;
import io.clustermirror.common.secrets.SealingKey;
import io.clustermirror.testsupport.Keystores;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.provider.FileConfigProvider;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.plain.PlainLoginModule;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Secrets of mirror configs on real clusters: a SASL_PLAINTEXT (PLAIN) source whose two users' passwords are canaries.
 * One password reaches the mirror through a config provider that the destination brokers define, the other is given
 * inline and encrypted with the destination's password-encoder secret. Neither, nor the encoder secret, may show
 * anywhere a client, an operator or a reader of the destination's internal topics can look: the tool's output, describe, the raw records
 * of {@code __mirror_commands}, {@code __mirror_metadata} and {@code __mirror_state}, the log, or any file under the
 * destination broker's log directory. A second destination, without an encoder secret, refuses an inline password; a
 * third, with the secret but ACLs off, refuses one too, even when a client has replaced the published key with its own.
 */
@MirrorClusterTest(topologies = "topologies")
class MirrorSecretsTest {
    private static final Duration TIMEOUT = MirrorAssertions.TIMEOUT;
    private static final String SASL = "SASL";
    private static final String PROVIDED_USER = "provided";
    private static final String INLINE_USER = "inline";
    private static final String WITHOUT_SECRET = "secrets-destination-without-secret";
    private static final String ACLS_OFF = "secrets-destination-acls-off";

    @TempDir
    static Path dir;
    private static LogCapture logs;
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster withoutSecret;
    private static MirrorTestCluster aclsOff;
    private static Path secretsFile;
    private static String providedPassword;
    private static String inlinePassword;
    private static String encoderSecret;

    /**
     * A source with a SASL PLAIN listener; a destination with a password encoder secret and a file config provider; and
     * two more destinations, one without an encoder secret and one that enforces no ACLs. The log capture starts first, to
     * see the clusters start too.
     */
    static ClusterPair.Topologies topologies() throws Exception {
        logs = LogCapture.start();
        providedPassword = Keystores.newPassword();
        inlinePassword = Keystores.newPassword();
        encoderSecret = Keystores.newPassword();
        secretsFile = dir.resolve("mirror-secrets.properties");
        Files.writeString(secretsFile, "password=" + providedPassword + "\n");
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("secrets-source").brokers(1)
                .listener(SASL, SecurityProtocol.SASL_PLAINTEXT)
                .brokerConfig("listener.name.sasl.sasl.enabled.mechanisms", "PLAIN")
                .brokerConfig("listener.name.sasl.plain.sasl.jaas.config", PlainLoginModule.class.getName() + " required"
                    + " user_" + PROVIDED_USER + "=\"" + providedPassword + "\" user_" + INLINE_USER + "=\"" + inlinePassword + "\";").topology(),
            MirrorTestCluster.builder().name("secrets-destination").brokers(1)
                .brokerConfig(PasswordEncoderKeys.SECRET_CONFIG, encoderSecret)
                .brokerConfig(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG, "file")
                .brokerConfig(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG + ".file.class", FileConfigProvider.class.getName())
                .brokerConfig(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG + ".file.param.allowed.paths", dir.toString()).topology(),
            MirrorTestCluster.builder().name(WITHOUT_SECRET).brokers(1).withExtension(true).topology(),
            // What the launcher runs where no authorizer.class.name is configured.
            MirrorTestCluster.builder().name(ACLS_OFF).brokers(1).withExtension(true)
                .brokerConfig(MirrorAwareAuthorizer.ACLS_ENABLED_CONFIG, "false")
                .brokerConfig(PasswordEncoderKeys.SECRET_CONFIG, encoderSecret).topology());
    }

    @BeforeAll
    static void nameTheOtherDestinations() {
        withoutSecret = clusters.other(WITHOUT_SECRET);
        aclsOff = clusters.other(ACLS_OFF);
    }

    @AfterAll
    static void stopCapturingLogs() {
        logs.close();
    }

    @Test
    void aPasswordFromTheBrokersFileProviderMirrorsAndShowsNowhere() throws Exception {
        String topic = "secrets-provided";
        createSourceTopic(topic);
        Map<String, String> config = saslConfig(PROVIDED_USER, "${file:" + secretsFile + ":password}");
        clusters.mirrors.createClusterMirror("provided", config).all().get();
        mirrorAndCheck("provided", topic);
        assertNoSecretAnywhere();
    }

    @Test
    void anInlinePasswordIsEncryptedMirrorsAndShowsNowhere() throws Exception {
        String topic = "secrets-inline";
        createSourceTopic(topic);
        CliRun created = CliRun.run(clusters.destination.bootstrapServers(), "--create", "--mirror", "inline",
            "--mirror-config", propertiesFile("inline.properties", saslConfig(INLINE_USER, inlinePassword)).toString());
        assertNoSecret(created.out() + created.err(), "the output of --create");
        assertEquals(0, created.exit(), created.err());
        mirrorAndCheck("inline", topic);

        // Not vacuous: the internal topics hold the encrypted password where the clear one would be.
        assertTrue(rawRecords(clusters.destination, InternalTopics.COMMANDS).contains(SealedForm.CURRENT_PREFIX));
        assertTrue(rawRecords(clusters.destination, InternalTopics.METADATA).contains(SealedForm.CURRENT_PREFIX));
        assertNoSecretAnywhere();
        // The encoder secret, which opens them, is as hidden as Kafka's own password.encoder.secret.
        try (Admin admin = clusters.destination.admin()) {
            for (int broker : clusters.destination.brokerIds()) {
                ConfigResource resource = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(broker));
                ConfigEntry entry = admin.describeConfigs(List.of(resource)).all().get().get(resource).get(PasswordEncoderKeys.SECRET_CONFIG);
                assertTrue(entry == null || entry.value() == null, "DescribeConfigs shows " + PasswordEncoderKeys.SECRET_CONFIG);
            }
        }
    }

    @Test
    void aMirrorConfigDefiningConfigProvidersIsRefused() throws Exception {
        Map<String, String> config = saslConfig(PROVIDED_USER, "${mine:" + secretsFile + ":password}");
        config.put("config.providers", "mine");
        config.put("config.providers.mine.class", FileConfigProvider.class.getName());
        ClusterMirrorException e = refused("own-providers", config);
        assertTrue(e.getMessage().contains("'config.providers") && e.getMessage().contains(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG),
            e.getMessage());
    }

    @Test
    void aClassTypedConfigTheBrokersDoNotAllowIsRefused() throws Exception {
        Map<String, String> config = saslConfig(PROVIDED_USER, "${file:" + secretsFile + ":password}");
        config.put("sasl.login.callback.handler.class", "com.example.NotAllowedHandler");
        ClusterMirrorException e = refused("own-classes", config);
        assertTrue(e.getMessage().contains("'sasl.login.callback.handler.class'")
            && e.getMessage().contains(BrokerClientConfigs.ALLOWED_CLIENT_CLASSES_CONFIG), e.getMessage());
    }

    /** Refused by the client before anything is written: the password never reaches {@code __mirror_commands}. */
    @Test
    void withoutTheEncoderSecretAnInlinePasswordIsRefusedNamingBothFixes() throws Exception {
        Map<String, String> config = saslConfig(INLINE_USER, inlinePassword);
        CliRun created = CliRun.run(withoutSecret.bootstrapServers(), "--create", "--mirror", "inline",
            "--mirror-config", propertiesFile("refused.properties", config).toString());
        assertNoSecret(created.out() + created.err(), "the output of --create");
        assertEquals(1, created.exit(), created.err());
        assertEquals(1, created.err().trim().lines().count(), "one line: " + created.err());
        assertTrue(created.err().startsWith("INVALID_CONFIG: ") && created.err().contains("'sasl.jaas.config'")
            && created.err().contains(PasswordEncoderKeys.SECRET_CONFIG)
            && created.err().contains(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG), "names both fixes: " + created.err());
        try (ClusterMirrorAdmin mirrors = ClusterMirrorAdmin.create(withoutSecret.clientProperties())) {
            assertEquals(List.of(), mirrors.listClusterMirrors().names().get());
        }
        assertNoSecret(rawRecords(withoutSecret, InternalTopics.COMMANDS), "__mirror_commands");
    }

    /**
     * With ACLs off any client may write {@code __mirror_metadata}: one that replaces the published key with its own would
     * decrypt the next inline password from {@code __mirror_commands}. The tool asks the brokers themselves whether they
     * enforce ACLs, and refuses the password before anything is written, naming both fixes.
     */
    @Test
    void withAclsOffAnInlinePasswordIsRefusedEvenUnderAnAttackersKey() throws Exception {
        try (ClusterMirrorAdmin mirrors = ClusterMirrorAdmin.create(aclsOff.clientProperties())) {
            // Done once the controller has published its key: the attacker's comes after it.
            mirrors.createClusterMirror("plain", MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        }
        SealingKey attackers = PasswordEncoderKeys.derive(Keystores.newPassword(), Optional.empty()).sealingKey();
        Properties props = aclsOff.clientProperties();
        try (KafkaProducer<byte[], byte[]> attacker = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            attacker.send(new ProducerRecord<>(InternalTopics.METADATA, 0, RecordCodec.encodeKey(RecordCodec.SEALING_KEY),
                RecordCodec.encodeSealingKey(new SealingKeyRecord(attackers.id(), attackers.encoded())))).get();
        }

        CliRun created = CliRun.run(aclsOff.bootstrapServers(), "--create", "--mirror", "inline",
            "--mirror-config", propertiesFile("acls-off.properties", saslConfig(INLINE_USER, inlinePassword)).toString());
        assertNoSecret(created.out() + created.err(), "the output of --create");
        assertEquals(1, created.exit(), created.err());
        assertTrue(created.err().startsWith("INVALID_CONFIG: config 'sasl.jaas.config' holds a secret in clear, and destination "
            + "broker(s) " + aclsOff.brokerIds() + " run with ACLs off") && created.err().contains("authorizer.class.name="
            + MirrorAwareAuthorizer.class.getName()) && created.err().contains(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG),
            "names the cause and both fixes: " + created.err());
        String commands = rawRecords(aclsOff, InternalTopics.COMMANDS);
        assertFalse(commands.contains(attackers.id()), "a password was encrypted for the attacker's key");
        assertNoSecret(commands, "__mirror_commands");
    }

    private static ClusterMirrorException refused(String mirror, Map<String, String> config) throws Exception {
        ExecutionException e = assertThrows(ExecutionException.class, () -> clusters.mirrors.createClusterMirror(mirror, config).all().get());
        ClusterMirrorException cause = (ClusterMirrorException) e.getCause();
        assertEquals(MirrorError.INVALID_CONFIG, cause.error(), cause.getMessage());
        assertNoSecret(cause.getMessage(), "the error");
        assertFalse(clusters.mirrors.listClusterMirrors().names().get().contains(mirror), "no mirror was created");
        return cause;
    }

    /** Starts the topic and waits until it mirrors with no error; describe (API and tool) shows no password. */
    private static void mirrorAndCheck(String mirror, String topic) throws Exception {
        clusters.mirrors.startMirrorTopics(mirror, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, topic, 1);
        MirrorAssertions.assertIdenticalLogs(clusters.source, clusters.destination, topic, 1);
        TestUtils.waitFor(() -> {
            MirrorPartitionDescription d = MirrorAssertions.describe(clusters.mirrors, mirror, topic, 0);
            return d.state() == PartitionState.MIRRORING && d.lastError() == null;
        }, TIMEOUT, topic + " MIRRORING with no last error");
        assertNoSecret(clusters.mirrors.describeClusterMirrors(List.of(mirror)).all().get().toString(), "describeClusterMirrors");
        for (List<String> args : List.of(List.of("--describe", "--mirror", mirror), List.of("--describe", "--mirror", mirror, "--json"))) {
            CliRun described = CliRun.run(clusters.destination.bootstrapServers(), args.toArray(String[]::new));
            assertEquals(0, described.exit(), described.err());
            assertNoSecret(described.out() + described.err(), "the output of " + args);
        }
    }

    /** The internal topics' raw records, the log, and every file under the destination broker's log directory. */
    private static void assertNoSecretAnywhere() throws Exception {
        for (String topic : List.of(InternalTopics.COMMANDS, InternalTopics.METADATA, InternalTopics.STATE)) {
            assertNoSecret(rawRecords(clusters.destination, topic), topic);
        }
        assertNoSecret(String.join("\n", logs.lines()), "the log");
        for (int broker : clusters.destination.brokerIds()) {
            Path logDir = clusters.destination.partitionDir(broker, new TopicPartition(InternalTopics.COMMANDS, 0)).getParent();
            List<Path> files;
            try (Stream<Path> walk = Files.walk(logDir)) {
                files = walk.filter(Files::isRegularFile).toList();
            }
            assertTrue(files.stream().anyMatch(f -> f.toString().contains(InternalTopics.METADATA)), "the walk finds the segments");
            for (Path file : files) {
                assertNoSecret(readIfPresent(file), file.toString());
            }
        }
    }

    /** Every key and value of a topic up to its end, aborted transactions included, as text. */
    private static String rawRecords(MirrorTestCluster cluster, String topic) throws Exception {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        StringBuilder text = new StringBuilder();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            TestUtils.waitFor(() -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    text.append(r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8)).append('=')
                        .append(r.value() == null ? "" : new String(r.value(), StandardCharsets.UTF_8)).append('\n');
                }
                return partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
            }, TIMEOUT, "the records of " + topic + " up to their end");
        }
        return text.toString();
    }

    private static String readIfPresent(Path file) throws IOException {
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        } catch (java.nio.file.NoSuchFileException e) {
            return ""; // a segment deleted or renamed while walking
        }
    }

    /** Fails if {@code text} holds a secret of the test; never prints the text (it would print the secret). */
    private static void assertNoSecret(String text, String where) {
        if (Stream.of(providedPassword, inlinePassword, encoderSecret).anyMatch(text::contains)) {
            fail(where + " shows a password");
        }
    }

    private static void createSourceTopic(String topic) throws Exception {
        try (Admin admin = clusters.source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 1)));
        }
        Workloads.writeAllKinds(clusters.source.bootstrapServers(), topic, 1, 3);
    }

    private static Map<String, String> saslConfig(String user, String password) {
        Map<String, String> config = new HashMap<>();
        config.put("bootstrap.servers", clusters.source.bootstrapServers(SASL));
        config.put("security.protocol", "SASL_PLAINTEXT");
        config.put("sasl.mechanism", "PLAIN");
        config.put("sasl.jaas.config", PlainLoginModule.class.getName() + " required username=\"" + user + "\" password=\""
            + password + "\";");
        return config;
    }

    private static Path propertiesFile(String name, Map<String, String> config) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, config.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue().replace("\\", "\\\\"))
            .collect(Collectors.joining("\n", "", "\n")));
        return file;
    }
}
