package io.clustermirror.broker.auth;

import io.clustermirror.common.InternalTopics;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.server.authorizer.Action;

import java.util.Set;

/**
 * What a client needs to act on a resource of the mirror control plane, so that mirror commands are authorized like
 * Kafka's admin API and the controller's outputs can only come from the extension. Clients reach the control plane
 * through ordinary topic, transactional id and group requests; this maps each such action to the permission it stands
 * for:
 * <ul>
 *   <li>Changing {@value InternalTopics#COMMANDS} (producing a command, creating the topic, deleting records or the topic,
 *       changing its configs) needs ALTER on the CLUSTER: every mirror command, from create to delete.</li>
 *   <li>Reading or describing any of {@link InternalTopics#ALL}, the controller's transactional id or its group needs
 *       DESCRIBE on the CLUSTER (which ALTER implies): list and describe, and reading a command's result.</li>
 *   <li>Changing {@value InternalTopics#METADATA} or {@value InternalTopics#STATE}, using the transactional id
 *       {@value InternalTopics#CONTROLLER_TRANSACTIONAL_ID}, or joining, committing to or deleting the group
 *       {@value InternalTopics#CONTROLLER_GROUP}: the extension only, whatever the ACLs say.</li>
 *   <li>Any other action: as requested.</li>
 * </ul>
 * Operations not listed as reads count as changes, so that an operation Kafka adds later fails closed.
 */
final class ControlPlaneRules {
    /** The permission an action stands for. */
    enum Requirement {
        /** Not the control plane's: the action itself is authorized. */
        AS_REQUESTED,
        /** A mirror command: authorized as ALTER on the CLUSTER instead. */
        CLUSTER_ALTER,
        /** A read of the control plane: authorized as DESCRIBE on the CLUSTER instead. */
        CLUSTER_DESCRIBE,
        /** One of the controller's outputs or its identity: the extension's own requests only. */
        EXTENSION_ONLY
    }

    private static final Set<AclOperation> TOPIC_READS = Set.of(AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS);
    /** READ on a group joins it or commits offsets to it: a change. */
    private static final Set<AclOperation> GROUP_OR_TRANSACTION_READS = Set.of(AclOperation.DESCRIBE);

    private ControlPlaneRules() {
    }

    static Requirement requirement(Action action) {
        ResourcePattern resource = action.resourcePattern();
        AclOperation operation = action.operation();
        return switch (resource.resourceType()) {
            case TOPIC -> topicRequirement(resource.name(), operation);
            case TRANSACTIONAL_ID -> controllerOwned(resource.name().equals(InternalTopics.CONTROLLER_TRANSACTIONAL_ID), operation);
            case GROUP -> controllerOwned(resource.name().equals(InternalTopics.CONTROLLER_GROUP), operation);
            default -> Requirement.AS_REQUESTED;
        };
    }

    private static Requirement topicRequirement(String topic, AclOperation operation) {
        if (!InternalTopics.isInternal(topic)) {
            return Requirement.AS_REQUESTED;
        }
        if (TOPIC_READS.contains(operation)) {
            return Requirement.CLUSTER_DESCRIBE;
        }
        return topic.equals(InternalTopics.COMMANDS) ? Requirement.CLUSTER_ALTER : Requirement.EXTENSION_ONLY;
    }

    private static Requirement controllerOwned(boolean owned, AclOperation operation) {
        if (!owned) {
            return Requirement.AS_REQUESTED;
        }
        return GROUP_OR_TRANSACTION_READS.contains(operation) ? Requirement.CLUSTER_DESCRIBE : Requirement.EXTENSION_ONLY;
    }
}
