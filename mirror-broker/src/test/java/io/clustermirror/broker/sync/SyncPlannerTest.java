package io.clustermirror.broker.sync;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorAclRecord;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.HeldChange;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SyncedTopicConfigsRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static io.clustermirror.broker.sync.SyncedGroup.consumer;
import static io.clustermirror.broker.sync.SyncedGroup.share;
import static org.junit.jupiter.api.Assertions.assertEquals;

class SyncPlannerTest {
    private static final TopicPartition A0 = new TopicPartition("a", 0);
    private static final TopicPartition A1 = new TopicPartition("a", 1);
    private static final long NOW_MS = 1_000_000_000L;
    private static final long DAY_MS = 24 * 60 * 60 * 1000L;

    private final Map<String, String> configs = new HashMap<>(Map.of("bootstrap.servers", "s:1"));
    private final Map<String, MirrorTopicRecord> topics = new HashMap<>();
    private final Map<String, MirrorAclRecord> ownedAcls = new HashMap<>();

    private MirrorConfig config() {
        return MirrorConfig.validate("dr", configs);
    }

    private MirrorImage image() {
        return new MirrorImage(Map.of("dr", new MirrorRecord("dr", configs, "src", 1L)), topics, Map.of(), ownedAcls);
    }

    private void topic(String name, DesiredState desired, int partitions) {
        topics.put(name, new MirrorTopicRecord(name, "dr", desired, "id-" + name, partitions, 1L));
    }

    private List<SyncAction> plan(SourceView source, DestinationView destination) {
        return SyncPlanner.plan(config(), image(), source, destination, NOW_MS);
    }

    private static SourceView sourceTopics(Map<String, SourceView.Topic> topics) {
        return new SourceView(null, topics, null, null);
    }

    private static DestinationView destinationTopics(Map<String, DestinationView.Topic> topics) {
        return new DestinationView(topics, Map.of(), Map.of(), null, null);
    }

    private static AclBinding acl(String name, String principal) {
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, name, PatternType.LITERAL),
            new AccessControlEntry(principal, "*", AclOperation.READ, AclPermissionType.ALLOW));
    }

    private static AclBinding acl(ResourceType type, String name, PatternType patternType) {
        return new AclBinding(new ResourcePattern(type, name, patternType),
            new AccessControlEntry("User:a", "*", AclOperation.ALL, AclPermissionType.ALLOW));
    }

    @Test
    void growsATopicWhoseSourceHasMorePartitionsUnlessTheSourceTopicWasRecreated() {
        topic("a", DesiredState.MIRRORING, 3);
        topic("b", DesiredState.MIRRORING, 3);
        topic("c", DesiredState.MIRRORING, 3);
        List<SyncAction> actions = plan(
            sourceTopics(Map.of("a", new SourceView.Topic("id-a", 6, null), "b", new SourceView.Topic("other-id", 6, null),
                "c", new SourceView.Topic("id-c", 3, null))),
            destinationTopics(Map.of("a", new DestinationView.Topic(3, null), "b", new DestinationView.Topic(3, null),
                "c", new DestinationView.Topic(3, null))));
        assertEquals(List.of(new SyncAction.AddPartitions("a", 6)), actions);
    }

    @Test
    void recordsAGrowthTheImageDoesNotShowYetEvenIfTheDestinationAlreadyGrew() {
        topic("a", DesiredState.MIRRORING, 3);
        assertEquals(List.of(new SyncAction.AddPartitions("a", 6)), plan(
            sourceTopics(Map.of("a", new SourceView.Topic("id-a", 6, null))),
            destinationTopics(Map.of("a", new DestinationView.Topic(6, null)))));
    }

    /**
     * A start of 10,000 partitions creates them in steps, and a broker's metadata may show the first step only for tens of
     * seconds: that is no growth of the source. A growth counts from the partitions the mirror created (its record).
     */
    @Test
    void aDestinationViewBehindTheMirrorsOwnCreationIsNoGrowth() {
        topic("a", DesiredState.MIRRORING, 10_000);
        assertEquals(List.of(), plan(sourceTopics(Map.of("a", new SourceView.Topic("id-a", 10_000, null))),
            destinationTopics(Map.of("a", new DestinationView.Topic(5_000, null)))));
        assertEquals(List.of(new SyncAction.AddPartitions("a", 10_005)), plan(
            sourceTopics(Map.of("a", new SourceView.Topic("id-a", 10_005, null))),
            destinationTopics(Map.of("a", new DestinationView.Topic(5_000, null)))));
    }

    @Test
    void topicConfigsAreSetAndRemovedIncrementallyExceptExcludedOnes() {
        configs.put(MirrorConfig.TOPIC_PROPERTIES_EXCLUDE, "segment\\..*");
        topic("a", DesiredState.MIRRORING, 1);
        Map<String, String> src = Map.of("retention.ms", "2", "cleanup.policy", "compact", "min.insync.replicas", "2", "segment.ms", "9");
        Map<String, String> dst = Map.of("retention.ms", "1", "cleanup.policy", "compact", "max.message.bytes", "5",
            "min.insync.replicas", "1", "segment.bytes", "7");
        List<SyncAction> actions = plan(sourceTopics(Map.of("a", new SourceView.Topic("id-a", 1, src))),
            destinationTopics(Map.of("a", new DestinationView.Topic(1, dst))));
        assertEquals(List.of(new SyncAction.AlterTopicConfigs("a", Map.of("retention.ms", "2"), Set.of("max.message.bytes"),
            Map.of("retention.ms", "2", "cleanup.policy", "compact"))), actions);
    }

    @Test
    void theCopiedConfigsAreDeclaredUntilTheImageShowsThemEvenWithNothingToChange() {
        topic("a", DesiredState.MIRRORING, 1);
        Map<String, String> same = Map.of("retention.ms", "7200000", "min.insync.replicas", "2");
        SourceView source = sourceTopics(Map.of("a", new SourceView.Topic("id-a", 1, same)));
        DestinationView destination = destinationTopics(Map.of("a", new DestinationView.Topic(1, same)));
        Map<String, String> copied = Map.of("retention.ms", "7200000");
        assertEquals(List.of(new SyncAction.AlterTopicConfigs("a", Map.of(), Set.of(), copied)), plan(source, destination),
            "min.insync.replicas is never copied, so not declared");

        assertEquals(List.of(), SyncPlanner.plan(config(), declared(new SyncedTopicConfigsRecord("dr", "a", copied, 1L)), source, destination, NOW_MS),
            "declared as it is: nothing to do");
        assertEquals(List.of(new SyncAction.AlterTopicConfigs("a", Map.of(), Set.of(), copied)),
            SyncPlanner.plan(config(), declared(new SyncedTopicConfigsRecord("other", "a", copied, 1L)), source, destination, NOW_MS),
            "another mirror's declaration does not count");
    }

    private MirrorImage declared(SyncedTopicConfigsRecord record) {
        MirrorDelta delta = new MirrorDelta(image());
        delta.replayMetadata(RecordCodec.encodeKey(SyncedTopicConfigsRecord.key(record.topic())), RecordCodec.encodeSyncedTopicConfigs(record));
        return delta.apply();
    }

    private void holding(String name, int partitions, HeldChange... held) {
        topics.put(name, new MirrorTopicRecord(name, "dr", DesiredState.MIRRORING, "id-" + name, partitions, 1L, null, List.of(held), null));
    }

    private static HeldChange retention(String value, long sinceMs, HeldChange.Status status) {
        return new HeldChange(HeldChange.Kind.CONFIG, "retention.ms", value, sinceMs, status);
    }

    private List<SyncAction> planRetention(String source, String destination) {
        return plan(sourceTopics(Map.of("a", new SourceView.Topic("id-a", 1, Map.of("retention.ms", source)))),
            destinationTopics(Map.of("a", new DestinationView.Topic(1, Map.of("retention.ms", destination)))));
    }

    /** Nothing to change but the declaration of the copied configs: a retention.ms of {@code value}. */
    private static SyncAction declaring(String retention) {
        return new SyncAction.AlterTopicConfigs("a", Map.of(), Set.of(), Map.of("retention.ms", retention));
    }

    @Test
    void aConfigThatDeletesSoonerIsHeldFromWhenFirstSeenAndCopiedOnlyOnceItsHoldPassedOrAnOperatorAppliedIt() {
        topic("a", DesiredState.MIRRORING, 1);
        assertEquals(List.of(declaring("86400000"),
                new SyncAction.HoldChanges("a", List.of(HeldChange.held(HeldChange.Kind.CONFIG, "retention.ms", "1", NOW_MS)))),
            planRetention("1", "86400000"), "first seen: recorded, not copied, and the destination's value is the one declared");
        holding("a", 1, retention("1", NOW_MS - DAY_MS + 1, HeldChange.Status.HELD));
        assertEquals(List.of(declaring("86400000")), planRetention("1", "86400000"), "held: neither copied nor recorded again");
        holding("a", 1, retention("1", NOW_MS - DAY_MS, HeldChange.Status.HELD));
        assertEquals(List.of(new SyncAction.AlterTopicConfigs("a", Map.of("retention.ms", "1"), Set.of(), Map.of("retention.ms", "1"))),
            planRetention("1", "86400000"), "the default hold of a day has passed");
        holding("a", 1, retention("1", NOW_MS, HeldChange.Status.APPROVED));
        assertEquals(List.of(new SyncAction.AlterTopicConfigs("a", Map.of("retention.ms", "1"), Set.of(), Map.of("retention.ms", "1"))),
            planRetention("1", "86400000"), "applied by an operator");
        holding("a", 1, retention("1", NOW_MS - 10 * DAY_MS, HeldChange.Status.REJECTED));
        assertEquals(List.of(declaring("86400000")), planRetention("1", "86400000"), "rejected: kept however old");
        assertEquals(List.of(declaring("86400000"),
                new SyncAction.HoldChanges("a", List.of(HeldChange.held(HeldChange.Kind.CONFIG, "retention.ms", "2", NOW_MS)))),
            planRetention("2", "86400000"), "another value of the source is a new change, held anew");
    }

    @Test
    void aHeldChangeThatIsCopiedOrThatTheSourceTookBackIsForgottenAndALongerRetentionIsNotHeld() {
        holding("a", 1, retention("1", NOW_MS, HeldChange.Status.HELD));
        assertEquals(List.of(declaring("86400000"), new SyncAction.HoldChanges("a", List.of())), planRetention("86400000", "86400000"));
        assertEquals(List.of(new SyncAction.AlterTopicConfigs("a", Map.of("retention.ms", "172800000"), Set.of(), Map.of("retention.ms", "172800000")),
            new SyncAction.HoldChanges("a", List.of())), planRetention("172800000", "86400000"));
    }

    @Test
    void theRemovalOfARetentionOverrideIsHeldWhileHarmlessChangesAreCopied() {
        topic("a", DesiredState.MIRRORING, 1);
        List<SyncAction> actions = plan(sourceTopics(Map.of("a", new SourceView.Topic("id-a", 1, Map.of("max.message.bytes", "9")))),
            destinationTopics(Map.of("a", new DestinationView.Topic(1, Map.of("retention.ms", "5", "max.message.bytes", "5")))));
        assertEquals(List.of(
            new SyncAction.AlterTopicConfigs("a", Map.of("max.message.bytes", "9"), Set.of(), Map.of("retention.ms", "5", "max.message.bytes", "9")),
            new SyncAction.HoldChanges("a", List.of(HeldChange.held(HeldChange.Kind.CONFIG, "retention.ms", null, NOW_MS)))), actions);
    }

    @Test
    void aGrowthBeyondTheCapIsHeldAndOneWithinItIsNot() {
        configs.put(MirrorConfig.PARTITIONS_MAX_GROWTH, "10");
        topic("a", DesiredState.MIRRORING, 3);
        topic("b", DesiredState.MIRRORING, 3);
        List<SyncAction> actions = plan(
            sourceTopics(Map.of("a", new SourceView.Topic("id-a", 14, null), "b", new SourceView.Topic("id-b", 13, null))),
            destinationTopics(Map.of("a", new DestinationView.Topic(3, null), "b", new DestinationView.Topic(3, null))));
        assertEquals(Set.of(new SyncAction.HoldChanges("a", List.of(HeldChange.held(HeldChange.Kind.PARTITIONS, "partitions", "14", NOW_MS))),
            new SyncAction.AddPartitions("b", 13)), Set.copyOf(actions));
        holding("a", 3, new HeldChange(HeldChange.Kind.PARTITIONS, "partitions", "14", NOW_MS, HeldChange.Status.APPROVED));
        assertEquals(List.of(new SyncAction.AddPartitions("a", 14)), plan(sourceTopics(Map.of("a", new SourceView.Topic("id-a", 14, null))),
            destinationTopics(Map.of("a", new DestinationView.Topic(3, null)))));
    }

    @Test
    void policyApplyCopiesEveryChangeAtOnce() {
        configs.put(MirrorConfig.SOURCE_DESTRUCTIVE_POLICY, "apply");
        topic("a", DesiredState.MIRRORING, 1);
        List<SyncAction> actions = plan(sourceTopics(Map.of("a", new SourceView.Topic("id-a", 500, Map.of("retention.ms", "1")))),
            destinationTopics(Map.of("a", new DestinationView.Topic(1, Map.of("retention.ms", "86400000")))));
        assertEquals(List.of(new SyncAction.AddPartitions("a", 500),
            new SyncAction.AlterTopicConfigs("a", Map.of("retention.ms", "1"), Set.of(), Map.of("retention.ms", "1"))), actions);
    }

    @Test
    void pausedAndStoppedTopicsAndUnreadableConfigsAreNotSynced() {
        topic("p", DesiredState.PAUSED, 1);
        topic("s", DesiredState.STOPPED, 1);
        topic("u", DesiredState.MIRRORING, 1);
        Map<String, SourceView.Topic> src = Map.of("p", new SourceView.Topic("id-p", 4, Map.of("retention.ms", "2")),
            "s", new SourceView.Topic("id-s", 4, Map.of("retention.ms", "2")), "u", new SourceView.Topic("id-u", 1, null));
        Map<String, DestinationView.Topic> dst = Map.of("p", new DestinationView.Topic(1, Map.of()),
            "s", new DestinationView.Topic(1, Map.of()), "u", new DestinationView.Topic(1, Map.of("retention.ms", "1")));
        assertEquals(List.of(), plan(sourceTopics(src), destinationTopics(dst)));
    }

    @Test
    void groupOffsetsAreClampedToTheDestinationLogAndLoseTheirLeaderEpoch() {
        configs.put(MirrorConfig.GROUPS_INCLUDE, "app-.*");
        configs.put(MirrorConfig.GROUPS_EXCLUDE, "app-private");
        topic("a", DesiredState.MIRRORING, 2);
        topic("stopped", DesiredState.STOPPED, 1);
        TopicPartition stopped = new TopicPartition("stopped", 0);
        Map<TopicPartition, OffsetAndMetadata> committed = Map.of(
            A0, new OffsetAndMetadata(500, Optional.of(7), "meta"),  // beyond the destination end
            A1, new OffsetAndMetadata(2, Optional.of(7), ""),        // below the destination log start
            stopped, new OffsetAndMetadata(3));                      // a stopped topic belongs to the destination
        SourceView source = new SourceView(null, Map.of(),
            Map.of(consumer("app-1"), committed, consumer("app-private"), committed, consumer("other"), committed), null);
        DestinationView destination = new DestinationView(Map.of(), Map.of(A0, 0L, A1, 10L, stopped, 0L), Map.of(A0, 100L, A1, 50L, stopped, 9L),
            Map.of(consumer("app-1"), new DestinationView.Group(false, Map.of()), consumer("app-private"), new DestinationView.Group(false, Map.of()),
                consumer("other"), new DestinationView.Group(false, Map.of())), null);
        assertEquals(List.of(new SyncAction.CommitGroupOffsets(consumer("app-1"), Map.of(
                A0, new OffsetAndMetadata(100, Optional.empty(), "meta"),
                A1, new OffsetAndMetadata(10, Optional.empty(), "")))),
            plan(source, destination));
    }

    @Test
    void everyGroupButTheExcludedOnesIsSyncedByDefaultAndAnEmptyIncludeSyncsNone() {
        configs.put(MirrorConfig.GROUPS_EXCLUDE, "private-.*");
        topic("a", DesiredState.MIRRORING, 1);
        Map<TopicPartition, OffsetAndMetadata> committed = Map.of(A0, new OffsetAndMetadata(5));
        SourceView source = new SourceView(null, Map.of(),
            Map.of(consumer("app"), committed, consumer("other"), committed, consumer("private-1"), committed), null);
        DestinationView destination = new DestinationView(Map.of(), Map.of(A0, 0L), Map.of(A0, 9L), Map.of(
            consumer("app"), new DestinationView.Group(false, Map.of()), consumer("other"), new DestinationView.Group(false, Map.of()),
            consumer("private-1"), new DestinationView.Group(false, Map.of())), null);
        OffsetAndMetadata expected = new OffsetAndMetadata(5, Optional.empty(), "");
        assertEquals(List.of(new SyncAction.CommitGroupOffsets(consumer("app"), Map.of(A0, expected)),
            new SyncAction.CommitGroupOffsets(consumer("other"), Map.of(A0, expected))), plan(source, destination));
        configs.put(MirrorConfig.GROUPS_INCLUDE, "");
        assertEquals(List.of(), plan(source, destination), "an empty mirror.groups.include syncs no group");
    }

    @Test
    void groupsWithActiveMembersAreSkippedAndEqualOffsetsAreNotRewritten() {
        topic("a", DesiredState.MIRRORING, 2);
        Map<TopicPartition, OffsetAndMetadata> committed = Map.of(A0, new OffsetAndMetadata(5), A1, new OffsetAndMetadata(6));
        SourceView source = new SourceView(null, Map.of(),
            Map.of(consumer("busy"), committed, consumer("same"), committed, consumer("half"), committed), null);
        DestinationView destination = new DestinationView(Map.of(), Map.of(A0, 0L, A1, 0L), Map.of(A0, 9L, A1, 9L), Map.of(
            consumer("busy"), new DestinationView.Group(true, Map.of(A0, 1L)),
            consumer("same"), new DestinationView.Group(false, Map.of(A0, 5L, A1, 6L)),
            consumer("half"), new DestinationView.Group(false, Map.of(A0, 5L, A1, 1L))), null);
        assertEquals(List.of(new SyncAction.GroupSkipped(consumer("busy")),
                new SyncAction.CommitGroupOffsets(consumer("half"), Map.of(A1, new OffsetAndMetadata(6, Optional.empty(), "")))),
            plan(source, destination));
    }

    @Test
    void groupPartitionsNotYetOnTheDestinationWait() {
        topic("a", DesiredState.MIRRORING, 2);
        SourceView source = new SourceView(null, Map.of(), Map.of(consumer("g"), Map.of(A1, new OffsetAndMetadata(5))), null);
        DestinationView destination = new DestinationView(Map.of(), Map.of(A0, 0L), Map.of(A0, 9L),
            Map.of(consumer("g"), new DestinationView.Group(false, Map.of())), null);
        assertEquals(List.of(), plan(source, destination));
    }

    /**
     * Share groups go through the same rules as consumer groups: the include and exclude patterns, the clamp to the
     * destination log, mirrored topics only, no write while the destination group has members or already has the offset.
     * A consumer group and a share group of the same id are two groups (on different clusters they may differ in kind).
     */
    @Test
    void shareGroupStartOffsetsAreSyncedLikeConsumerGroupOffsets() {
        configs.put(MirrorConfig.GROUPS_INCLUDE, "jobs-.*");
        configs.put(MirrorConfig.GROUPS_EXCLUDE, "jobs-private");
        topic("a", DesiredState.MIRRORING, 2);
        topic("stopped", DesiredState.STOPPED, 1);
        TopicPartition stopped = new TopicPartition("stopped", 0);
        Map<TopicPartition, OffsetAndMetadata> starts = Map.of(
            A0, new OffsetAndMetadata(500),  // beyond the destination end
            A1, new OffsetAndMetadata(2),    // below the destination log start
            stopped, new OffsetAndMetadata(3));
        SourceView source = new SourceView(null, Map.of(), Map.of(share("jobs-1"), starts, consumer("jobs-1"), Map.of(A0, new OffsetAndMetadata(7)),
            share("jobs-private"), starts, share("other"), starts, share("jobs-busy"), starts, share("jobs-same"), starts), null);
        DestinationView destination = new DestinationView(Map.of(), Map.of(A0, 0L, A1, 10L, stopped, 0L), Map.of(A0, 100L, A1, 50L, stopped, 9L),
            Map.of(share("jobs-1"), new DestinationView.Group(false, Map.of(A1, 10L)),
                consumer("jobs-1"), new DestinationView.Group(false, Map.of()),
                share("jobs-private"), new DestinationView.Group(false, Map.of()),
                share("other"), new DestinationView.Group(false, Map.of()),
                share("jobs-busy"), new DestinationView.Group(true, Map.of()),
                share("jobs-same"), new DestinationView.Group(false, Map.of(A0, 100L, A1, 10L))), null);
        assertEquals(List.of(
                new SyncAction.CommitGroupOffsets(consumer("jobs-1"), Map.of(A0, new OffsetAndMetadata(7, Optional.empty(), ""))),
                new SyncAction.CommitGroupOffsets(share("jobs-1"), Map.of(A0, new OffsetAndMetadata(100, Optional.empty(), ""))),
                new SyncAction.GroupSkipped(share("jobs-busy"))),
            plan(source, destination));
    }

    @Test
    void aShareGroupWhoseDestinationSideCouldNotBeReadIsLeftAlone() {
        topic("a", DesiredState.MIRRORING, 1);
        SourceView source = new SourceView(null, Map.of(),
            Map.of(share("jobs"), Map.of(A0, new OffsetAndMetadata(5)), consumer("app"), Map.of(A0, new OffsetAndMetadata(5))), null);
        DestinationView destination = new DestinationView(Map.of(), Map.of(A0, 0L), Map.of(A0, 9L),
            Map.of(consumer("app"), new DestinationView.Group(false, Map.of())), null); // e.g. share groups not enabled
        assertEquals(List.of(new SyncAction.CommitGroupOffsets(consumer("app"), Map.of(A0, new OffsetAndMetadata(5, Optional.empty(), "")))),
            plan(source, destination));
    }

    @Test
    void aclsAreCreatedWhenMissingAndOnlyTheMirrorsOwnAreDeletedSayingWhy() {
        topic("orders", DesiredState.MIRRORING, 1);
        topic("orders-old", DesiredState.MIRRORING, 1);
        topic("orders-deny", DesiredState.MIRRORING, 1);
        configs.put(MirrorConfig.ACL_INCLUDE, "orders.*");
        AclBinding wanted = acl("orders", "User:a");
        AclBinding alreadyThere = acl("orders", "User:b");
        AclBinding notIncluded = acl("payments", "User:a");
        AclBinding ownedGone = acl("orders-old", "User:a");
        AclBinding ownedDeny = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "orders-deny", PatternType.LITERAL),
            new AccessControlEntry("User:*", "*", AclOperation.ALL, AclPermissionType.DENY));
        AclBinding foreign = acl("orders-local", "User:c");
        own("dr", ownedGone);
        own("dr", ownedDeny); // copied before the default changed: no longer selected, though the source still has it
        own("other", foreign);
        SourceView source = new SourceView(null, Map.of(), null, Set.of(wanted, alreadyThere, notIncluded, ownedDeny));
        DestinationView destination = new DestinationView(Map.of(), Map.of(), Map.of(), null,
            Set.of(alreadyThere, ownedGone, ownedDeny, foreign));
        assertEquals(List.of(new SyncAction.CreateAcls(List.of(new SyncAction.Acl(wanted, "mirrored topic"))),
                new SyncAction.DeleteAcls(List.of(new SyncAction.Acl(ownedDeny, "the mirror no longer selects it (its topics, groups or ACL settings changed)"),
                    new SyncAction.Acl(ownedGone, "removed at the source")))),
            plan(source, destination));
    }

    @Test
    void theAclsOfATopicThatIsNoLongerMirroringAreNeitherCreatedNorDeleted() {
        topic("stopped", DesiredState.STOPPED, 1);
        topic("paused", DesiredState.PAUSED, 1);
        AclBinding newOnStopped = acl("stopped", "User:new");
        AclBinding ownedOnStopped = acl("stopped", "User:old");
        AclBinding ownedOnPaused = acl("paused", "User:old");
        own("dr", ownedOnStopped);
        own("dr", ownedOnPaused);
        configs.put(MirrorConfig.ACL_SYNC_UNMIRRORED, "true"); // even when topics outside the mirror are copied
        assertEquals(List.of(), plan(new SourceView(null, Map.of(), null, Set.of(newOnStopped)),
            new DestinationView(Map.of(), Map.of(), Map.of(), null, Set.of(ownedOnStopped, ownedOnPaused))),
            "a failover's clients keep their rights on the STOPPED topic; the source adds none");
    }

    @Test
    void onlyAclsOnMirroredTopicsAndSyncedGroupsAreSyncedByDefault() {
        topic("orders", DesiredState.MIRRORING, 1);
        AclBinding topic = acl("orders", "User:a");
        AclBinding otherTopic = acl("payments", "User:a");
        AclBinding wildcardTopic = acl("*", "User:a");
        AclBinding prefixedGroup = acl(ResourceType.GROUP, "app-", PatternType.PREFIXED);
        AclBinding cluster = acl(ResourceType.CLUSTER, MirrorConfig.CLUSTER_RESOURCE_NAME, PatternType.LITERAL);
        SourceView source = new SourceView(null, Map.of(), null, Set.of(topic, otherTopic, wildcardTopic, prefixedGroup, cluster));
        DestinationView destination = new DestinationView(Map.of(), Map.of(), Map.of(), null, Set.of());
        assertEquals(List.of(new SyncAction.CreateAcls(List.of(new SyncAction.Acl(prefixedGroup, "prefix inside mirror.groups.include entry '.*'"),
            new SyncAction.Acl(topic, "mirrored topic")))), plan(source, destination));
        configs.put(MirrorConfig.ACL_INCLUDE, "");
        assertEquals(List.of(), plan(source, destination), "an empty mirror.acl.include syncs no ACL");
    }

    private void own(String mirror, AclBinding acl) {
        ownedAcls.put(MirrorAclRecord.key(mirror, acl), MirrorAclRecord.of(mirror, acl, 1L));
    }

    @Test
    void unreadableAclsChangeNothing() {
        AclBinding owned = acl("orders", "User:a");
        own("dr", owned);
        assertEquals(List.of(), plan(new SourceView(null, Map.of(), null, null),
            new DestinationView(Map.of(), Map.of(), Map.of(), null, Set.of(owned))));
    }

    @Test
    void discoveryStartsNewMatchingTopicsOnly() {
        configs.put(MirrorConfig.TOPICS_INCLUDE, "orders.*,__mirror_state");
        configs.put(MirrorConfig.TOPICS_EXCLUDE, "orders-tmp.*");
        topic("orders-old", DesiredState.STOPPED, 1);
        topics.put("orders-theirs", new MirrorTopicRecord("orders-theirs", "other", DesiredState.MIRRORING, "x", 1, 1L));
        SourceView source = new SourceView(Set.of("orders-new", "orders-b", "orders-tmp-1", "orders-old", "orders-theirs",
            "payments", "__mirror_state"), Map.of(), null, null);
        assertEquals(List.of(new SyncAction.StartTopics(List.of("orders-b", "orders-new"))),
            plan(source, new DestinationView(Map.of(), Map.of(), Map.of(), null, null)));
        configs.remove(MirrorConfig.TOPICS_INCLUDE);
        assertEquals(List.of(), plan(source, new DestinationView(Map.of(), Map.of(), Map.of(), null, null)), "no include, no discovery");
    }
}
