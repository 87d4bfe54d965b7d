package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImageReader;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import io.clustermirror.common.secrets.PasswordEncoderKeys;
import io.clustermirror.testsupport.Keystores;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.provider.FileConfigProvider;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.plain.PlainLoginModule;
import org.apache.kafka.common.security.scram.ScramLoginModule;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mirroring from a source that authenticates and authorizes its clients, each mirror with least privilege. The source
 * broker has, besides the kit's PLAINTEXT listener (its own traffic and this test's clients, as super user), one
 * listener per way to secure the link: one-way TLS, mutual TLS, SASL_SSL with SCRAM-SHA-512 and SASL_SSL with PLAIN.
 * Its StandardAuthorizer denies what no ACL allows, and each mirror's principal gets only the ACLs that docs/security.md's
 * "Securing the link" lists. Keys and certificates are made with keytool at start; every password is random, goes into
 * the mirror config as docs/security.md says, and must show nowhere: not in describe, the tool's output or the logs.
 */
@MirrorClusterTest(topologies = "topologies")
class SecureSourceTest {
    private static final Duration TIMEOUT = MirrorAssertions.TIMEOUT;
    /** How long a wrong password may take to show as a clear error. */
    private static final Duration ERROR_DEADLINE = Duration.ofSeconds(60);
    private static final String TLS = "TLS";
    private static final String MTLS = "MTLS";
    private static final String SCRAM = "SCRAM";
    private static final String PLAIN = "PLAIN";
    private static final String MTLS_PRINCIPAL = "User:CN=mirror-mtls";
    private static final String PLAIN_USER = "mirror-plain";
    /** Source SASL connections must authenticate again this often, so that a changed password takes effect. */
    private static final int REAUTHENTICATION_MS = 3_000;

    @TempDir
    static Path dir;
    private static LogCapture logs;
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;
    private static ClusterMirrorAdmin mirrors;
    /** Trusts the source broker's certificate. */
    private static Keystores.Store mirrorTruststore;
    /** The mirror's client certificate for mutual TLS. */
    private static Keystores.Store mirrorKeystore;
    private static String plainPassword;
    /** Every password of the test: none may show in describe, the tool's output or the logs. */
    private static final List<String> SECRETS = new CopyOnWriteArrayList<>();

    /**
     * A source with a listener per way the mirror may authenticate (TLS, mutual TLS, SCRAM and PLAIN over TLS) and enforced
     * ACLs; a destination with a password encoder secret and a file config provider. The log capture starts first, to see
     * the clusters start too.
     */
    static ClusterPair.Topologies topologies() throws Exception {
        logs = LogCapture.start();
        Keystores.Store brokerKeystore = Keystores.keystore(dir, "source-broker", "CN=localhost");
        mirrorKeystore = Keystores.keystore(dir, "mirror-mtls", "CN=mirror-mtls");
        Keystores.Store brokerTruststore = Keystores.truststore(dir, "source-truststore", mirrorKeystore);
        mirrorTruststore = Keystores.truststore(dir, "mirror-truststore", brokerKeystore);
        plainPassword = Keystores.newPassword();
        String encoderSecret = Keystores.newPassword();
        SECRETS.addAll(List.of(encoderSecret, brokerKeystore.password(), mirrorKeystore.password(), brokerTruststore.password(),
            mirrorTruststore.password(), plainPassword));
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("secure-source").brokers(1)
                .listener(TLS, SecurityProtocol.SSL)
                .listener(MTLS, SecurityProtocol.SSL)
                .listener(SCRAM, SecurityProtocol.SASL_SSL)
                .listener(PLAIN, SecurityProtocol.SASL_SSL)
                .brokerConfig("authorizer.class.name", StandardAuthorizer.class.getName())
                .brokerConfig("allow.everyone.if.no.acl.found", false)
                // The brokers' and the test's own PLAINTEXT connections.
                .brokerConfig("super.users", "User:ANONYMOUS")
                .brokerConfig("ssl.keystore.type", "PKCS12")
                .brokerConfig("ssl.keystore.location", brokerKeystore.path())
                .brokerConfig("ssl.keystore.password", brokerKeystore.password())
                .brokerConfig("listener.name.tls.principal.builder.class", TlsClientPrincipalBuilder.class.getName())
                .brokerConfig("listener.name.mtls.ssl.client.auth", "required")
                .brokerConfig("listener.name.mtls.ssl.truststore.type", "PKCS12")
                .brokerConfig("listener.name.mtls.ssl.truststore.location", brokerTruststore.path())
                .brokerConfig("listener.name.mtls.ssl.truststore.password", brokerTruststore.password())
                .brokerConfig("listener.name.scram.sasl.enabled.mechanisms", "SCRAM-SHA-512")
                .brokerConfig("listener.name.scram.scram-sha-512.sasl.jaas.config", ScramLoginModule.class.getName() + " required;")
                .brokerConfig("listener.name.scram.scram-sha-512.connections.max.reauth.ms", REAUTHENTICATION_MS)
                .brokerConfig("listener.name.plain.sasl.enabled.mechanisms", "PLAIN")
                .brokerConfig("listener.name.plain.plain.sasl.jaas.config", PlainLoginModule.class.getName()
                    + " required user_" + PLAIN_USER + "=\"" + plainPassword + "\";").topology(),
            MirrorTestCluster.builder().name("secure-destination").brokers(1)
                .brokerConfig(PasswordEncoderKeys.SECRET_CONFIG, encoderSecret)
                .brokerConfig(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG, "file")
                .brokerConfig(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG + ".file.class", FileConfigProvider.class.getName()).topology());
    }

    @BeforeAll
    static void nameTheClusters() {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
    }

    @AfterAll
    static void stopCapturingLogs() {
        logs.close();
    }

    @Test
    void mirrorsOverOneWayTls() throws Exception {
        String topic = "secure-tls";
        createSourceTopicWithAllKinds(topic, 2, Map.of());
        grantMirror(TlsClientPrincipalBuilder.PRINCIPAL.toString(), topic);
        mirrorAndCheck("tls", tlsConfig(TLS), topic, 2);
    }

    /** Mutual TLS, with the keystore's passwords in a file that the mirror config refers to (the brokers' ConfigProvider). */
    @Test
    void mirrorsOverMutualTls() throws Exception {
        String topic = "secure-mtls";
        createSourceTopicWithAllKinds(topic, 2, Map.of());
        grantMirror(MTLS_PRINCIPAL, topic);
        Path secretsFile = dir.resolve("mirror-secrets.properties");
        Files.writeString(secretsFile, "keystore.password=" + mirrorKeystore.password() + "\n");
        Map<String, String> config = tlsConfig(MTLS);
        config.put("ssl.keystore.type", "PKCS12");
        config.put("ssl.keystore.location", mirrorKeystore.path().toString());
        config.put("ssl.keystore.password", "${file:" + secretsFile + ":keystore.password}");
        config.put("ssl.key.password", "${file:" + secretsFile + ":keystore.password}");
        mirrorAndCheck("mtls", config, topic, 2);
    }

    /**
     * SCRAM, and the metadata sync with the least privilege it needs: the topic's configs (copied at start), a consumer
     * group's offsets (DESCRIBE on the group) and a source ACL (DESCRIBE on the cluster).
     */
    @Test
    void mirrorsOverSaslSslWithScramAndSyncsMetadata() throws Exception {
        String topic = "secure-scram";
        String user = "mirror-scram";
        String group = "secure-app";
        createSourceTopicWithAllKinds(topic, 2, Map.of("retention.ms", "86400000"));
        Map<TopicPartition, Long> committed = Map.of(new TopicPartition(topic, 0), 3L, new TopicPartition(topic, 1), 5L);
        AclBinding sourceAcl = new AclBinding(new ResourcePattern(ResourceType.GROUP, group, PatternType.LITERAL),
            new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
        try (Admin admin = source.admin()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            committed.forEach((tp, offset) -> offsets.put(tp, new OffsetAndMetadata(offset)));
            admin.alterConsumerGroupOffsets(group, offsets).all().get();
            admin.createAcls(List.of(sourceAcl)).all().get();
        }
        String password = scramUser(user, Keystores.newPassword());
        grantMirror("User:" + user, topic);
        grant("User:" + user, ResourceType.GROUP, group, PatternType.PREFIXED, AclOperation.DESCRIBE);
        grant("User:" + user, ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, AclOperation.DESCRIBE);
        Map<String, String> config = scramConfig(user, password);
        config.put("mirror.groups.include", group + ".*");
        config.put("mirror.acl.include", group);
        config.put("mirror.metadata.refresh.interval.ms", "1000");
        mirrorAndCheck("scram", config, topic, 2);

        try (Admin dst = destination.admin()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            assertEquals("86400000", dst.describeConfigs(List.of(resource)).all().get().get(resource).get("retention.ms").value(),
                "the source topic's retention.ms on the destination");
            TestUtils.waitFor(() -> {
                Map<TopicPartition, Long> now = new HashMap<>();
                dst.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                    .forEach((tp, om) -> now.put(tp, om == null ? -1 : om.offset()));
                return now.equals(committed);
            }, TIMEOUT, "the offsets of group " + group + " reach the destination");
            TestUtils.waitFor(() -> dst.describeAcls(AclBindingFilter.ANY).values().get().contains(sourceAcl), TIMEOUT,
                "the source ACL reaches the destination");
        }
    }

    @Test
    void mirrorsOverSaslSslWithPlain() throws Exception {
        String topic = "secure-plain";
        createSourceTopicWithAllKinds(topic, 2, Map.of());
        grantMirror("User:" + PLAIN_USER, topic);
        Map<String, String> config = saslConfig(PLAIN, "PLAIN", PlainLoginModule.class.getName(), PLAIN_USER, plainPassword);
        mirrorAndCheck("plain", config, topic, 2);

        // The integrity check reads the source itself, with the operator's client configs: the mirror's are sealed.
        CliRun unconfigured = CliRun.run(destination.bootstrapServers(), "--verify", "--mirror", "plain", "--topics", topic);
        assertEquals(1, unconfigured.exit(), unconfigured.out());
        assertTrue(unconfigured.err().startsWith("INVALID_CONFIG: cannot read the source cluster at ")
            && unconfigured.err().contains("--source-command-config"), unconfigured.err());
        Path sourceClient = writeProperties("verify-plain.properties", config);
        CliRun verified = CliRun.run(destination.bootstrapServers(), "--verify", "--mirror", "plain", "--topics", topic,
            "--source-command-config", sourceClient.toString());
        assertNoSecret(verified.out() + verified.err(), "the output of --verify");
        assertEquals(0, verified.exit(), verified.out() + verified.err());
        assertTrue(verified.out().contains("2 of 2 partition(s) identical."), verified.out());
    }

    /**
     * Principals that may not read the source's own {@code __mirror_*} topics: one that sees them (DESCRIBE on every
     * topic, as auto-discovery setups grant) and one that does not. Each mirror starts and mirrors as if the source had no
     * mirror state, and says why in a WARN line naming the missing permission, each time it reads that state.
     */
    @Test
    void withoutReadOnTheSourcesMirrorTopicsTheMirrorAssumesNoMirrorStateAndSaysWhy() throws Exception {
        giveTheSourceMirrorState();
        for (String user : List.of("mirror-sees-state", "mirror-blind")) {
            String topic = "secure-" + user;
            createSourceTopicWithAllKinds(topic, 1, Map.of());
            String password = scramUser(user, Keystores.newPassword());
            grant("User:" + user, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.READ, AclOperation.DESCRIBE_CONFIGS);
            if (user.equals("mirror-sees-state")) {
                grant("User:" + user, ResourceType.TOPIC, "*", PatternType.LITERAL, AclOperation.DESCRIBE);
            }
            int before = logs.lines().size();
            mirrorAndCheck(user, scramConfig(user, password), topic, 1);
            // One from the start command (loop and failback checks), one from preparing the partition.
            List<String> lines = logs.lines();
            List<String> warnings = lines.subList(before, lines.size()).stream()
                .filter(l -> l.startsWith("WARN " + MirrorImageReader.class.getName() + " ")
                    && l.contains("READ on " + InternalTopics.METADATA + " and " + InternalTopics.STATE)).toList();
            assertTrue(warnings.size() >= 2, user + ": a WARN line names the missing READ on the source's mirror topics each time "
                + "they are read: " + warnings);
        }
    }

    /**
     * A mirror principal that may describe a topic but not read it: every fetch is refused, so its partition fails, retries
     * as often as {@code mirror.partition.retries} allows, and then waits. Once READ is granted it still waits (no automatic
     * retry is left) until {@code --recover}, after which it mirrors the topic in full.
     */
    @Test
    void aPartitionThatUsedUpItsRetriesWaitsForRecoverAndThenMirrors() throws Exception {
        String user = "mirror-recovers";
        String topic = "secure-recover";
        createSourceTopicWithAllKinds(topic, 1, Map.of());
        String password = scramUser(user, Keystores.newPassword());
        grant("User:" + user, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS);
        grant("User:" + user, ResourceType.TOPIC, InternalTopics.METADATA, PatternType.LITERAL, AclOperation.READ);
        grant("User:" + user, ResourceType.TOPIC, InternalTopics.STATE, PatternType.LITERAL, AclOperation.READ);
        Map<String, String> config = scramConfig(user, password);
        config.put(MirrorConfig.PARTITION_RETRIES, "2");
        config.put(MirrorConfig.PARTITION_RETRY_BACKOFF_MS, "200");
        config.put(MirrorConfig.PARTITION_RETRY_BACKOFF_MAX_MS, "400");
        mirrors.createClusterMirror(user, config).all().get();
        mirrors.startMirrorTopics(user, List.of(topic), List.of()).all().get();

        TestUtils.waitFor(() -> {
            MirrorPartitionDescription p = MirrorAssertions.describe(mirrors, user, topic, 0);
            return p.state() == PartitionState.FAILED && p.nextRetryMs() == MirrorPartitionDescription.UNKNOWN;
        }, TIMEOUT, "the partition to use up its retries");
        MirrorPartitionDescription failed = MirrorAssertions.describe(mirrors, user, topic, 0);
        assertEquals(3, failed.failedAttempts(), "the first attempt and two retries: " + failed);
        assertTrue(failed.recoverable() && failed.lastError().contains("--recover"), failed.lastError());
        CliRun described = CliRun.run(destination.bootstrapServers(), "--describe", "--mirror", user);
        assertTrue(described.out().contains("3 attempts, --recover"), described.out());

        grant("User:" + user, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.READ);
        // Ten times the longest backoff: a retry left would have run by then.
        long until = System.currentTimeMillis() + 4_000;
        while (System.currentTimeMillis() < until) {
            assertEquals(failed, MirrorAssertions.describe(mirrors, user, topic, 0), "no automatic retry after the last one");
        }

        CliRun recovered = CliRun.run(destination.bootstrapServers(), "--recover", "--mirror", user, "--topics", topic);
        assertEquals(0, recovered.exit(), recovered.err());
        assertTrue(recovered.out().contains("Recovering the FAILED partitions of 1 topic of mirror '" + user + "': " + topic),
            recovered.out());
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic, 1);
        awaitMirroringWithoutError(user, topic, 1);

        CliRun again = CliRun.run(destination.bootstrapServers(), "--recover", "--mirror", user, "--topics", topic);
        assertNotEquals(0, again.exit());
        assertTrue(again.err().contains("MIRROR_TOPIC_NOT_FAILED"), again.err());
    }

    /** Without DESCRIBE_CONFIGS on a topic, starting it fails naming the missing permission. */
    @Test
    void startWithoutDescribeConfigsNamesTheMissingPermission() throws Exception {
        String topic = "secure-no-configs";
        String user = "mirror-no-configs";
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 1)));
        }
        String password = scramUser(user, Keystores.newPassword());
        grant("User:" + user, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.READ);
        mirrors.createClusterMirror("no-configs", scramConfig(user, password)).all().get();
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> mirrors.startMirrorTopics("no-configs", List.of(topic), List.of()).all().get());
        assertNoSecret(e.toString(), "the error");
        assertTrue(e.getCause().getMessage().contains("not authorized") && e.getCause().getMessage().contains("DESCRIBE_CONFIGS"),
            e.getCause().getMessage());
    }

    /**
     * A mirror config without TLS pointed at a TLS listener: Kafka's clients would read the listener's TLS alert as a
     * response of about 350 MB and allocate it in the destination broker. {@code --create} fails at once instead, in one
     * line that names TLS and the fix.
     */
    @Test
    void createWithAPlaintextConfigAtATlsListenerFailsNamingTls() throws Exception {
        Path file = dir.resolve("plaintext-at-tls.properties");
        Files.writeString(file, "bootstrap.servers=" + source.bootstrapServers(TLS) + "\n");
        CliRun created = CliRun.run(destination.bootstrapServers(), "--create", "--mirror", "plaintext-at-tls", "--mirror-config",
            file.toString());
        assertEquals(1, created.exit(), "--create fails: " + created.err());
        assertEquals(1, created.err().trim().lines().count(), "one line: " + created.err());
        assertTrue(created.err().startsWith("INVALID_CONFIG") && created.err().contains("answers with TLS")
            && created.err().contains("security.protocol=SSL"), "the error names TLS and the fix: " + created.err());
        assertFalse(mirrors.listClusterMirrors().names().get().contains("plaintext-at-tls"), "no mirror was created");
    }

    /** {@code --create} with a wrong SCRAM password fails at once, in one line that names authentication. */
    @Test
    void createWithAWrongScramPasswordFailsNamingAuthentication() throws Exception {
        String user = "mirror-wrong";
        scramUser(user, Keystores.newPassword());
        String wrong = Keystores.newPassword();
        SECRETS.add(wrong);
        Path file = writeProperties("wrong-password.properties", scramConfig(user, wrong));

        long startNs = System.nanoTime();
        CliRun created = CliRun.run(destination.bootstrapServers(), "--create", "--mirror", "wrong", "--mirror-config", file.toString());
        Duration took = Duration.ofNanos(System.nanoTime() - startNs);
        assertNoSecret(created.out() + created.err(), "the output of --create");
        assertEquals(1, created.exit(), "--create with a wrong password fails: " + created.err());
        assertEquals(1, created.err().trim().lines().count(), "one line: " + created.err());
        assertTrue(created.err().toLowerCase().contains("authentication") && created.err().contains("credentials"),
            "the error names authentication: " + created.err());
        assertTrue(took.compareTo(ERROR_DEADLINE) < 0, "--create took " + took);
        assertFalse(mirrors.listClusterMirrors().names().get().contains("wrong"), "no mirror was created");
    }

    /**
     * The source changes the mirror principal's password and the mirror keeps the old one: within a minute describe shows
     * a last error naming authentication (no silent stall), and once the source takes the old password back the
     * partition mirrors again by itself, without truncating anything, and the metadata sync works again.
     */
    @Test
    void aPasswordChangedOnTheSourceShowsAsAnAuthenticationErrorUntilItIsBack() throws Exception {
        String topic = "secure-rotated";
        String user = "mirror-rotated";
        createSourceTopicWithAllKinds(topic, 1, Map.of());
        String password = scramUser(user, Keystores.newPassword());
        grantMirror("User:" + user, topic);
        Map<String, String> config = scramConfig(user, password);
        config.put("mirror.metadata.refresh.interval.ms", "1000");
        mirrorAndCheck("rotated", config, topic, 1);

        scramUser(user, Keystores.newPassword());
        long startNs = System.nanoTime();
        TestUtils.waitFor(() -> {
            String error = MirrorAssertions.describe(mirrors, "rotated", topic, 0).lastError();
            return error != null && error.toLowerCase().contains("authentication");
        }, ERROR_DEADLINE, "describe shows a last error naming authentication");
        Duration took = Duration.ofNanos(System.nanoTime() - startNs);
        MirrorPartitionDescription failed = MirrorAssertions.describe(mirrors, "rotated", topic, 0);
        assertNoSecret(failed.toString(), "describe");
        assertTrue(took.compareTo(ERROR_DEADLINE) < 0, "the error took " + took);

        scramUser(user, password);
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of())) {
            producer.send(new ProducerRecord<>(topic, 0, Workloads.bytes("after"), Workloads.bytes("the password is back"))).get();
        }
        awaitMirroringWithoutError("rotated", topic, 1);
        MirrorAssertions.awaitCaughtUp(source, destination, topic, 1);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic, 1);
        assertEquals(MirrorPartitionDescription.UNKNOWN, MirrorAssertions.describe(mirrors, "rotated", topic, 0).truncatedFromOffset(),
            "nothing was truncated");
        // The metadata sync, which failed to authenticate too, works again: a changed source config reaches the destination.
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin src = source.admin(); Admin dst = destination.admin()) {
            src.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry("max.message.bytes", "7200000"),
                AlterConfigOp.OpType.SET)))).all().get();
            TestUtils.waitFor(() -> "7200000".equals(dst.describeConfigs(List.of(resource)).all().get().get(resource).get("max.message.bytes").value()),
                TIMEOUT, "the metadata sync copies a source config change after the password is back");
        }
        assertNoSecret(String.join("\n", logs.lines()), "the log");
    }

    // ---- helpers ----

    /**
     * Creates the mirror, starts the topic, and checks what every mirror from a secure source must give: identical logs
     * and records, every partition MIRRORING with no error, and no password in describe (API and tool) or the logs.
     */
    private static void mirrorAndCheck(String mirror, Map<String, String> config, String topic, int partitions) throws Exception {
        mirrors.createClusterMirror(mirror, config).all().get();
        mirrors.startMirrorTopics(mirror, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(source, destination, topic, partitions);
        MirrorAssertions.assertIdenticalLogs(source, destination, topic, partitions);
        MirrorAssertions.assertSameRecords(source, destination, topic, partitions);
        awaitMirroringWithoutError(mirror, topic, partitions);

        assertNoSecret(mirrors.describeClusterMirrors(List.of(mirror)).all().get().toString(), "describeClusterMirrors");
        for (List<String> args : List.of(List.of("--describe", "--mirror", mirror), List.of("--describe", "--mirror", mirror, "--json"))) {
            CliRun described = CliRun.run(destination.bootstrapServers(), args.toArray(String[]::new));
            assertNoSecret(described.out() + described.err(), "the output of " + args);
            assertEquals(0, described.exit(), described.err());
            assertTrue(described.out().contains(topic) && described.out().contains("MIRRORING"), described.out());
        }
        assertNoSecret(String.join("\n", logs.lines()), "the log");
    }

    private static void awaitMirroringWithoutError(String mirror, String topic, int partitions) throws InterruptedException {
        MirrorAssertions.awaitMirroringWithoutError(mirrors, mirror, topic, partitions);
    }

    private static void assertNoSecret(String text, String where) {
        MirrorAssertions.assertNoSecret(SECRETS, text, where);
    }

    private static void createSourceTopicWithAllKinds(String topic, int partitions, Map<String, String> configs) throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, partitions, (short) 1).configs(configs)));
        }
        Workloads.writeAllKinds(source.bootstrapServers(), topic, partitions, 3);
    }

    /** Creates or changes a SCRAM-SHA-512 credential on the source; returns the password. */
    private static String scramUser(String user, String password) throws Exception {
        SECRETS.add(password);
        try (Admin admin = source.admin()) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(user,
                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password))).all().get();
            TestUtils.waitFor(() -> admin.describeUserScramCredentials(List.of(user)).all().get().containsKey(user), TIMEOUT,
                "the credential of " + user + " on the source broker");
        }
        return password;
    }

    /**
     * What docs/security.md lists for every mirror: READ (which implies DESCRIBE) and DESCRIBE_CONFIGS on the topics it copies,
     * and READ on the source's own mirror topics (loop and failback detection).
     */
    private static void grantMirror(String principal, String topic) throws Exception {
        grant(principal, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.READ, AclOperation.DESCRIBE_CONFIGS);
        grant(principal, ResourceType.TOPIC, InternalTopics.METADATA, PatternType.LITERAL, AclOperation.READ);
        grant(principal, ResourceType.TOPIC, InternalTopics.STATE, PatternType.LITERAL, AclOperation.READ);
    }

    private static void grant(String principal, ResourceType type, String name, PatternType pattern, AclOperation... operations)
            throws Exception {
        SourceAcls.grant(source, principal, type, name, pattern, operations);
    }

    /**
     * Gives the source cluster its own {@code __mirror_metadata} and {@code __mirror_state}, each with one record (a
     * tombstone of a mirror it never had), as a cluster that runs Cluster Mirror itself has: reading them takes a fetch.
     */
    private static void giveTheSourceMirrorState() throws Exception {
        try (Admin admin = source.admin();
             KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of())) {
            Workloads.createTopics(admin, List.of(
                new NewTopic(InternalTopics.METADATA, 1, (short) 1).configs(Map.of("cleanup.policy", "compact")),
                new NewTopic(InternalTopics.STATE, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))));
            producer.send(new ProducerRecord<>(InternalTopics.METADATA, Workloads.bytes("mirror:never-here"), null)).get();
            producer.send(new ProducerRecord<>(InternalTopics.STATE, Workloads.bytes("never-here/none/0"), null)).get();
        }
    }

    private static Map<String, String> tlsConfig(String listener) {
        Map<String, String> config = MirrorAssertions.mirrorConfig(source);
        config.put("bootstrap.servers", source.bootstrapServers(listener));
        config.put("security.protocol", "SSL");
        config.put("ssl.truststore.type", "PKCS12");
        config.put("ssl.truststore.location", mirrorTruststore.path().toString());
        config.put("ssl.truststore.password", mirrorTruststore.password());
        return config;
    }

    private static Map<String, String> saslConfig(String listener, String mechanism, String loginModule, String user, String password) {
        Map<String, String> config = tlsConfig(listener);
        config.put("security.protocol", "SASL_SSL");
        config.put("sasl.mechanism", mechanism);
        config.put("sasl.jaas.config", loginModule + " required username=\"" + user + "\" password=\"" + password + "\";");
        return config;
    }

    /** A client properties file in the test's directory, as an operator would write it. */
    private static Path writeProperties(String name, Map<String, String> config) throws IOException {
        StringBuilder properties = new StringBuilder();
        config.forEach((k, v) -> properties.append(k).append('=').append(v.replace("\\", "\\\\")).append('\n'));
        return Files.writeString(dir.resolve(name), properties.toString());
    }

    private static Map<String, String> scramConfig(String user, String password) {
        return saslConfig(SCRAM, "SCRAM-SHA-512", ScramLoginModule.class.getName(), user, password);
    }
}
