package io.clustermirror.broker.controller;

import io.clustermirror.broker.controller.FakeClusters.FakeDestination;
import io.clustermirror.broker.controller.FakeClusters.FakeSource;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.LastCommand;
import io.clustermirror.common.records.FailureRetries;
import io.clustermirror.common.records.MirrorAclRecord;
import io.clustermirror.common.records.MirrorCommand;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.clustermirror.broker.controller.FakeClusters.emptyTopic;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CommandProcessorTest {
    private static final Map<String, String> CONFIGS = Map.of("bootstrap.servers", "source:9092");

    /** A destination topic whose partitions hold records from offset 0 to the given end offsets. */
    private static DestinationCluster.Topic topicWithEnds(long... endOffsets) {
        return new DestinationCluster.Topic(java.util.Arrays.stream(endOffsets).mapToObj(end -> new DestinationCluster.Log(0, end)).toList());
    }

    private final FakeSource source = new FakeSource();
    private final FakeDestination destination = new FakeDestination();
    private final CommandProcessor processor = new CommandProcessor(source, destination, "destination-cluster-id");
    private MirrorImage image = MirrorImage.EMPTY;

    private CommandOutcome run(CommandOp op, String mirror, Map<String, String> configs, List<String> topics, List<String> excludes) {
        return apply(new MirrorCommand("id-" + op, op, mirror, configs, topics, excludes, 1L));
    }

    /** Processes a command and applies its outcome to {@link #image}, as the controller does once it is committed. */
    private CommandOutcome apply(MirrorCommand command) {
        CommandOutcome outcome = processor.process(image, command, 1L);
        MirrorDelta delta = new MirrorDelta(image);
        outcome.metadataWrites().forEach(w -> delta.replayMetadata(RecordCodec.encodeKey(w.key()), w.value()));
        outcome.stateTombstones().forEach(k -> delta.replayState(RecordCodec.encodeKey(k), null));
        image = delta.apply();
        return outcome;
    }

    private CommandOutcome run(CommandOp op, String mirror, String... topics) {
        return run(op, mirror, Map.of(), List.of(topics), List.of());
    }

    private static void assertFailed(CommandOutcome outcome, MirrorError error, String messagePart) {
        assertEquals(error, outcome.result().error(), outcome.result().message());
        assertTrue(outcome.result().message().contains(messagePart), outcome.result().message());
        assertTrue(outcome.metadataWrites().isEmpty(), "a failed command writes nothing");
        assertTrue(outcome.stateTombstones().isEmpty(), "a failed command deletes nothing");
    }

    @Test
    void anIncompleteCommandOrOneThatHitsABugFailsWithoutThrowing() {
        assertFailed(run(null, "dr"), MirrorError.INVALID_REQUEST, "names no operation");
        assertFailed(run(CommandOp.STOP, null, "orders"), MirrorError.INVALID_REQUEST, "names no mirror");
        assertFailed(run(CommandOp.STOP, " ", "orders"), MirrorError.INVALID_REQUEST, "names no mirror");
        createMirror();
        source.topics.put("orders", new SourceTopic("orders", "id-orders", 2, Map.of()));
        destination.failWith = new IllegalStateException("a bug");
        assertFailed(run(CommandOp.START, "dr", "orders"), MirrorError.UNKNOWN_SERVER_ERROR, "IllegalStateException");
        destination.failWith = null;
        assertEquals(MirrorError.NONE, run(CommandOp.START, "dr", "orders").result().error(), "the next command is applied");
    }

    private void createMirror() {
        assertEquals(MirrorError.NONE, run(CommandOp.CREATE, "dr", CONFIGS, List.of(), List.of()).result().error());
    }

    @Test
    void createRecordsConfigsAndSourceClusterId() {
        createMirror();
        assertEquals("source-cluster-id", image.mirror("dr").orElseThrow().sourceClusterId());
        assertEquals(CONFIGS, image.mirror("dr").orElseThrow().configs());
    }

    @Test
    void createRejectsDuplicatesBadConfigsAndUnreachableSources() {
        createMirror();
        assertFailed(run(CommandOp.CREATE, "dr", CONFIGS, List.of(), List.of()), MirrorError.CLUSTER_MIRROR_ALREADY_EXISTS, "'dr'");
        assertFailed(run(CommandOp.CREATE, "x", Map.of(), List.of(), List.of()), MirrorError.INVALID_CONFIG, "bootstrap.servers");
        assertFailed(run(CommandOp.CREATE, "x", Map.of("bootstrap.servers", "s:1", "mirror.nope", "1"), List.of(), List.of()),
            MirrorError.INVALID_CONFIG, "mirror.nope");
        source.reachable = false;
        assertFailed(run(CommandOp.CREATE, "x", CONFIGS, List.of(), List.of()), MirrorError.SOURCE_CLUSTER_UNREACHABLE, "down");
    }

    private CommandOutcome alter(String mirror, Map<String, String> set, String... deleted) {
        return apply(new MirrorCommand("id-alter", CommandOp.ALTER, mirror, set, List.of(), List.of(), 1L, false, List.of(deleted)));
    }

    @Test
    void alterChangesOnlyTheMirrorsConfigs() {
        assertEquals(MirrorError.NONE, apply(new MirrorCommand("c", CommandOp.CREATE, "dr", Map.of("bootstrap.servers", "source:9092",
            "mirror.fetch.min.bytes", "1000"), List.of(), List.of(), 0L)).result().error());
        source.topics.put("orders", new SourceTopic("orders", "id-orders", 2, Map.of()));
        run(CommandOp.START, "dr", "orders");
        MirrorTopicRecord orders = image.topic("orders").orElseThrow();
        io.clustermirror.common.records.MirrorRecord before = image.mirror("dr").orElseThrow();
        CommandOutcome outcome = alter("dr", Map.of("bootstrap.servers", "source-b:9093", "mirror.fetch.max.wait.ms", "200"),
            "mirror.fetch.min.bytes");
        assertEquals(MirrorError.NONE, outcome.result().error(), outcome.result().message());
        assertEquals("altered mirror 'dr'; set bootstrap.servers, mirror.fetch.max.wait.ms; deleted mirror.fetch.min.bytes",
            outcome.result().message());
        assertEquals(Map.of("bootstrap.servers", "source-b:9093", "mirror.fetch.max.wait.ms", "200"),
            image.mirror("dr").orElseThrow().configs());
        assertEquals("source-cluster-id", image.mirror("dr").orElseThrow().sourceClusterId());
        assertEquals(before.createdMs(), image.mirror("dr").orElseThrow().createdMs(), "still the same mirror");
        assertEquals(orders, image.topic("orders").orElseThrow(), "no topic changes state");
        assertEquals(1, outcome.metadataWrites().size(), "only the mirror record is written");
    }

    @Test
    void alterRefusesBadInputNamingTheCauseAndChangesNothing() {
        createMirror();
        assertFailed(alter("dr", Map.of("mirror.fetch.max.byte", "1")), MirrorError.INVALID_CONFIG, "unknown mirror config 'mirror.fetch.max.byte'");
        assertFailed(alter("dr", Map.of("sasl.mechanizm", "PLAIN")), MirrorError.INVALID_CONFIG, "unknown config 'sasl.mechanizm'");
        assertFailed(alter("dr", Map.of("mirror.fetch.max.bytes", "-1")), MirrorError.INVALID_CONFIG, "'mirror.fetch.max.bytes'");
        assertFailed(alter("dr", Map.of(), "bootstrap.servers"), MirrorError.INVALID_CONFIG, "'bootstrap.servers' cannot be deleted");
        assertFailed(alter("dr", Map.of(), "mirror.fetch.min.bytes"), MirrorError.INVALID_CONFIG, "'mirror.fetch.min.bytes' is not set");
        assertFailed(alter("dr", Map.of("mirror.fetch.min.bytes", "1"), "mirror.fetch.min.bytes"), MirrorError.INVALID_CONFIG,
            "both set and deleted");
        assertFailed(alter("dr", Map.of()), MirrorError.INVALID_REQUEST, "nothing to alter");
        assertFailed(alter("nope", Map.of("mirror.fetch.min.bytes", "1")), MirrorError.UNKNOWN_CLUSTER_MIRROR, "'nope'");
        source.otherClusters.put("elsewhere:9092", "other-cluster-id");
        assertFailed(alter("dr", Map.of("bootstrap.servers", "elsewhere:9092")), MirrorError.INVALID_CONFIG,
            "reaches cluster other-cluster-id, not the source of mirror 'dr' (source-cluster-id)");
        source.reachable = false;
        assertFailed(alter("dr", Map.of("security.protocol", "SSL")), MirrorError.SOURCE_CLUSTER_UNREACHABLE, "down");
        assertEquals(CONFIGS, image.mirror("dr").orElseThrow().configs(), "every refused alter left the configs as they were");
        assertEquals(MirrorError.NONE, alter("dr", Map.of("mirror.fetch.min.bytes", "1")).result().error(),
            "a change of mirror.* settings alone does not need the source");
    }

    @Test
    void newBootstrapServersNeedTheSealedSecretsGivenAgain() {
        String sealed = "sealed:v1:key:payload";
        assertEquals(MirrorError.NONE, run(CommandOp.CREATE, "dr", Map.of("bootstrap.servers", "source:9092",
            "ssl.key.password", sealed), List.of(), List.of()).result().error());
        assertFailed(alter("dr", Map.of("bootstrap.servers", "source-b:9093")), MirrorError.INVALID_CONFIG,
            "[ssl.key.password] are encrypted for the mirror's current bootstrap.servers");
        assertEquals(MirrorError.NONE, alter("dr", Map.of("bootstrap.servers", "source-b:9093",
            "ssl.key.password", "sealed:v1:key:other")).result().error());
    }

    /** A sealed secret is bound to the protocol, mechanism and truststore too: it is not carried over to new ones. */
    @Test
    void aNewProtocolMechanismOrTruststoreNeedsTheSealedSecretsGivenAgain() {
        String sealed = "sealed:v2:key:payload";
        assertEquals(MirrorError.NONE, run(CommandOp.CREATE, "dr", Map.of("bootstrap.servers", "source:9092",
            "security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config", sealed), List.of(), List.of())
            .result().error());
        for (Map<String, String> change : List.of(Map.of("security.protocol", "SASL_PLAINTEXT"), Map.of("sasl.mechanism", "PLAIN"),
                Map.of("ssl.truststore.location", "/tmp/other.p12"), Map.of("ssl.endpoint.identification.algorithm", ""))) {
            String key = change.keySet().iterator().next();
            assertFailed(alter("dr", change), MirrorError.INVALID_CONFIG,
                "[sasl.jaas.config] are encrypted for the mirror's current " + key + " and are not used with other values");
        }
        Map<String, String> withSecret = new HashMap<>(Map.of("ssl.truststore.location", "/etc/mirror/other.p12"));
        withSecret.put("sasl.jaas.config", "sealed:v2:key:other");
        assertEquals(MirrorError.NONE, alter("dr", withSecret).result().error());
    }

    @Test
    void startCreatesMissingTopicsWithTheSourcePartitionCountAndRecordsTheSourceTopicId() {
        createMirror();
        source.topics.put("orders", new SourceTopic("orders", "id-orders", 6, Map.of("retention.ms", "1000", "min.insync.replicas", "2")));
        source.topics.put("payments", new SourceTopic("payments", "id-pay", 3, Map.of()));
        source.topics.put("__internal", new SourceTopic("__internal", "id-int", 1, Map.of()));
        CommandOutcome outcome = run(CommandOp.START, "dr", ".*");
        assertEquals(MirrorError.NONE, outcome.result().error(), outcome.result().message());
        assertEquals(List.of("orders", "payments"), outcome.result().topics(), "default exclude __.* applies");
        assertEquals(List.of("orders", "payments"), destination.created);
        assertEquals(1, destination.describeCalls, "one look at the destination for all the topics");
        assertEquals(1, destination.createCalls, "one creation for all the topics");
        MirrorTopicRecord orders = image.topic("orders").orElseThrow();
        assertEquals("id-orders", orders.sourceTopicId());
        assertEquals(6, orders.partitions());
        assertEquals(DesiredState.MIRRORING, orders.desired());
    }

    @Test
    void startRefusesWhatItMustNotTouchAndChangesNothing() {
        createMirror();
        assertFailed(run(CommandOp.START, "nope", "a"), MirrorError.UNKNOWN_CLUSTER_MIRROR, "no mirror named 'nope'");
        assertFailed(run(CommandOp.START, "dr", "missing.*"), MirrorError.UNKNOWN_TOPIC_OR_PARTITION, "missing.*");
        source.topics.put("a", new SourceTopic("a", "id-a", 2, Map.of()));
        source.topics.put("b", new SourceTopic("b", "id-b", 2, Map.of()));
        destination.topics.put("a", emptyTopic(3));
        assertFailed(run(CommandOp.START, "dr", "a"), MirrorError.INVALID_PARTITIONS, "3 partitions");
        destination.topics.put("a", topicWithEnds(5, 5));
        assertFailed(run(CommandOp.START, "dr", "a", "b"), MirrorError.TOPIC_ALREADY_EXISTS, "holds data");
        assertTrue(destination.created.isEmpty(), "no topic created when validation fails");
        destination.topics.remove("a");
        destination.failCreateOf = "b";
        assertFailed(run(CommandOp.START, "dr", "a", "b"), MirrorError.UNKNOWN_SERVER_ERROR, "cannot create b");
        assertFalse(destination.topics.containsKey("a"), "a failed start leaves no topic behind");
        assertTrue(image.topic("a").isEmpty(), "nor a mirror topic");
    }

    @Test
    void aTopicBelongsToOneMirrorOnly() {
        createMirror();
        run(CommandOp.CREATE, "other", CONFIGS, List.of(), List.of());
        source.topics.put("a", new SourceTopic("a", "id-a", 1, Map.of()));
        assertEquals(MirrorError.NONE, run(CommandOp.START, "dr", "a").result().error());
        assertFailed(run(CommandOp.START, "other", "a"), MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR, "mirror 'dr'");
    }

    @Test
    void pauseResumeAndStopFollowTheDesiredStateRules() {
        createMirror();
        source.topics.put("a", new SourceTopic("a", "id-a", 1, Map.of()));
        run(CommandOp.START, "dr", "a");
        assertFailed(run(CommandOp.RESUME, "dr", "a"), MirrorError.MIRROR_TOPIC_NOT_PAUSED, "'a'");
        assertEquals(MirrorError.NONE, run(CommandOp.PAUSE, "dr", "a").result().error());
        assertEquals(DesiredState.PAUSED, image.topic("a").orElseThrow().desired());
        assertFailed(run(CommandOp.PAUSE, "dr", "a"), MirrorError.MIRROR_TOPIC_NOT_MIRRORING, "'a'");
        assertEquals(MirrorError.NONE, run(CommandOp.RESUME, "dr", "a").result().error());
        assertEquals(MirrorError.NONE, run(CommandOp.STOP, "dr", "a").result().error());
        assertEquals(DesiredState.STOPPED, image.topic("a").orElseThrow().desired());
        assertFailed(run(CommandOp.STOP, "dr", "a"), MirrorError.MIRROR_TOPIC_NOT_MIRRORING, "already STOPPED");
        assertFailed(run(CommandOp.STOP, "dr", "zzz"), MirrorError.TOPIC_NOT_IN_CLUSTER_MIRROR, "zzz");
    }

    @Test
    void aConsistentStopRecordsItsCutsByPartitionAndTheNextStartForgetsThem() {
        createMirror();
        source.topics.put("a", new SourceTopic("a", "id-a", 3, Map.of()));
        run(CommandOp.START, "dr", "a");
        MirrorCommand consistent = new MirrorCommand("c-1", CommandOp.STOP, "dr", Map.of(), List.of("a"), List.of(), 1L, false, List.of(),
            List.of(), List.of(new MirrorCommand.PartitionCut("a", 0, 40L, Map.of("app", 31L, "etl", 12L)), new MirrorCommand.PartitionCut("a", 2, 7L),
                new MirrorCommand.PartitionCut("other", 1, 9L, Map.of("app", 3L))));

        CommandOutcome outcome = apply(consistent);

        assertEquals(MirrorError.NONE, outcome.result().error());
        assertTrue(outcome.result().message().contains("at a consistent cut"), outcome.result().message());
        MirrorTopicRecord stopped = image.topic("a").orElseThrow();
        assertEquals(List.of(40L, -1L, 7L), stopped.stopCuts(), "partition 1 was not analysed: its last stable offset");
        assertEquals(7L, stopped.stopCutOf(2));
        assertEquals(-1L, stopped.stopCutOf(5));
        assertEquals(Map.of("app", 31L, "etl", 12L), stopped.stopGroupOffsetsOf(0), "the offsets of groups that commit in transactions");
        assertEquals(Map.of(), stopped.stopGroupOffsetsOf(2));
        CommandOutcome restarted = apply(new MirrorCommand("c-2", CommandOp.START, "dr", Map.of(), List.of("a"), List.of(), 2L, true));
        assertEquals(MirrorError.NONE, restarted.result().error(), restarted.result().message());
        assertEquals(List.of(), image.topic("a").orElseThrow().stopCuts(), "a later stop is a plain one unless it asks");
        assertEquals(List.of(), image.topic("a").orElseThrow().stopGroupOffsets());
    }

    /** Records partition {@code partition} of {@code topic} in mirror 'dr' as FAILED, with the given retries. */
    private void recordFailed(String topic, int partition, FailureRetries retries, String error) {
        MirrorDelta delta = new MirrorDelta(image);
        PartitionStateRecord record = new PartitionStateRecord("dr", topic, partition, PartitionState.FAILED, 0, 1, "id-" + topic, 9, 0,
            List.of(), 10, 10, error, -1, -1, -1, 1L, null, null, null, retries);
        delta.replayState(RecordCodec.encodeKey(record.logKey()), RecordCodec.encodeState(record));
        image = delta.apply();
    }

    @Test
    void recoverRetriesTheFailedPartitionsOfTheSelectedTopicsAndRefusesWhereNoRetryCanHelp() {
        createMirror();
        source.topics.put("a", new SourceTopic("a", "id-a", 2, Map.of()));
        source.topics.put("b", new SourceTopic("b", "id-b", 1, Map.of()));
        run(CommandOp.START, "dr", "a", "b");
        assertFailed(run(CommandOp.RECOVER, "dr", "a", "b"), MirrorError.MIRROR_TOPIC_NOT_FAILED, "nothing to recover");

        recordFailed("b", 0, new FailureRetries(1, FailureRetries.NONE, false), "SOURCE_TOPIC_DELETED: gone");
        assertFailed(run(CommandOp.RECOVER, "dr", "b"), MirrorError.MIRROR_TOPIC_NOT_RECOVERABLE, "b-0 (SOURCE_TOPIC_DELETED: gone)");
        assertTrue(image.topic("b").orElseThrow().recoveryCommandId() == null);

        recordFailed("a", 1, new FailureRetries(11, FailureRetries.NONE, true), "UNKNOWN_SERVER_ERROR: refused");
        CommandOutcome recovered = run(CommandOp.RECOVER, "dr", ".*");
        assertEquals(MirrorError.NONE, recovered.result().error(), recovered.result().message());
        assertEquals(List.of("a"), recovered.result().topics(), "only topics with a partition to recover");
        assertTrue(recovered.result().message().contains("recovering 1 FAILED partition(s) of 1 topic(s)")
            && recovered.result().message().contains("no retry can help b-0"), recovered.result().message());
        assertEquals("id-" + CommandOp.RECOVER, image.topic("a").orElseThrow().recoveryCommandId());
        assertEquals(CommandOp.RECOVER, image.topic("a").orElseThrow().lastCommand().op());
        assertEquals(DesiredState.MIRRORING, image.topic("a").orElseThrow().desired(), "nothing else changes");

        recordFailed("a", 0, null, "UNKNOWN_SERVER_ERROR: recorded by an older leader");
        assertEquals(MirrorError.NONE, run(CommandOp.RECOVER, "dr", "a").result().error(),
            "a failure recorded without its retries may be recovered");
    }

    @Test
    void deleteOnlyWhenEveryTopicHasStopped() {
        createMirror();
        source.topics.put("a", new SourceTopic("a", "id-a", 1, Map.of()));
        run(CommandOp.START, "dr", "a");
        assertFailed(run(CommandOp.DELETE, "dr"), MirrorError.CLUSTER_MIRROR_NOT_EMPTY, "a");
        run(CommandOp.STOP, "dr", "a");
        MirrorDelta delta = new MirrorDelta(image);
        MirrorAclRecord acl = MirrorAclRecord.of("dr", new AclBinding(new ResourcePattern(ResourceType.TOPIC, "a", PatternType.LITERAL),
            new AccessControlEntry("User:x", "*", AclOperation.READ, AclPermissionType.ALLOW)), 1L);
        delta.replayState(RecordCodec.encodeKey(acl.key()), RecordCodec.encodeAcl(acl));
        PartitionStateRecord stopping = new PartitionStateRecord("dr", "a", 0, PartitionState.STOPPING, 0, 1, "id-a",
            5, 0, List.of(), 6, 6, null, -1, -1, -1, 1L);
        delta.replayState(RecordCodec.encodeKey(stopping.logKey()), RecordCodec.encodeState(stopping));
        image = delta.apply();
        assertFailed(run(CommandOp.DELETE, "dr"), MirrorError.CLUSTER_MIRROR_NOT_EMPTY, "a-0");
        delta = new MirrorDelta(image);
        // A new leader (epoch 1) finished the stop; the record of the old leader's epoch is still there.
        PartitionStateRecord stopped = new PartitionStateRecord("dr", "a", 0, PartitionState.STOPPED, 1, 2, "id-a",
            5, 0, List.of(), 6, 6, null, 6, -1, -1, 2L);
        delta.replayState(RecordCodec.encodeKey(stopped.logKey()), RecordCodec.encodeState(stopped));
        image = delta.apply();
        CommandOutcome deleted = run(CommandOp.DELETE, "dr");
        assertEquals(MirrorError.NONE, deleted.result().error(), deleted.result().message());
        assertTrue(image.mirror("dr").isEmpty());
        assertTrue(image.topic("a").isEmpty());
        assertTrue(image.partitionStates().isEmpty(), "state records of the mirror are tombstoned");
        assertEquals(List.of(), image.stateLogKeysOf(stopped.key()), "under every leader epoch's log key");
        assertTrue(image.mirrorAcls().isEmpty(), "the mirror's record of the ACLs it created is tombstoned");
        createMirror(); // the name can be reused
    }

    /**
     * With the default exclude ({@code __.*}) cleared, a source topic named {@code __audit} is mirrored like any; the
     * cluster's own topics (Kafka's and the names reserved for the extension) never are: a pattern passes them over, a
     * command that names one is refused.
     */
    @Test
    void aTopicNamedWithTwoUnderscoresIsMirroredWhenTheFiltersLetItButTheClustersOwnTopicsNever() {
        run(CommandOp.CREATE, "dr", Map.of("bootstrap.servers", "s:1", "mirror.topics.exclude", ""), List.of(), List.of());
        source.topics.put("__audit", new SourceTopic("__audit", "id-audit", 1, Map.of()));
        source.topics.put("__mirror_state", new SourceTopic("__mirror_state", "id-state", 10, Map.of()));
        source.topics.put("__consumer_offsets", new SourceTopic("__consumer_offsets", "id-offsets", 50, Map.of()));
        assertFailed(run(CommandOp.START, "dr", "__mirror_state"), MirrorError.INVALID_REQUEST, "never mirrored");
        assertFailed(run(CommandOp.START, "dr", "__consumer_offsets"), MirrorError.INVALID_REQUEST, "never mirrored");
        CommandOutcome outcome = run(CommandOp.START, "dr", "__.*");
        assertEquals(MirrorError.NONE, outcome.result().error(), outcome.result().message());
        assertEquals(List.of("__audit"), outcome.result().topics());
        assertEquals(List.of("__audit"), destination.created);
    }

    @Test
    void startNeverCopiesExcludedTopicConfigs() {
        run(CommandOp.CREATE, "dr", Map.of("bootstrap.servers", "s:1", "mirror.topic.properties.exclude", "segment\\..*"), List.of(), List.of());
        source.topics.put("a", new SourceTopic("a", "id-a", 1, Map.of("retention.ms", "1", "segment.ms", "2", "min.insync.replicas", "2")));
        assertEquals(MirrorError.NONE, run(CommandOp.START, "dr", "a").result().error());
        assertEquals(Map.of("retention.ms", "1"), destination.createdConfigs.get("a"));
    }

    @Test
    void addPartitionsGrowsTheDestinationToTheSourceCountAndRecordsIt() {
        createMirror();
        source.topics.put("a", new SourceTopic("a", "id-a", 3, Map.of()));
        run(CommandOp.START, "dr", "a");
        CommandOutcome same = run(CommandOp.ADD_PARTITIONS, "dr", "a");
        assertEquals(MirrorError.NONE, same.result().error());
        assertTrue(same.metadataWrites().isEmpty(), "nothing to do when the counts agree");
        source.topics.put("a", new SourceTopic("a", "id-a", 6, Map.of()));
        CommandOutcome grown = run(CommandOp.ADD_PARTITIONS, "dr", "a");
        assertEquals(MirrorError.NONE, grown.result().error(), grown.result().message());
        assertTrue(grown.result().message().contains("a 3 -> 6"), grown.result().message());
        assertEquals(List.of("a=6"), destination.grown);
        assertEquals(6, image.topic("a").orElseThrow().partitions());
        assertEquals(DesiredState.MIRRORING, image.topic("a").orElseThrow().desired());
    }

    @Test
    void addPartitionsRefusesPausedRecreatedShrunkAndForeignTopics() {
        createMirror();
        source.topics.put("a", new SourceTopic("a", "id-a", 3, Map.of()));
        run(CommandOp.START, "dr", "a");
        assertFailed(run(CommandOp.ADD_PARTITIONS, "dr", "b"), MirrorError.TOPIC_NOT_IN_CLUSTER_MIRROR, "'b'");
        source.topics.put("a", new SourceTopic("a", "id-a2", 6, Map.of()));
        assertFailed(run(CommandOp.ADD_PARTITIONS, "dr", "a"), MirrorError.SOURCE_TOPIC_CHANGED, "recreated");
        source.topics.put("a", new SourceTopic("a", "id-a", 2, Map.of()));
        assertFailed(run(CommandOp.ADD_PARTITIONS, "dr", "a"), MirrorError.INVALID_PARTITIONS, "fewer");
        run(CommandOp.PAUSE, "dr", "a");
        source.topics.put("a", new SourceTopic("a", "id-a", 6, Map.of()));
        assertFailed(run(CommandOp.ADD_PARTITIONS, "dr", "a"), MirrorError.MIRROR_TOPIC_NOT_MIRRORING, "PAUSED");
        assertTrue(destination.grown.isEmpty());
    }

    @Test
    void unknownMirrorForEveryOperation() {
        for (CommandOp op : List.of(CommandOp.DELETE, CommandOp.STOP, CommandOp.PAUSE, CommandOp.RESUME, CommandOp.ADD_PARTITIONS,
                CommandOp.RECOVER)) {
            assertFailed(run(op, "ghost", "a"), MirrorError.UNKNOWN_CLUSTER_MIRROR, "no mirror named 'ghost'");
        }
    }

    /** The source's image with a mirror whose source is this (the destination) cluster, copying {@code topic}. */
    private static MirrorImage sourceMirroringFromUs(String topic, io.clustermirror.common.DesiredState desired, PartitionState state) {
        return sourceMirroringFromUs(topic, desired, state, state == PartitionState.STOPPED ? 10 : -1);
    }

    private static MirrorImage sourceMirroringFromUs(String topic, DesiredState desired, PartitionState state, long barrierOffset) {
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        delta.replayMetadata(RecordCodec.encodeKey(RecordCodec.mirrorKey("back")), RecordCodec.encodeMirror(
            new io.clustermirror.common.records.MirrorRecord("back", CONFIGS, "destination-cluster-id", 1L)));
        delta.replayMetadata(RecordCodec.encodeKey(RecordCodec.topicKey(topic)), RecordCodec.encodeTopic(
            new MirrorTopicRecord(topic, "back", desired, "id", 1, 1L)));
        PartitionStateRecord p = new PartitionStateRecord("back", topic, 0, state, 0, 1, "id", 9, 0, List.of(), 10, 11, null,
            barrierOffset, -1, -1, 1L);
        delta.replayState(RecordCodec.encodeKey(p.key()), RecordCodec.encodeState(p));
        return delta.apply();
    }

    @Test
    void mirroringBackATopicTheSourceCopiesFromUsIsALoop() {
        createMirror();
        source.topics.put("a", new SourceTopic("a", "id-a", 1, Map.of()));
        source.image = sourceMirroringFromUs("a", DesiredState.MIRRORING, PartitionState.MIRRORING);
        assertFailed(run(CommandOp.START, "dr", "a"), MirrorError.MIRROR_LOOP, "mirror 'back'");
    }

    @Test
    void aTopicWithDataStartsOnlyWhenItsHistoryIsKnown() {
        createMirror();
        source.topics.put("a", new SourceTopic("a", "id-a", 1, Map.of()));
        destination.topics.put("a", topicWithEnds(11));
        assertFailed(run(CommandOp.START, "dr", "a"), MirrorError.TOPIC_ALREADY_EXISTS, "did not come from this source");
        // Failback: the source mirrored 'a' from us and stopped; PREPARING aligns the log.
        source.image = sourceMirroringFromUs("a", DesiredState.STOPPED, PartitionState.STOPPED);
        assertEquals(MirrorError.NONE, run(CommandOp.START, "dr", "a").result().error());
        // A stopped topic can be started again: nothing was written after its barrier at offset 10.
        run(CommandOp.STOP, "dr", "a");
        recordStopped("dr", "a", 0, 10);
        source.image = MirrorImage.EMPTY;
        assertEquals(MirrorError.NONE, run(CommandOp.START, "dr", "a").result().error());
    }

    /** Records that a partition finished stopping with its barrier at {@code barrierOffset} (-1: none). */
    private void recordStopped(String mirror, String topic, int partition, long barrierOffset) {
        recordState(mirror, topic, partition, PartitionState.STOPPED, barrierOffset);
    }

    private void recordState(String mirror, String topic, int partition, PartitionState state, long barrierOffset) {
        MirrorDelta delta = new MirrorDelta(image);
        PartitionStateRecord record = new PartitionStateRecord(mirror, topic, partition, state, 0, 1, "id-" + topic, 9, 0,
            List.of(), 10, 10, null, barrierOffset, -1, -1, 1L);
        delta.replayState(RecordCodec.encodeKey(record.key()), RecordCodec.encodeState(record));
        image = delta.apply();
    }

    private CommandOutcome start(boolean discardLocalWrites, String... topics) {
        return apply(new MirrorCommand("id-start", CommandOp.START, "dr", Map.of(), List.of(topics), List.of(), 1L, discardLocalWrites));
    }

    /** Mirror 'dr' with topic 'a' (one partition) stopped: its barrier at offset 10, and {@code end} its log end now. */
    private void stoppedTopicWithLogEnd(long end) {
        createMirror();
        source.topics.put("a", new SourceTopic("a", "id-a", 1, Map.of()));
        assertEquals(MirrorError.NONE, run(CommandOp.START, "dr", "a").result().error());
        assertEquals(MirrorError.NONE, run(CommandOp.STOP, "dr", "a").result().error());
        recordStopped("dr", "a", 0, 10);
        destination.topics.put("a", topicWithEnds(end));
    }

    @Test
    void aPatternNeverSelectsATopicThatIsInAMirrorButANameDoes() {
        stoppedTopicWithLogEnd(11);
        source.topics.put("b", new SourceTopic("b", "id-b", 1, Map.of()));
        CommandOutcome byPattern = run(CommandOp.START, "dr", ".*");
        assertEquals(MirrorError.NONE, byPattern.result().error(), byPattern.result().message());
        assertEquals(List.of("b"), byPattern.result().topics(), "the stopped topic is left out");
        assertTrue(byPattern.result().message().contains("left out, already in a mirror: a (mirror 'dr', STOPPED)"),
            byPattern.result().message());
        assertEquals(DesiredState.STOPPED, image.topic("a").orElseThrow().desired());
        assertFailed(run(CommandOp.START, "dr", "a|b"), MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR, "every topic matched is already in a mirror");
        CommandOutcome byName = run(CommandOp.START, "dr", "a");
        assertEquals(MirrorError.NONE, byName.result().error(), byName.result().message());
        assertEquals(DesiredState.MIRRORING, image.topic("a").orElseThrow().desired());
    }

    @Test
    void startingAStoppedTopicThatWasWrittenToIsRefusedUnlessTheCommandDiscardsTheWrites() {
        stoppedTopicWithLogEnd(15);
        assertFailed(start(false, "a"), MirrorError.MIRROR_TOPIC_HAS_LOCAL_WRITES, "holds 4 record(s) written since it was stopped "
            + "(partition 0: [11, 15)); starting it again would remove them");
        assertFailed(start(false, "a"), MirrorError.MIRROR_TOPIC_HAS_LOCAL_WRITES, "--discard-local-writes");
        assertEquals(DesiredState.STOPPED, image.topic("a").orElseThrow().desired(), "refused: nothing changed");
        CommandOutcome discarded = start(true, "a");
        assertEquals(MirrorError.NONE, discarded.result().error(), discarded.result().message());
        assertTrue(discarded.result().message().contains("discarding the records written since the stop: a 4 (partition 0: [11, 15))"),
            discarded.result().message());
        assertEquals(DesiredState.MIRRORING, image.topic("a").orElseThrow().desired());
    }

    @Test
    void afterAFailbackOnlyWhatTheSourceDidNotCopyFromUsCounts() {
        stoppedTopicWithLogEnd(15); // our barrier at 10, then writes at [11, 15)
        // The source mirrored 'a' from us up to 13 and stopped there: PREPARING cuts at its barrier, keeping what it copied.
        source.image = sourceMirroringFromUs("a", DesiredState.STOPPED, PartitionState.STOPPED, 13);
        assertFailed(start(false, "a"), MirrorError.MIRROR_TOPIC_HAS_LOCAL_WRITES, "holds 2 record(s) written since it was stopped "
            + "(partition 0: [13, 15))");
        source.image = sourceMirroringFromUs("a", DesiredState.STOPPED, PartitionState.STOPPED, 15);
        CommandOutcome copiedAll = start(false, "a");
        assertEquals(MirrorError.NONE, copiedAll.result().error(), copiedAll.result().message());
    }

    @Test
    void aStoppedPartitionWithoutABarrierCountsEveryRecordAndOneStillStoppingIsWaitedFor() {
        stoppedTopicWithLogEnd(15);
        recordStopped("dr", "a", 0, -1);
        assertFailed(start(false, "a"), MirrorError.MIRROR_TOPIC_HAS_LOCAL_WRITES, "holds 15 record(s)");
        recordState("dr", "a", 0, PartitionState.STOPPING, -1);
        assertFailed(start(true, "a"), MirrorError.MIRROR_TOPIC_NOT_STOPPED, "not finished stopping: [0]");
    }

    @Test
    void everyTopicRecordNamesTheCommandThatLastChangedIt() {
        createMirror();
        source.topics.put("a", new SourceTopic("a", "id-a", 1, Map.of()));
        run(CommandOp.START, "dr", "a");
        assertEquals(new LastCommand("id-START", CommandOp.START, 1L, "started mirroring 1 topic(s) of mirror 'dr'; created a"),
            image.topic("a").orElseThrow().lastCommand());
        run(CommandOp.PAUSE, "dr", "a");
        assertEquals(new LastCommand("id-PAUSE", CommandOp.PAUSE, 1L, "paused 1 topic(s) of mirror 'dr'"),
            image.topic("a").orElseThrow().lastCommand());
    }

    @Test
    void aCatastrophicPatternIsMatchedInLinearTime() {
        createMirror();
        String name = "a".repeat(240) + "b";
        source.topics.put(name, new SourceTopic(name, "id", 1, Map.of()));
        // java.util.regex backtracks through 2^240 ways to split the a's before failing on the b.
        CommandOutcome outcome = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> run(CommandOp.START, "dr", "(a+)+$"));
        assertFailed(outcome, MirrorError.UNKNOWN_TOPIC_OR_PARTITION, "'(a+)+$' matches no topic");
        assertEquals(MirrorError.NONE, run(CommandOp.START, "dr", "(a+)+b").result().error(), "and the next command is applied");
    }

    @Test
    void anInvalidPatternIsAnInvalidRequest() {
        createMirror();
        assertFailed(run(CommandOp.START, "dr", "(a"), MirrorError.INVALID_REQUEST, "'(a' is not a valid regular expression");
        assertFailed(run(CommandOp.START, "dr", "(a)\\1"), MirrorError.INVALID_REQUEST, "backreferences");
    }
}
