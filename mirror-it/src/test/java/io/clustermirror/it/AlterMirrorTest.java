package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorError;
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
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.scram.ScramLoginModule;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Changing a running mirror's configs ({@code --alter}) while a producer writes to the source: its SCRAM password is
 * rotated (the mirror moves to the new credential, then the source removes the old one) and its
 * {@code bootstrap.servers} move to another listener of the source. The source has two SASL_SSL listeners with
 * SCRAM-SHA-256 and SCRAM-SHA-512, makes SASL connections authenticate again every few seconds (so a removed credential
 * stops working at once) and denies what no ACL allows.
 */
@MirrorClusterTest(topologies = "topologies")
class AlterMirrorTest {
    private static final Duration TIMEOUT = MirrorAssertions.TIMEOUT;
    private static final String ALPHA = "ALPHA";
    private static final String BETA = "BETA";
    private static final String USER = "mirror-rotating";
    private static final int REAUTHENTICATION_MS = 3_000;

    @TempDir
    static Path dir;
    private static LogCapture logs;
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;
    private static ClusterMirrorAdmin mirrors;
    private static Keystores.Store truststore;
    /** Every password of the test: none may show in describe, the tool's output or the logs. */
    private static final List<String> SECRETS = new CopyOnWriteArrayList<>();

    /**
     * A source with two SCRAM listeners over TLS (the mirror moves from one to the other) and enforced ACLs; a destination
     * with a password encoder secret. The log capture starts first, to see the clusters start too.
     */
    static ClusterPair.Topologies topologies() throws Exception {
        logs = LogCapture.start();
        Keystores.Store brokerKeystore = Keystores.keystore(dir, "alter-source-broker", "CN=localhost");
        truststore = Keystores.truststore(dir, "alter-truststore", brokerKeystore);
        String encoderSecret = Keystores.newPassword();
        SECRETS.addAll(List.of(encoderSecret, brokerKeystore.password(), truststore.password()));
        MirrorTestCluster.Builder sourceBuilder = MirrorTestCluster.builder().name("alter-source").brokers(1)
            .listener(ALPHA, SecurityProtocol.SASL_SSL)
            .listener(BETA, SecurityProtocol.SASL_SSL)
            .brokerConfig("authorizer.class.name", StandardAuthorizer.class.getName())
            .brokerConfig("allow.everyone.if.no.acl.found", false)
            .brokerConfig("super.users", "User:ANONYMOUS")
            .brokerConfig("ssl.keystore.type", "PKCS12")
            .brokerConfig("ssl.keystore.location", brokerKeystore.path())
            .brokerConfig("ssl.keystore.password", brokerKeystore.password());
        for (String listener : List.of("alpha", "beta")) {
            sourceBuilder.brokerConfig("listener.name." + listener + ".sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512");
            for (String mechanism : List.of("scram-sha-256", "scram-sha-512")) {
                String prefix = "listener.name." + listener + "." + mechanism + ".";
                sourceBuilder.brokerConfig(prefix + "sasl.jaas.config", ScramLoginModule.class.getName() + " required;")
                    .brokerConfig(prefix + "connections.max.reauth.ms", REAUTHENTICATION_MS);
            }
        }
        return ClusterPair.Topologies.of(sourceBuilder.topology(), MirrorTestCluster.builder().name("alter-destination").brokers(1)
            .brokerConfig(PasswordEncoderKeys.SECRET_CONFIG, encoderSecret).topology());
    }

    @BeforeAll
    static void grantTheMirror() throws Exception {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
        String topicsAndState = "alter-";
        grant(ResourceType.TOPIC, topicsAndState, PatternType.PREFIXED, AclOperation.READ, AclOperation.DESCRIBE_CONFIGS);
        grant(ResourceType.TOPIC, InternalTopics.METADATA, PatternType.LITERAL, AclOperation.READ);
        grant(ResourceType.TOPIC, InternalTopics.STATE, PatternType.LITERAL, AclOperation.READ);
    }

    @AfterAll
    static void stopCapturingLogs() {
        logs.close();
    }

    /**
     * Password rotation, then a listener move, while a producer writes: mirroring goes on through both without a
     * partition leaving MIRRORING (no preparation again, nothing truncated), the metadata sync works with the new
     * credential, and the destination ends offset- and byte-identical to the source.
     */
    @Test
    void rotatingThePasswordAndMovingToAnotherListenerKeepEveryPartitionMirroring() throws Exception {
        String mirror = "alter";
        String topic = "alter-orders";
        int partitions = 3;
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, partitions, (short) 1)));
        }
        String oldPassword = scram(ScramMechanism.SCRAM_SHA_512, Keystores.newPassword());
        Map<String, String> config = saslConfig(ALPHA, "SCRAM-SHA-512", oldPassword);
        config.put("mirror.groups.include", "");
        config.put("mirror.acl.include", "");
        config.put("mirror.metadata.refresh.interval.ms", "1000");
        mirrors.createClusterMirror(mirror, config).all().get();
        mirrors.startMirrorTopics(mirror, List.of(topic), List.of()).all().get();
        awaitMirroringWithoutError(mirror, topic, partitions);

        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicReference<Exception> producerFailure = new AtomicReference<>();
        Thread producer = new Thread(() -> produceUntilStopped(topic, partitions, producing, producerFailure), "alter-producer");
        producer.start();
        try {
            int linesBefore = logs.lines().size();
            awaitProgress(topic, partitions);

            // Rotation: the source takes a second credential, the mirror moves to it, then the source drops the first. The
            // encrypted values are bound to the SASL mechanism, so the truststore password is given again too.
            String newPassword = scram(ScramMechanism.SCRAM_SHA_256, Keystores.newPassword());
            mirrors.alterClusterMirrorConfigs(mirror, List.of(
                set("sasl.mechanism", "SCRAM-SHA-256"),
                set("sasl.jaas.config", jaas(newPassword)),
                set("ssl.truststore.password", truststore.password()),
                set("mirror.fetch.max.wait.ms", "200"))).all().get();
            awaitProgress(topic, partitions);
            try (Admin admin = source.admin()) {
                admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion(USER, ScramMechanism.SCRAM_SHA_512)))
                    .all().get();
            }
            // Past the reauthentication interval every connection with the old password would have been refused.
            long until = System.currentTimeMillis() + 2L * REAUTHENTICATION_MS;
            while (System.currentTimeMillis() < until) {
                awaitProgress(topic, partitions);
            }
            awaitMirroringWithoutError(mirror, topic, partitions);
            assertTheSyncReachesTheSource(topic, "3600000");

            // Listener move, with the tool: the secrets are given again (they are bound to bootstrap.servers), from a file.
            Path newListener = Files.writeString(dir.resolve("beta.properties"), "bootstrap.servers=" + source.bootstrapServers(BETA)
                + "\nsasl.jaas.config=" + jaas(newPassword) + "\nssl.truststore.password=" + truststore.password() + "\n");
            CliRun moved = CliRun.run(destination.bootstrapServers(), "--alter", "--mirror", mirror, "--add-config-file",
                newListener.toString(), "--delete-config", "mirror.fetch.max.wait.ms");
            assertNoSecret(moved.out() + moved.err(), "the output of --alter");
            assertEquals(0, moved.exit(), moved.err());
            assertEquals("Altered cluster mirror '" + mirror + "'; set bootstrap.servers, sasl.jaas.config, ssl.truststore.password; "
                + "deleted mirror.fetch.max.wait.ms.", moved.out().trim());
            awaitProgress(topic, partitions);
            assertTheSyncReachesTheSource(topic, "7200000");

            producing.set(false);
            producer.join(TIMEOUT.toMillis());
            if (producerFailure.get() != null) {
                throw producerFailure.get();
            }
            MirrorAssertions.awaitCaughtUp(source, destination, topic, partitions);
            MirrorAssertions.assertIdenticalLogs(source, destination, topic, partitions);
            MirrorAssertions.assertSameRecords(source, destination, topic, partitions);
            awaitMirroringWithoutError(mirror, topic, partitions);
            for (int p = 0; p < partitions; p++) {
                assertEquals(MirrorPartitionDescription.UNKNOWN, MirrorAssertions.describe(mirrors, mirror, topic, p).truncatedFromOffset(),
                    "nothing was truncated");
            }
            List<String> lines = logs.lines().subList(linesBefore, logs.lines().size());
            List<String> transitions = lines.stream().filter(l -> l.contains("Mirror '" + mirror + "' partition ") && l.contains(" -> "))
                .toList();
            assertEquals(List.of(), transitions, "no partition changed state while its mirror's configs changed");
            assertEquals(2, lines.stream().filter(l -> l.contains("Mirror '" + mirror + "': its configs changed; " + partitions
                + " fetching partition(s) continue on new source clients")).count(), "each alter moved the fetchers");
            Map<String, String> described = mirrors.describeClusterMirrors(List.of(mirror)).all().get().get(mirror).configs();
            assertEquals(source.bootstrapServers(BETA), described.get("bootstrap.servers"));
            assertEquals("[hidden]", described.get("sasl.jaas.config"), "describe masks the new secret as any other");
            assertNull(described.get("mirror.fetch.max.wait.ms"));
        } finally {
            producing.set(false);
            producer.join(TIMEOUT.toMillis());
        }
        assertNoSecret(mirrors.describeClusterMirrors(List.of(mirror)).all().get().toString(), "describeClusterMirrors");
        CliRun described = CliRun.run(destination.bootstrapServers(), "--describe", "--mirror", mirror);
        assertNoSecret(described.out() + described.err(), "the output of --describe");
        assertNoSecret(String.join("\n", logs.lines()), "the log");
    }

    /**
     * An unknown key, an invalid value, the deletion of bootstrap.servers, new bootstrap.servers without the secrets bound
     * to the old ones and a wrong password are each refused naming the cause, and the mirror keeps its configs.
     */
    @Test
    void aBadAlterNamesTheCauseAndChangesNothing() throws Exception {
        String mirror = "alter-refused";
        String password = scram(ScramMechanism.SCRAM_SHA_512, Keystores.newPassword());
        mirrors.createClusterMirror(mirror, saslConfig(ALPHA, "SCRAM-SHA-512", password)).all().get();
        Map<String, String> before = mirrors.describeClusterMirrors(List.of(mirror)).all().get().get(mirror).configs();

        assertRefused(mirror, List.of(set("mirror.fetch.max.byte", "1048576")), "unknown mirror config 'mirror.fetch.max.byte'");
        assertRefused(mirror, List.of(set("mirror.fetch.max.bytes", "0")), "invalid value 0 for 'mirror.fetch.max.bytes'");
        assertRefused(mirror, List.of(set("mirror.fetch.min.bytes", null)), "config 'mirror.fetch.min.bytes' is SET without a value");
        assertRefused(mirror, List.of(set("bootstrap.servers", source.bootstrapServers(BETA))),
            "[sasl.jaas.config, ssl.truststore.password] are encrypted for the mirror's current bootstrap.servers");
        // Nor replayed over another protocol, mechanism or truststore: the source would get the password in clear, or
        // over a connection that a server the attacker's truststore vouches for could take.
        assertRefused(mirror, List.of(set("security.protocol", "SASL_PLAINTEXT")),
            "[sasl.jaas.config, ssl.truststore.password] are encrypted for the mirror's current security.protocol");
        assertRefused(mirror, List.of(set("sasl.mechanism", "SCRAM-SHA-256")),
            "[sasl.jaas.config, ssl.truststore.password] are encrypted for the mirror's current sasl.mechanism");
        assertRefused(mirror, List.of(set("ssl.truststore.location", dir.resolve("attacker.p12").toString())),
            "[sasl.jaas.config, ssl.truststore.password] are encrypted for the mirror's current ssl.truststore.location");
        String wrong = Keystores.newPassword();
        SECRETS.add(wrong);
        ClusterMirrorException refused = assertRefused(mirror, List.of(set("sasl.jaas.config", jaas(wrong))), "");
        assertTrue(refused.getMessage().toLowerCase().contains("authentication"), "a wrong password is tried before it is stored: "
            + refused.error());
        assertNoSecret(refused.getMessage(), "the error");

        CliRun deleted = CliRun.run(destination.bootstrapServers(), "--alter", "--mirror", mirror, "--delete-config", "bootstrap.servers");
        assertEquals(1, deleted.exit());
        assertTrue(deleted.err().startsWith("INVALID_CONFIG: config 'bootstrap.servers' cannot be deleted"), deleted.err());

        assertEquals(before, mirrors.describeClusterMirrors(List.of(mirror)).all().get().get(mirror).configs(),
            "every refused alter left the configs as they were");
    }

    private static ClusterMirrorException assertRefused(String mirror, List<AlterConfigOp> ops, String cause) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> mirrors.alterClusterMirrorConfigs(mirror, ops).all().get());
        if (!(e.getCause() instanceof ClusterMirrorException refused)) {
            throw new AssertionError("expected a ClusterMirrorException", e.getCause());
        }
        if (!cause.isEmpty()) {
            assertEquals(MirrorError.INVALID_CONFIG, refused.error(), refused.getMessage());
            assertTrue(refused.getMessage().contains(cause), refused.getMessage());
        }
        return refused;
    }

    private static AlterConfigOp set(String key, String value) {
        return new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET);
    }

    /** Writes records to every partition until told to stop, paced so that the destination keeps up. */
    private static void produceUntilStopped(String topic, int partitions, AtomicBoolean producing, AtomicReference<Exception> failure) {
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of())) {
            for (int i = 0; producing.get(); i++) {
                producer.send(Workloads.record(topic, i % partitions, "alter", i));
                if (i % 50 == 49) {
                    producer.flush();
                    Thread.sleep(20); // pacing the load, not waiting for anything
                }
            }
        } catch (Exception e) {
            failure.set(e);
        }
    }

    /** Waits until the destination holds what the source holds now, on every partition: mirroring goes on. */
    private static void awaitProgress(String topic, int partitions) throws Exception {
        try (Admin src = source.admin(); Admin dst = destination.admin()) {
            for (int p = 0; p < partitions; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                long sourceEnd = MirrorAssertions.endOffset(src, tp);
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(dst, tp) >= sourceEnd, TIMEOUT,
                    "destination " + tp + " reaches source offset " + sourceEnd);
            }
        }
    }

    /**
     * The metadata sync reads the source with the mirror's current configs: a source topic config change arrives
     * (max.message.bytes, which deletes nothing, so the sync copies it at once).
     */
    private static void assertTheSyncReachesTheSource(String topic, String maxMessageBytes) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin src = source.admin(); Admin dst = destination.admin()) {
            src.incrementalAlterConfigs(Map.of(resource, List.of(set("max.message.bytes", maxMessageBytes)))).all().get();
            TestUtils.waitFor(() -> maxMessageBytes.equals(dst.describeConfigs(List.of(resource)).all().get().get(resource)
                .get("max.message.bytes").value()), TIMEOUT, "the metadata sync copies max.message.bytes=" + maxMessageBytes);
        }
    }

    private static void awaitMirroringWithoutError(String mirror, String topic, int partitions) throws InterruptedException {
        MirrorAssertions.awaitMirroringWithoutError(mirrors, mirror, topic, partitions);
    }

    private static void assertNoSecret(String text, String where) {
        MirrorAssertions.assertNoSecret(SECRETS, text, where);
    }

    /** Creates or changes the mirror user's credential of one mechanism on the source; returns the password. */
    private static String scram(ScramMechanism mechanism, String password) throws Exception {
        SECRETS.add(password);
        try (Admin admin = source.admin()) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(USER, new ScramCredentialInfo(mechanism, 4096),
                password))).all().get();
            TestUtils.waitFor(() -> admin.describeUserScramCredentials(List.of(USER)).all().get().get(USER).credentialInfos().stream()
                .anyMatch(info -> info.mechanism() == mechanism), TIMEOUT, "the " + mechanism + " credential on the source broker");
        }
        return password;
    }

    private static void grant(ResourceType type, String name, PatternType pattern, AclOperation... operations) throws Exception {
        SourceAcls.grant(source, "User:" + USER, type, name, pattern, operations);
    }

    private static String jaas(String password) {
        return ScramLoginModule.class.getName() + " required username=\"" + USER + "\" password=\"" + password + "\";";
    }

    private static Map<String, String> saslConfig(String listener, String mechanism, String password) {
        Map<String, String> config = new HashMap<>();
        config.put("bootstrap.servers", source.bootstrapServers(listener));
        config.put("security.protocol", "SASL_SSL");
        config.put("ssl.truststore.type", "PKCS12");
        config.put("ssl.truststore.location", truststore.path().toString());
        config.put("ssl.truststore.password", truststore.password());
        config.put("sasl.mechanism", mechanism);
        config.put("sasl.jaas.config", jaas(password));
        return config;
    }
}
