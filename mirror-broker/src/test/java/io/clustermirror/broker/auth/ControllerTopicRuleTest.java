package io.clustermirror.broker.auth;

import io.clustermirror.broker.auth.ControllerTopicRule.Verdict;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.authorizer.Action;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a controller-only node decides for the topic changes it authorizes. */
class ControllerTopicRuleTest {
    private static final Optional<MirrorImage> MIRRORING =
        Optional.of(MirrorAwareAuthorizerTest.image(DesiredState.MIRRORING, PartitionState.MIRRORING));
    private static final List<AclOperation> CHANGES = List.of(AclOperation.ALTER, AclOperation.DELETE, AclOperation.ALTER_CONFIGS);

    private static Action on(String topic, AclOperation operation) {
        return new Action(operation, new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL), 1, true, true);
    }

    @Test
    void aReadOnlyMirrorTopicRefusesEveryControllerChangeToAnyone() {
        for (AclOperation op : CHANGES) {
            assertEquals(Verdict.READ_ONLY, ControllerTopicRule.decide(MIRRORING, on("t", op), false), op.toString());
        }
        assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(MIRRORING, on("t", AclOperation.CREATE), false), "creating is not a change");
        assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(MIRRORING, on("t", AclOperation.DESCRIBE_CONFIGS), false));
    }

    /** A source's {@code __audit}, mirrored, is a mirror topic like any other: only the cluster's own topics are exempt. */
    @Test
    void aMirrorTopicNamedWithTwoUnderscoresIsReadOnlyToo() {
        Optional<MirrorImage> audit = Optional.of(MirrorAwareAuthorizerTest.image("__audit", DesiredState.MIRRORING, PartitionState.MIRRORING));
        for (AclOperation op : CHANGES) {
            assertEquals(Verdict.READ_ONLY, ControllerTopicRule.decide(audit, on("__audit", op), false), op.toString());
        }
    }

    @Test
    void theTrustedMetadataSyncMayGrowAMirrorTopicAndChangeItsConfigsButNotDeleteIt() {
        assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(MIRRORING, on("t", AclOperation.ALTER), true));
        assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(MIRRORING, on("t", AclOperation.ALTER_CONFIGS), true));
        assertEquals(Verdict.READ_ONLY, ControllerTopicRule.decide(MIRRORING, on("t", AclOperation.DELETE), true));
    }

    @Test
    void aTrustedConfigChangePassesOnlyAsIncrementalAlterConfigsWhoseValuesThePolicySees() {
        int legacyAlterConfigs = 33;
        assertTrue(ControllerTopicRule.trustedFor(on("t", AclOperation.ALTER_CONFIGS), ControllerTopicRule.INCREMENTAL_ALTER_CONFIGS, true));
        assertFalse(ControllerTopicRule.trustedFor(on("t", AclOperation.ALTER_CONFIGS), legacyAlterConfigs, true),
            "the legacy AlterConfigs removes what it does not name, unseen by the config policy");
        assertTrue(ControllerTopicRule.trustedFor(on("t", AclOperation.ALTER), 37, true), "CreatePartitions");
        assertFalse(ControllerTopicRule.trustedFor(on("t", AclOperation.ALTER_CONFIGS), ControllerTopicRule.INCREMENTAL_ALTER_CONFIGS, false));
        assertEquals(Verdict.READ_ONLY, ControllerTopicRule.decide(MIRRORING, on("t", AclOperation.ALTER_CONFIGS),
            ControllerTopicRule.trustedFor(on("t", AclOperation.ALTER_CONFIGS), legacyAlterConfigs, true)));
    }

    @Test
    void otherTopicsAndStoppedMirrorTopicsAreLeftToTheAcls() {
        Optional<MirrorImage> stopped = Optional.of(MirrorAwareAuthorizerTest.image(DesiredState.STOPPED, PartitionState.STOPPED));
        for (AclOperation op : CHANGES) {
            assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(MIRRORING, on("other", op), false), op.toString());
            assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(stopped, on("t", op), false), op.toString());
        }
    }

    @Test
    void beforeTheStateIsLoadedEveryNonInternalTopicChangeIsRefused() {
        for (AclOperation op : CHANGES) {
            assertEquals(Verdict.NOT_LOADED, ControllerTopicRule.decide(Optional.empty(), on("any", op), false), op.toString());
            assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(Optional.empty(), on("__consumer_offsets", op), false), op.toString());
            assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(Optional.empty(), on("__mirror_state", op), false), op.toString());
            assertEquals(Verdict.NOT_LOADED, ControllerTopicRule.decide(Optional.empty(), on("__audit", op), false),
                "a topic named __... may be a mirror topic: " + op);
        }
        assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(Optional.empty(), on("any", AclOperation.CREATE), false));
        assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(Optional.empty(), on("t", AclOperation.ALTER), true),
            "the trusted sync is not held back by a view still loading");
        Action prefixed = new Action(AclOperation.ALTER, new ResourcePattern(ResourceType.TOPIC, "any", PatternType.PREFIXED), 1, true, true);
        assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(Optional.empty(), prefixed, false), "not a request's topic");
    }

    @Test
    void aFencedTopicMayOnlyBeDeleted() {
        Optional<MirrorImage> fenced = Optional.of(MirrorImage.EMPTY.withFencedTopics(Set.of("f")));
        assertEquals(Verdict.FENCED, ControllerTopicRule.decide(fenced, on("f", AclOperation.ALTER), false));
        assertEquals(Verdict.FENCED, ControllerTopicRule.decide(fenced, on("f", AclOperation.ALTER_CONFIGS), false));
        assertEquals(Verdict.AS_ACLS, ControllerTopicRule.decide(fenced, on("f", AclOperation.DELETE), false));
    }

    @Test
    void theSyncIsTrustedByItsClientIdAndAControlPlanePrincipal() {
        String sync = InternalOperations.newClientId("cluster-mirror-2-controller");
        Set<String> superUsers = Set.of("User:broker");
        assertTrue(ControllerTopicRule.trusted(sync, "User:broker", true, superUsers));
        assertFalse(ControllerTopicRule.trusted(sync, "User:alice", true, superUsers), "not a super user");
        assertFalse(ControllerTopicRule.trusted("adminclient-1", "User:broker", true, superUsers), "a super user's own client");
        assertTrue(ControllerTopicRule.trusted(sync, "User:ANONYMOUS", false, Set.of()), "without ACLs the control plane is open");
        assertFalse(ControllerTopicRule.trusted("adminclient-1", "User:ANONYMOUS", false, Set.of()), "a careless operator");
    }

    @Test
    void onlyClientIdsOfTheExtensionsFormAreRecognised() {
        assertTrue(InternalOperations.isExtensionClientId(InternalOperations.newClientId("cluster-mirror-1-controller")));
        assertFalse(InternalOperations.isExtensionClientId("cluster-mirror-1-controller"), "no random suffix");
        assertFalse(InternalOperations.isExtensionClientId("adminclient-1"));
        assertFalse(InternalOperations.isExtensionClientId(null));
    }
}
