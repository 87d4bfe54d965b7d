package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.testsupport.Keystores;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.plain.PlainLoginModule;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Mirror commands are authorized like Kafka's admin API, and only the extension writes the controller's outputs, on a
 * destination that authenticates its clients (SASL_PLAINTEXT with PLAIN) and enforces ACLs (nothing is allowed without
 * one). The brokers talk to each other, and the extension's local clients ({@code cluster.mirror.local.*}) to the
 * cluster, on that SASL listener as {@value #BROKER}, a super user; the kit's PLAINTEXT listener (the controller's
 * traffic and this test's set-up, as {@code User:ANONYMOUS}) is a super user too. The principals under test:
 * <ul>
 *   <li>{@value #TOPIC_USER} may do anything to every {@code __mirror_*} topic, the controller's transactional id and
 *       group, and the mirror topic, but nothing on the cluster;</li>
 *   <li>{@value #OPERATOR} has ALTER on the cluster, and nothing else;</li>
 *   <li>{@value #VIEWER} has DESCRIBE on the cluster, and nothing else.</li>
 * </ul>
 */
@MirrorClusterTest(topologies = "topologies")
class ControlPlaneAuthorizationTest {
    private static final Duration TIMEOUT = MirrorAssertions.TIMEOUT;
    private static final String SASL = "SASL";
    private static final String BROKER = "User:broker";
    private static final String TOPIC_USER = "User:alice";
    private static final String OPERATOR = "User:operator";
    private static final String VIEWER = "User:viewer";
    private static final String MIRROR = "dr";
    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 2;
    private static final Map<String, String> PASSWORDS = new HashMap<>();

    @TempDir
    static Path dir;
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;
    /** The destination's administrator (a super user). */
    private static ClusterMirrorAdmin admin;

    /**
     * A destination whose brokers talk on an authenticated listener and enforce ACLs; every principal under test gets a
     * new password.
     */
    static ClusterPair.Topologies topologies() {
        for (String principal : List.of(BROKER, TOPIC_USER, OPERATOR, VIEWER)) {
            PASSWORDS.put(principal, Keystores.newPassword());
        }
        // The listener's own login (for the brokers' connections to it) and every user's password.
        String listenerLogin = credentials(BROKER) + PASSWORDS.entrySet().stream()
            .map(e -> " user_" + name(e.getKey()) + "=\"" + e.getValue() + "\"").collect(Collectors.joining());
        return ClusterPair.Topologies.of(MirrorTestCluster.builder().name("authz-source").topology(),
            MirrorTestCluster.builder().name("authz-destination")
                .listener(SASL, SecurityProtocol.SASL_PLAINTEXT)
                .brokerConfig("inter.broker.listener.name", SASL)
                .brokerConfig("sasl.mechanism.inter.broker.protocol", "PLAIN")
                .brokerConfig("listener.name.sasl.sasl.enabled.mechanisms", "PLAIN")
                .brokerConfig("listener.name.sasl.plain.sasl.jaas.config", plainLogin(listenerLogin))
                .brokerConfig("cluster.mirror.local.security.protocol", SecurityProtocol.SASL_PLAINTEXT.name)
                .brokerConfig("cluster.mirror.local.sasl.mechanism", "PLAIN")
                .brokerConfig("cluster.mirror.local.sasl.jaas.config", plainLogin(credentials(BROKER)))
                .brokerConfig("super.users", "User:ANONYMOUS;" + BROKER)
                .brokerConfig("allow.everyone.if.no.acl.found", false).topology());
    }

    @BeforeAll
    static void grantTheUsersAndMirror() throws Exception {
        source = clusters.source;
        destination = clusters.destination;
        admin = clusters.mirrors;
        try (Admin dst = destination.admin()) {
            List<AclBinding> acls = List.of(
                allow(TOPIC_USER, ResourceType.TOPIC, "__mirror_", PatternType.PREFIXED, AclOperation.ALL),
                allow(TOPIC_USER, ResourceType.TOPIC, TOPIC, PatternType.LITERAL, AclOperation.ALL),
                allow(TOPIC_USER, ResourceType.TRANSACTIONAL_ID, InternalTopics.CONTROLLER_TRANSACTIONAL_ID, PatternType.LITERAL,
                    AclOperation.ALL),
                allow(TOPIC_USER, ResourceType.GROUP, InternalTopics.CONTROLLER_GROUP, PatternType.LITERAL, AclOperation.ALL),
                allow(OPERATOR, ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, AclOperation.ALTER),
                allow(VIEWER, ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, AclOperation.DESCRIBE));
            dst.createAcls(acls).all().get();
            // DescribeAcls answers from the broker's authorizer: once it lists them, the broker enforces them.
            TestUtils.waitFor(() -> dst.describeAcls(AclBindingFilter.ANY).values().get().containsAll(acls), TIMEOUT,
                "the ACLs to reach the destination broker");
        }
        try (Admin src = source.admin()) {
            Workloads.createTopics(src, List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1)));
        }
        Workloads.writeToEveryPartition(source.bootstrapServers(), TOPIC, PARTITIONS, "before", 5);
        admin.createClusterMirror(MIRROR, MirrorAssertions.mirrorConfig(source)).all().get();
        admin.startMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
        MirrorAssertions.awaitState(admin, MIRROR, TOPIC, PARTITIONS, PartitionState.MIRRORING);
    }

    /**
     * Topic ACLs on the control plane grant no command and no read of it: each fails with CLUSTER_AUTHORIZATION_FAILED,
     * in the API and the tool, and nothing reaches the command log.
     */
    @Test
    void topicAclsRunNoCommand() throws Exception {
        Map<String, Object> before = observableState();
        long commandLogEnd = endOffset(InternalTopics.COMMANDS);
        try (ClusterMirrorAdmin alice = ClusterMirrorAdmin.create(saslClient(TOPIC_USER))) {
            assertClusterAuthorizationFailed(alice.createClusterMirror("alice", MirrorAssertions.mirrorConfig(source)).all());
            assertClusterAuthorizationFailed(alice.stopMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all());
            assertClusterAuthorizationFailed(alice.pauseMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all());
            assertClusterAuthorizationFailed(alice.alterClusterMirrorConfigs(MIRROR, List.of(new AlterConfigOp(
                new ConfigEntry("mirror.fetch.max.wait.ms", "100"), AlterConfigOp.OpType.SET))).all());
            assertClusterAuthorizationFailed(alice.deleteClusterMirror(MIRROR).all());
            assertClusterAuthorizationFailed(alice.listClusterMirrors().names());
            assertClusterAuthorizationFailed(alice.describeClusterMirrors(List.of(MIRROR)).all());
        }
        Path aliceConfig = dir.resolve("alice.properties");
        try (Writer writer = Files.newBufferedWriter(aliceConfig)) {
            saslClient(TOPIC_USER).store(writer, null);
        }
        CliRun stop = CliRun.run(destination.bootstrapServers(SASL), "--command-config", aliceConfig.toString(), "--stop",
            "--mirror", MIRROR, "--topics", TOPIC);
        assertTrue(stop.exit() != 0 && stop.err().startsWith("CLUSTER_AUTHORIZATION_FAILED: mirror commands need Alter on the "
            + "cluster resource"), stop.toString());
        assertEquals(commandLogEnd, endOffset(InternalTopics.COMMANDS), "a refused command is not written");
        assertEquals(before, observableState());
    }

    /**
     * Writes, tombstones, record deletions, config changes and deletion of the controller's topics are refused, to the
     * principal with every ACL on them and to the viewer, who may see them (DESCRIBE on the cluster), so that its
     * requests reach the write checks themselves. The producers are not idempotent: the Produce itself is refused.
     */
    /** The destination's own ACLs on ordinary topics apply as usual: granted writes succeed, others are refused. */
    @Test
    void ordinaryTopicsKeepTheirAcls() throws Exception {
        String ordinary = "local-orders";
        try (Admin dst = destination.admin()) {
            Workloads.createTopics(dst, List.of(new NewTopic(ordinary, 1, (short) 1)));
            AclBinding write = allow(TOPIC_USER, ResourceType.TOPIC, ordinary, PatternType.LITERAL, AclOperation.WRITE);
            dst.createAcls(List.of(write)).all().get();
            TestUtils.waitFor(() -> dst.describeAcls(AclBindingFilter.ANY).values().get().contains(write), TIMEOUT,
                "the ACL to reach the destination broker");
        }
        try (KafkaProducer<byte[], byte[]> alice = new KafkaProducer<>(saslClient(TOPIC_USER), new ByteArraySerializer(),
                new ByteArraySerializer());
             KafkaProducer<byte[], byte[]> viewer = new KafkaProducer<>(plainProducer(VIEWER), new ByteArraySerializer(),
                new ByteArraySerializer())) {
            assertEquals(0L, alice.send(new ProducerRecord<>(ordinary, 0, null, Workloads.bytes("granted"))).get().offset());
            assertRefused(TopicAuthorizationException.class, "a write without an ACL to an ordinary topic",
                () -> viewer.send(new ProducerRecord<>(ordinary, 0, null, Workloads.bytes("refused"))).get());
        }
    }

    @Test
    void onlyTheExtensionWritesTheControllersTopics() throws Exception {
        Map<String, Object> before = observableState();
        long metadataEnd = endOffset(InternalTopics.METADATA);
        byte[] topicKey = RecordCodec.encodeKey(RecordCodec.topicKey(TOPIC));
        for (String principal : List.of(TOPIC_USER, VIEWER)) {
            Properties producerConfigs = saslClient(principal);
            producerConfigs.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerConfigs, new ByteArraySerializer(),
                    new ByteArraySerializer())) {
                assertRefused(TopicAuthorizationException.class, principal + ": a tombstone of " + TOPIC + " in " + InternalTopics.METADATA,
                    () -> producer.send(new ProducerRecord<>(InternalTopics.METADATA, 0, topicKey, null)).get());
                assertRefused(TopicAuthorizationException.class, principal + ": a record in " + InternalTopics.STATE,
                    () -> producer.send(new ProducerRecord<>(InternalTopics.STATE, 0, topicKey, Workloads.bytes("forged"))).get());
            }
            try (Admin client = Admin.create(saslClient(principal))) {
                TopicPartition metadata = new TopicPartition(InternalTopics.METADATA, 0);
                assertRefused(TopicAuthorizationException.class, principal + ": deleting records of " + InternalTopics.METADATA,
                    () -> client.deleteRecords(Map.of(metadata, RecordsToDelete.beforeOffset(metadataEnd))).all().get());
                ConfigResource state = new ConfigResource(ConfigResource.Type.TOPIC, InternalTopics.STATE);
                assertRefused(TopicAuthorizationException.class, principal + ": changing the cleanup policy of " + InternalTopics.STATE,
                    () -> client.incrementalAlterConfigs(Map.of(state, List.of(new AlterConfigOp(
                        new ConfigEntry("cleanup.policy", "delete"), AlterConfigOp.OpType.SET)))).all().get());
                assertRefused(TopicAuthorizationException.class, principal + ": deleting " + InternalTopics.STATE,
                    () -> client.deleteTopics(List.of(InternalTopics.STATE)).all().get());
            }
        }
        // The mirror topic stays read-only, also for a principal whose ACLs allow writing it.
        try (KafkaProducer<byte[], byte[]> alice = new KafkaProducer<>(saslClient(TOPIC_USER), new ByteArraySerializer(),
                new ByteArraySerializer())) {
            assertRefused(TopicAuthorizationException.class, "a write to the mirror topic",
                () -> alice.send(new ProducerRecord<>(TOPIC, 0, null, Workloads.bytes("local"))).get());
        }
        assertEquals(metadataEnd, endOffset(InternalTopics.METADATA), "nothing was appended to " + InternalTopics.METADATA);
        assertEquals(before, observableState());
    }

    /**
     * The controller's transactional id and group are the extension's: using them fences nothing, and commands go on.
     * The viewer may find their coordinators (DESCRIBE on the cluster), so its requests reach InitProducerId and
     * OffsetCommit themselves.
     */
    @Test
    void theControllersIdentityCannotBeTaken() throws Exception {
        for (String principal : List.of(TOPIC_USER, VIEWER)) {
            Properties transactional = saslClient(principal);
            transactional.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, InternalTopics.CONTROLLER_TRANSACTIONAL_ID);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(transactional, new ByteArraySerializer(),
                    new ByteArraySerializer())) {
                assertRefused(TransactionalIdAuthorizationException.class,
                    principal + ": InitProducerId with the controller's transactional id", producer::initTransactions);
            }
            try (Admin client = Admin.create(saslClient(principal))) {
                assertRefused(GroupAuthorizationException.class, principal + ": committing to the controller's group",
                    () -> client.alterConsumerGroupOffsets(InternalTopics.CONTROLLER_GROUP,
                        Map.of(new TopicPartition(InternalTopics.COMMANDS, 0), new OffsetAndMetadata(0))).all().get());
                assertRefused(GroupAuthorizationException.class, principal + ": deleting the controller's group",
                    () -> client.deleteConsumerGroups(List.of(InternalTopics.CONTROLLER_GROUP)).all().get());
            }
        }
        Properties grouped = saslClient(TOPIC_USER);
        grouped.put(ConsumerConfig.GROUP_ID_CONFIG, InternalTopics.CONTROLLER_GROUP);
        try (KafkaConsumer<byte[], byte[]> alice = new KafkaConsumer<>(grouped, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            alice.subscribe(List.of(TOPIC));
            assertRefused(GroupAuthorizationException.class, "joining the controller's group", () -> alice.poll(TIMEOUT));
        }
        try (ClusterMirrorAdmin operator = ClusterMirrorAdmin.create(saslClient(OPERATOR))) {
            operator.pauseMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
            MirrorAssertions.awaitState(admin, MIRROR, TOPIC, PARTITIONS, PartitionState.PAUSED);
            operator.resumeMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all().get();
            MirrorAssertions.awaitState(admin, MIRROR, TOPIC, PARTITIONS, PartitionState.MIRRORING);
        }
    }

    /** ALTER on the cluster runs every command; DESCRIBE on the cluster lists and describes, and runs nothing. */
    @Test
    void alterOnTheClusterRunsCommandsAndDescribeReads() throws Exception {
        String probe = "operator-probe";
        try (ClusterMirrorAdmin operator = ClusterMirrorAdmin.create(saslClient(OPERATOR));
             ClusterMirrorAdmin viewer = ClusterMirrorAdmin.create(saslClient(VIEWER))) {
            assertTrue(viewer.listClusterMirrors().names().get().contains(MIRROR));
            assertEquals(List.of(TOPIC), viewer.describeClusterMirrors(List.of(MIRROR)).all().get().get(MIRROR).topics().stream()
                .map(MirrorTopicDescription::topic).toList());
            assertClusterAuthorizationFailed(viewer.createClusterMirror(probe, MirrorAssertions.mirrorConfig(source)).all());
            assertClusterAuthorizationFailed(viewer.stopMirrorTopics(MIRROR, List.of(TOPIC), List.of()).all());
            List<AlterConfigOp> tuning = List.of(new AlterConfigOp(new ConfigEntry("mirror.fetch.max.wait.ms", "100"),
                AlterConfigOp.OpType.SET));
            assertClusterAuthorizationFailed(viewer.alterClusterMirrorConfigs(MIRROR, tuning).all());

            operator.createClusterMirror(probe, MirrorAssertions.mirrorConfig(source)).all().get();
            operator.alterClusterMirrorConfigs(probe, tuning).all().get();
            assertEquals("100", viewer.describeClusterMirrors(List.of(probe)).all().get().get(probe).configs()
                .get("mirror.fetch.max.wait.ms"));
            assertTrue(operator.listClusterMirrors().names().get().contains(probe));
            operator.deleteClusterMirror(probe).all().get();
            assertFalse(viewer.listClusterMirrors().names().get().contains(probe));
        }
    }

    /**
     * Kafka's authorizer log names the principal of every command: the Produce to the command log as ALTER on the cluster
     * at DEBUG when allowed; a principal refused DESCRIBE on the cluster at INFO on its first request (the command
     * topic's description).
     */
    @Test
    void theAuthorizerLogNamesWhoIssuedEachCommand() throws Exception {
        String probe = "audited-probe";
        try (LogCapture audit = LogCapture.logger("kafka.authorizer.logger", Level.DEBUG);
             ClusterMirrorAdmin alice = ClusterMirrorAdmin.create(saslClient(TOPIC_USER));
             ClusterMirrorAdmin operator = ClusterMirrorAdmin.create(saslClient(OPERATOR))) {
            assertClusterAuthorizationFailed(alice.createClusterMirror(probe, MirrorAssertions.mirrorConfig(source)).all());
            operator.createClusterMirror(probe, MirrorAssertions.mirrorConfig(source)).all().get();
            operator.deleteClusterMirror(probe).all().get();
            String onCluster = " from host = 127.0.0.1 on resource = Cluster:LITERAL:kafka-cluster for request = ";
            assertLogged(audit, "INFO kafka.authorizer.logger Principal = " + TOPIC_USER + " is Denied operation = DESCRIBE"
                + onCluster);
            assertLogged(audit, "DEBUG kafka.authorizer.logger Principal = " + OPERATOR + " is Allowed operation = ALTER"
                + onCluster + "Produce");
        }
    }

    private static void assertLogged(LogCapture capture, String prefix) {
        assertTrue(capture.lines().stream().anyMatch(line -> line.startsWith(prefix)),
            "no line starting with '" + prefix + "' among " + capture.lines().stream().filter(l -> l.contains("Cluster:")).toList());
    }

    private static void assertClusterAuthorizationFailed(KafkaFuture<?> future) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> future.get());
        if (!(e.getCause() instanceof ClusterMirrorException mirror) || mirror.error() != MirrorError.CLUSTER_AUTHORIZATION_FAILED) {
            fail("expected CLUSTER_AUTHORIZATION_FAILED, got " + e.getCause(), e.getCause());
        }
    }

    /** The call fails with {@code expected}, thrown or as the cause of what was thrown. */
    private static void assertRefused(Class<? extends Exception> expected, String what, Executable call) {
        Throwable thrown = assertThrows(Exception.class, call, what);
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (expected.isInstance(t)) {
                return;
            }
        }
        fail(what + ": expected " + expected.getSimpleName() + ", got " + thrown, thrown);
    }

    /** What clients can see of the mirrors: each mirror's topics with their desired state and partition states. */
    private static Map<String, Object> observableState() throws Exception {
        Map<String, Object> state = new TreeMap<>();
        List<String> names = admin.listClusterMirrors().names().get();
        for (ClusterMirrorDescription mirror : admin.describeClusterMirrors(names).all().get().values()) {
            for (MirrorTopicDescription topic : mirror.topics()) {
                state.put(mirror.name() + "/" + topic.topic(), topic.desiredState() + " " + topic.partitions().stream()
                    .map(p -> p.partition() + "=" + p.state()).toList());
            }
            state.putIfAbsent(mirror.name(), "no topics");
        }
        return state;
    }

    private static long endOffset(String internalTopic) throws Exception {
        try (Admin dst = destination.admin()) {
            return MirrorAssertions.endOffset(dst, new TopicPartition(internalTopic, 0));
        }
    }

    private static Properties saslClient(String principal) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, destination.bootstrapServers(SASL));
        props.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, SecurityProtocol.SASL_PLAINTEXT.name);
        props.put("sasl.mechanism", "PLAIN");
        props.put("sasl.jaas.config", plainLogin(credentials(principal)));
        return props;
    }

    /** A non-idempotent producer: its writes reach the topic's authorization without asking for a producer id. */
    private static Properties plainProducer(String principal) {
        Properties props = saslClient(principal);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        props.put(ProducerConfig.ACKS_CONFIG, "1");
        return props;
    }

    private static String plainLogin(String options) {
        return PlainLoginModule.class.getName() + " required " + options + ";";
    }

    /** The login options of {@code principal} ({@code User:<name>}). */
    private static String credentials(String principal) {
        return "username=\"" + name(principal) + "\" password=\"" + PASSWORDS.get(principal) + "\"";
    }

    private static String name(String principal) {
        return principal.substring("User:".length());
    }

    private static AclBinding allow(String principal, ResourceType type, String name, PatternType patternType, AclOperation op) {
        return new AclBinding(new ResourcePattern(type, name, patternType),
            new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW));
    }
}
