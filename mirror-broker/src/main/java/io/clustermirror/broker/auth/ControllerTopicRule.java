package io.clustermirror.broker.auth;

import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.image.MirrorImage;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.authorizer.Action;

import java.util.Optional;
import java.util.Set;

/**
 * The read-only rule of mirror topics as a controller-only node applies it (pure). Kafka's brokers forward CreatePartitions
 * (ALTER on the topic), DeleteTopics (DELETE) and topic config changes (ALTER_CONFIGS) to the active controller, which
 * authorizes them; every other topic operation is authorized by a broker, which applies the rule itself.
 *
 * <p>Invariants:
 * <ul>
 *   <li>a read-only mirror topic ({@link MirrorAwareAuthorizer#readOnlyMirrorOf}) never gets those changes, whoever
 *       asks (super users too), except growing it and changing its configs by the extension's own metadata sync, when the
 *       request is {@link #decide trusted}; a fenced topic ({@link MirrorImage#fencedTopics()}) the same, deleting it
 *       aside. A trusted request only looks like the sync's (its client id can be copied): what it may set is limited by
 *       {@link MirrorConfigPolicy} to the values the sync sets;</li>
 *   <li>while the node has not loaded the mirror state it cannot tell mirror topics from others, so it refuses those
 *       changes on every topic but the cluster's own ({@link InternalTopics#isClusterOwned}; a mirror topic may be
 *       named {@code __audit}): it fails closed;</li>
 *   <li>everything else is left to the ACLs. Creating topics is never touched (the extension creates mirror topics).</li>
 * </ul>
 */
final class ControllerTopicRule {
    /** The topic changes that the active controller authorizes. */
    static final Set<AclOperation> CONTROLLER_TOPIC_CHANGES = Set.of(AclOperation.ALTER, AclOperation.DELETE, AclOperation.ALTER_CONFIGS);
    /** What the extension's metadata sync does to mirror topics through the controller: grow them, sync their configs. */
    static final Set<AclOperation> EXTENSION_TOPIC_CHANGES = Set.of(AclOperation.ALTER, AclOperation.ALTER_CONFIGS);

    /**
     * The API key of IncrementalAlterConfigs, the sync's way to change topic configs. Kafka's policy sees only the configs
     * such a request names; the legacy AlterConfigs also removes every config it does not name, unseen by the policy
     * ({@link MirrorConfigRule}), so it never passes for the sync.
     */
    static final int INCREMENTAL_ALTER_CONFIGS = 44;

    /** What the rule decides for one action. */
    enum Verdict {
        /** Not the rule's business: the ACLs decide. */
        AS_ACLS,
        /** Refused: the node has not loaded the mirror state yet. */
        NOT_LOADED,
        /** Refused: a read-only mirror topic. */
        READ_ONLY,
        /** Refused: a topic fenced after the mirror state was lost. */
        FENCED
    }

    private ControllerTopicRule() {
    }

    /**
     * Whether a request passes for the extension's metadata sync on a controller, where the sync's in-flight operations
     * are not known ({@link InternalOperations}): its client id has the extension's form and its principal is trusted for
     * the control plane, a super user when ACLs are enforced, anyone when they are not (the control plane is open then).
     *
     * @param principal  the request's principal as {@code type:name}
     * @param superUsers {@code super.users} as {@code type:name}
     */
    static boolean trusted(String clientId, String principal, boolean aclsEnabled, Set<String> superUsers) {
        return InternalOperations.isExtensionClientId(clientId) && (!aclsEnabled || superUsers.contains(principal));
    }

    /**
     * Whether an action of a {@link #trusted} request passes for the sync's: a config change only by
     * IncrementalAlterConfigs ({@link #INCREMENTAL_ALTER_CONFIGS}), whose values {@link MirrorConfigPolicy} then checks.
     */
    static boolean trustedFor(Action action, int requestType, boolean trusted) {
        return trusted && (action.operation() != AclOperation.ALTER_CONFIGS || requestType == INCREMENTAL_ALTER_CONFIGS);
    }

    /**
     * @param loaded  the node's mirror image once loaded; empty before
     * @param trusted whether the action passes for the extension's metadata sync ({@link #trustedFor})
     */
    static Verdict decide(Optional<MirrorImage> loaded, Action action, boolean trusted) {
        if (action.resourcePattern().resourceType() != ResourceType.TOPIC
                || action.resourcePattern().patternType() != PatternType.LITERAL
                || !CONTROLLER_TOPIC_CHANGES.contains(action.operation())) {
            return Verdict.AS_ACLS;
        }
        String topic = action.resourcePattern().name();
        if (InternalTopics.isClusterOwned(topic) || (trusted && EXTENSION_TOPIC_CHANGES.contains(action.operation()))) {
            return Verdict.AS_ACLS;
        }
        if (loaded.isEmpty()) {
            return Verdict.NOT_LOADED;
        }
        MirrorImage image = loaded.get();
        if (MirrorAwareAuthorizer.readOnlyMirrorOf(image, topic).isPresent()) {
            return Verdict.READ_ONLY;
        }
        if (image.topic(topic).isEmpty() && image.fencedTopics().contains(topic) && action.operation() != AclOperation.DELETE) {
            return Verdict.FENCED;
        }
        return Verdict.AS_ACLS;
    }
}
