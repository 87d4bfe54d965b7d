package io.clustermirror.broker.auth;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SyncedTopicConfigsRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which config changes the controller's policy refuses so that no config change destroys a mirror topic's data. */
class MirrorConfigRuleTest {
    private static final ConfigResource TOPIC = new ConfigResource(ConfigResource.Type.TOPIC, "t");
    private static final ConfigResource CLUSTER_DEFAULT = new ConfigResource(ConfigResource.Type.BROKER, "");
    private static final Map<String, String> SYNCED = Map.of("retention.ms", "7200000", "cleanup.policy", "delete");

    /** Topic "t" of mirror "dr" (which excludes segment.* configs) in the given state, with the sync's declaration if any. */
    private static Optional<MirrorImage> image(DesiredState desired, PartitionState state, SyncedTopicConfigsRecord synced) {
        MirrorDelta delta = new MirrorDelta(MirrorAwareAuthorizerTest.image(desired, state));
        MirrorRecord mirror = new MirrorRecord("dr", Map.of("bootstrap.servers", "source:9092", MirrorConfig.TOPIC_PROPERTIES_EXCLUDE,
            "segment\\..*"), "source-id", 1L);
        delta.replayMetadata(RecordCodec.encodeKey(RecordCodec.mirrorKey("dr")), RecordCodec.encodeMirror(mirror));
        if (synced != null) {
            delta.replayMetadata(RecordCodec.encodeKey(SyncedTopicConfigsRecord.key("t")), RecordCodec.encodeSyncedTopicConfigs(synced));
        }
        return Optional.of(delta.apply());
    }

    private static Optional<MirrorImage> mirroring() {
        return image(DesiredState.MIRRORING, PartitionState.MIRRORING, new SyncedTopicConfigsRecord("dr", "t", SYNCED, 1L));
    }

    private static Map<String, String> change(String name, String value) {
        Map<String, String> m = new HashMap<>();
        m.put(name, value);
        return m;
    }

    private static void assertRefused(Optional<MirrorImage> image, ConfigResource resource, Map<String, String> change, String because) {
        Optional<String> refusal = MirrorConfigRule.refusal(image, resource, change);
        assertTrue(refusal.isPresent(), change + " on " + resource + " must be refused");
        assertTrue(refusal.get().contains(because), refusal.get());
    }

    private static void assertAllowed(Optional<MirrorImage> image, ConfigResource resource, Map<String, String> change) {
        assertEquals(Optional.empty(), MirrorConfigRule.refusal(image, resource, change), change + " on " + resource);
    }

    @Test
    void aMirroringTopicTakesOnlyTheValuesTheSyncDeclared() {
        assertAllowed(mirroring(), TOPIC, Map.of("retention.ms", "7200000"));
        assertAllowed(mirroring(), TOPIC, Map.of("retention.ms", "7200000", "cleanup.policy", "delete"));
        assertAllowed(mirroring(), TOPIC, change("max.message.bytes", null)); // the source does not set it: the sync removes it
        assertRefused(mirroring(), TOPIC, Map.of("retention.ms", "1"), "'retention.ms' would then not be the source's value");
        assertRefused(mirroring(), TOPIC, Map.of("retention.ms", "7200000", "retention.bytes", "1"), "'retention.bytes'");
        assertRefused(mirroring(), TOPIC, change("retention.ms", null), "the source sets it");
        assertRefused(mirroring(), TOPIC, Map.of("cleanup.policy", "compact"), "kafka-cluster-mirrors.sh --stop --mirror dr --topics t");
    }

    @Test
    void configsTheMirrorNeverCopiesAreNotChangedAtAll() {
        assertRefused(mirroring(), TOPIC, Map.of("unclean.leader.election.enable", "true"), "never copies 'unclean.leader.election.enable'");
        assertRefused(mirroring(), TOPIC, Map.of("min.insync.replicas", "1"), "never copies 'min.insync.replicas'");
        assertRefused(mirroring(), TOPIC, change("min.insync.replicas", null), "never copies");
        assertRefused(mirroring(), TOPIC, Map.of("segment.ms", "1"), "never copies 'segment.ms'");
    }

    @Test
    void withoutTheSyncsDeclarationNothingChangesOnAMirrorTopic() {
        assertRefused(image(DesiredState.MIRRORING, PartitionState.MIRRORING, null), TOPIC, Map.of("retention.ms", "7200000"),
            "has not declared them yet");
        assertRefused(image(DesiredState.MIRRORING, PartitionState.MIRRORING, new SyncedTopicConfigsRecord("old", "t", SYNCED, 1L)),
            TOPIC, Map.of("retention.ms", "7200000"), "has not declared them yet");
    }

    @Test
    void pausedTopicsAreProtectedAndStoppedOnesAndOthersAreNot() {
        Optional<MirrorImage> paused = image(DesiredState.PAUSED, PartitionState.PAUSED, null);
        assertRefused(paused, TOPIC, Map.of("retention.ms", "1"), "read-only mirror topic");
        Optional<MirrorImage> stopped = image(DesiredState.STOPPED, PartitionState.STOPPED, null);
        assertAllowed(stopped, TOPIC, Map.of("retention.ms", "1"));
        assertAllowed(mirroring(), new ConfigResource(ConfigResource.Type.TOPIC, "other"), Map.of("retention.ms", "1"));
        assertAllowed(mirroring(), new ConfigResource(ConfigResource.Type.BROKER_LOGGER, "1"), Map.of("kafka", "DEBUG"));
    }

    @Test
    void beforeTheStateIsLoadedTopicChangesFailClosedButInternalTopicsAndEmptyChanges() {
        assertRefused(Optional.empty(), TOPIC, Map.of("retention.ms", "7200000"), "has not loaded the Cluster Mirror state");
        assertAllowed(Optional.empty(), new ConfigResource(ConfigResource.Type.TOPIC, "__consumer_offsets"), Map.of("cleanup.policy", "compact"));
        assertAllowed(Optional.empty(), TOPIC, Map.of()); // a topic created without configs
        assertRefused(Optional.empty(), CLUSTER_DEFAULT, Map.of("log.retention.ms", "1"), "has not loaded");
        assertAllowed(Optional.empty(), CLUSTER_DEFAULT, Map.of("log.cleaner.threads", "2"));
    }

    @Test
    void aBrokerDefaultIsNotChangedWhileAMirrorTopicTakesItFromThere() {
        for (String retention : new String[] {"log.retention.ms", "log.retention.minutes", "log.retention.hours"}) {
            assertAllowed(mirroring(), CLUSTER_DEFAULT, Map.of(retention, "1")); // "t" has its own retention.ms from the source
        }
        assertRefused(mirroring(), CLUSTER_DEFAULT, Map.of("log.retention.bytes", "1"),
            "would change 'retention.bytes' of 1 read-only mirror topic(s) that take it from the broker default (t)");
        assertRefused(mirroring(), new ConfigResource(ConfigResource.Type.BROKER, "2"), change("log.retention.bytes", null),
            "the default of broker 2");
        assertRefused(mirroring(), CLUSTER_DEFAULT, Map.of("unclean.leader.election.enable", "true"), "Set 'unclean.leader.election.enable'");
        assertRefused(mirroring(), CLUSTER_DEFAULT, Map.of("min.insync.replicas", "1"), "'min.insync.replicas'");
        assertRefused(mirroring(), CLUSTER_DEFAULT, Map.of("log.local.retention.ms", "1"), "'local.retention.ms'");
        assertRefused(image(DesiredState.MIRRORING, PartitionState.MIRRORING, null), CLUSTER_DEFAULT, Map.of("log.retention.ms", "1"),
            "(t)");
        assertAllowed(mirroring(), CLUSTER_DEFAULT, Map.of("unclean.leader.election.enable", "false"));
        assertAllowed(mirroring(), CLUSTER_DEFAULT, Map.of("log.cleaner.threads", "2", "num.io.threads", "4"));
        assertAllowed(image(DesiredState.STOPPED, PartitionState.STOPPED, null), CLUSTER_DEFAULT, Map.of("log.retention.bytes", "1"));
    }
}
