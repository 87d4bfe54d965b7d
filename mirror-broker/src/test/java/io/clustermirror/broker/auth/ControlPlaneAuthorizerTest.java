package io.clustermirror.broker.auth;

import io.clustermirror.broker.node.ExtensionRegistry;
import io.clustermirror.broker.auth.ControlPlaneRules.Requirement;
import io.clustermirror.common.InternalTopics;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.apache.kafka.common.acl.AclOperation.ALTER;
import static org.apache.kafka.common.acl.AclOperation.ALTER_CONFIGS;
import static org.apache.kafka.common.acl.AclOperation.CREATE;
import static org.apache.kafka.common.acl.AclOperation.DELETE;
import static org.apache.kafka.common.acl.AclOperation.DESCRIBE;
import static org.apache.kafka.common.acl.AclOperation.DESCRIBE_CONFIGS;
import static org.apache.kafka.common.acl.AclOperation.READ;
import static org.apache.kafka.common.acl.AclOperation.WRITE;
import static org.apache.kafka.server.authorizer.AuthorizationResult.ALLOWED;
import static org.apache.kafka.server.authorizer.AuthorizationResult.DENIED;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The control plane's rules on a real StandardAuthorizer with ACLs: commands need ALTER on the cluster, reads DESCRIBE
 * on the cluster, and the controller's outputs are the extension's (a super user) whatever the ACLs grant.
 */
class ControlPlaneAuthorizerTest {
    private static final String EXTENSION = "User:broker";
    /** May read and write every {@code __mirror_*} topic and use the controller's transactional id and group. */
    private static final String TOPIC_USER = "User:alice";
    private static final String OPERATOR = "User:operator";
    private static final String VIEWER = "User:viewer";
    private static final String NOBODY = "User:nobody";

    @Test
    void mapsEveryActionOnTheControlPlane() {
        for (String topic : InternalTopics.ALL) {
            for (AclOperation read : List.of(READ, DESCRIBE, DESCRIBE_CONFIGS)) {
                assertEquals(Requirement.CLUSTER_DESCRIBE, requirement(ResourceType.TOPIC, topic, read), read + " " + topic);
            }
        }
        for (AclOperation change : List.of(WRITE, CREATE, DELETE, ALTER, ALTER_CONFIGS)) {
            assertEquals(Requirement.CLUSTER_ALTER, requirement(ResourceType.TOPIC, InternalTopics.COMMANDS, change), change.name());
            assertEquals(Requirement.EXTENSION_ONLY, requirement(ResourceType.TOPIC, InternalTopics.METADATA, change), change.name());
            assertEquals(Requirement.EXTENSION_ONLY, requirement(ResourceType.TOPIC, InternalTopics.STATE, change), change.name());
        }
        assertEquals(Requirement.EXTENSION_ONLY, requirement(ResourceType.TRANSACTIONAL_ID, InternalTopics.CONTROLLER_TRANSACTIONAL_ID, WRITE));
        assertEquals(Requirement.CLUSTER_DESCRIBE, requirement(ResourceType.TRANSACTIONAL_ID, InternalTopics.CONTROLLER_TRANSACTIONAL_ID, DESCRIBE));
        assertEquals(Requirement.EXTENSION_ONLY, requirement(ResourceType.GROUP, InternalTopics.CONTROLLER_GROUP, READ), "join or commit");
        assertEquals(Requirement.EXTENSION_ONLY, requirement(ResourceType.GROUP, InternalTopics.CONTROLLER_GROUP, DELETE));
        assertEquals(Requirement.CLUSTER_DESCRIBE, requirement(ResourceType.GROUP, InternalTopics.CONTROLLER_GROUP, DESCRIBE));
        assertEquals(Requirement.AS_REQUESTED, requirement(ResourceType.TOPIC, "orders", WRITE));
        assertEquals(Requirement.AS_REQUESTED, requirement(ResourceType.GROUP, "app", READ));
        assertEquals(Requirement.AS_REQUESTED, requirement(ResourceType.TRANSACTIONAL_ID, "app-tx", WRITE));
        assertEquals(Requirement.AS_REQUESTED, requirement(ResourceType.CLUSTER, "kafka-cluster", ALTER));
    }

    @Test
    void commandsNeedAlterOnTheClusterWhateverTheTopicAcls() {
        MirrorAwareAuthorizer authorizer = authorizer(true);
        Action produceCommand = action(ResourceType.TOPIC, InternalTopics.COMMANDS, WRITE);
        assertEquals(DENIED, authorize(authorizer, TOPIC_USER, produceCommand));
        assertEquals(DENIED, authorize(authorizer, VIEWER, produceCommand));
        assertEquals(ALLOWED, authorize(authorizer, OPERATOR, produceCommand));
        assertEquals(ALLOWED, authorize(authorizer, EXTENSION, produceCommand));
        assertEquals(DENIED, authorize(authorizer, TOPIC_USER, action(ResourceType.TOPIC, InternalTopics.COMMANDS, CREATE)));
        assertEquals(ALLOWED, authorize(authorizer, OPERATOR, action(ResourceType.TOPIC, InternalTopics.COMMANDS, CREATE)),
            "the first command creates the topic");
    }

    @Test
    void readingTheControlPlaneNeedsDescribeOnTheCluster() {
        MirrorAwareAuthorizer authorizer = authorizer(true);
        for (String topic : InternalTopics.ALL) {
            for (AclOperation read : List.of(READ, DESCRIBE)) {
                Action action = action(ResourceType.TOPIC, topic, read);
                assertEquals(DENIED, authorize(authorizer, TOPIC_USER, action), read + " " + topic);
                assertEquals(ALLOWED, authorize(authorizer, VIEWER, action), read + " " + topic);
                assertEquals(ALLOWED, authorize(authorizer, OPERATOR, action), "ALTER implies DESCRIBE: " + read + " " + topic);
            }
        }
    }

    @Test
    void onlyTheExtensionChangesTheControllersOutputs() {
        MirrorAwareAuthorizer authorizer = authorizer(true);
        List<Action> extensionOnly = List.of(
            action(ResourceType.TOPIC, InternalTopics.METADATA, WRITE),
            action(ResourceType.TOPIC, InternalTopics.STATE, WRITE),
            action(ResourceType.TOPIC, InternalTopics.METADATA, DELETE),
            action(ResourceType.TOPIC, InternalTopics.STATE, ALTER_CONFIGS),
            action(ResourceType.TOPIC, InternalTopics.METADATA, CREATE),
            action(ResourceType.TRANSACTIONAL_ID, InternalTopics.CONTROLLER_TRANSACTIONAL_ID, WRITE),
            action(ResourceType.GROUP, InternalTopics.CONTROLLER_GROUP, READ),
            action(ResourceType.GROUP, InternalTopics.CONTROLLER_GROUP, DELETE));
        for (Action action : extensionOnly) {
            for (String principal : List.of(TOPIC_USER, OPERATOR)) {
                assertEquals(DENIED, authorize(authorizer, principal, action), principal + ": " + action);
            }
            assertEquals(ALLOWED, authorize(authorizer, EXTENSION, action), action.toString());
        }
    }

    /** In the extension's own JVM, its in-flight internal operations pass without a super user's principal. */
    @Test
    void theExtensionsInternalOperationsPassInItsJvm() {
        MirrorAwareAuthorizer authorizer = authorizer(true);
        String clientId = InternalOperations.newClientId("cluster-mirror-1-sync");
        TestRequestContext context = new TestRequestContext(new KafkaPrincipal("User", "alice"), clientId);
        Action write = action(ResourceType.TOPIC, InternalTopics.STATE, WRITE);
        assertEquals(DENIED, authorizer.authorize(context, List.of(write)).get(0));
        try (InternalOperations.Scope scope = InternalOperations.begin(clientId,
                List.of(InternalOperations.Operation.topic(InternalTopics.STATE, WRITE)))) {
            assertEquals(ALLOWED, authorizer.authorize(context, List.of(write)).get(0));
        }
        assertEquals(DENIED, authorizer.authorize(context, List.of(write)).get(0));
    }

    /** CreateTopics and DeleteTopics may not skip the check of each topic, or a cluster permission would reach the control plane. */
    @Test
    void clusterCreateAndDeleteReachNoControlPlaneTopic() {
        MirrorAwareAuthorizer authorizer = authorizer(true);
        for (AclOperation op : List.of(CREATE, DELETE)) {
            assertEquals(DENIED, authorize(authorizer, OPERATOR, action(ResourceType.CLUSTER, "kafka-cluster", op)), "withheld " + op);
            assertEquals(ALLOWED, authorize(authorizer, OPERATOR, action(ResourceType.TOPIC, "orders", op)), "any topic: " + op);
            assertEquals(DENIED, authorize(authorizer, OPERATOR, action(ResourceType.TOPIC, InternalTopics.STATE, op)), op.name());
            assertEquals(DENIED, authorize(authorizer, NOBODY, action(ResourceType.TOPIC, "orders", op)), op.name());
        }
    }

    /** An idempotent producer's InitProducerId asks for WRITE on some topic: a principal that may write commands may. */
    @Test
    void mayWriteSomeTopicWhoMayWriteCommands() {
        MirrorAwareAuthorizer authorizer = authorizer(true);
        assertEquals(ALLOWED, authorizer.authorizeByResourceType(context(OPERATOR), WRITE, ResourceType.TOPIC));
        assertEquals(DENIED, authorizer.authorizeByResourceType(context(VIEWER), WRITE, ResourceType.TOPIC));
        assertEquals(DENIED, authorizer.authorizeByResourceType(context(NOBODY), WRITE, ResourceType.TOPIC));
    }

    /** Without ACLs the node allows what a node without an authorizer allows: no principal can be told apart. */
    @Test
    void withoutAclsEverythingIsAllowedButTheClusterShortcuts() {
        MirrorAwareAuthorizer authorizer = authorizer(false);
        for (Action action : List.of(action(ResourceType.TOPIC, InternalTopics.COMMANDS, WRITE),
                action(ResourceType.TOPIC, InternalTopics.METADATA, WRITE),
                action(ResourceType.TRANSACTIONAL_ID, InternalTopics.CONTROLLER_TRANSACTIONAL_ID, WRITE),
                action(ResourceType.TOPIC, InternalTopics.STATE, DELETE))) {
            assertEquals(ALLOWED, authorize(authorizer, NOBODY, action), action.toString());
        }
        assertEquals(DENIED, authorize(authorizer, NOBODY, action(ResourceType.CLUSTER, "kafka-cluster", DELETE)));
    }

    private static Requirement requirement(ResourceType type, String name, AclOperation operation) {
        return ControlPlaneRules.requirement(action(type, name, operation));
    }

    /**
     * ACLs enforced (nothing allowed without an ACL), the extension a super user, and ACLs as in the integration test:
     * alice may do anything on the {@code __mirror_*} topics and the controller's transactional id and group.
     */
    private static MirrorAwareAuthorizer authorizer(boolean aclsEnabled) {
        // As on a node whose launcher or agent attaches the extension: the authorizer refuses to run anywhere else.
        ExtensionRegistry.expectAttachments("the test");
        MirrorAwareAuthorizer authorizer = new MirrorAwareAuthorizer();
        authorizer.configure(Map.of("super.users", EXTENSION + ";", "allow.everyone.if.no.acl.found", "false",
            "node.id", "1", MirrorAwareAuthorizer.ACLS_ENABLED_CONFIG, String.valueOf(aclsEnabled)));
        authorizer.withPluginMetrics(new PluginMetricsImpl(new Metrics(), Map.of()));
        authorizer.completeInitialLoad();
        allow(authorizer, TOPIC_USER, ResourceType.TOPIC, "__mirror_", PatternType.PREFIXED, AclOperation.ALL);
        allow(authorizer, TOPIC_USER, ResourceType.TRANSACTIONAL_ID, InternalTopics.CONTROLLER_TRANSACTIONAL_ID, PatternType.LITERAL, AclOperation.ALL);
        allow(authorizer, TOPIC_USER, ResourceType.GROUP, InternalTopics.CONTROLLER_GROUP, PatternType.LITERAL, AclOperation.ALL);
        allow(authorizer, OPERATOR, ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, ALTER);
        allow(authorizer, OPERATOR, ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, CREATE);
        allow(authorizer, OPERATOR, ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, DELETE);
        allow(authorizer, VIEWER, ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, DESCRIBE);
        return authorizer;
    }

    private static void allow(MirrorAwareAuthorizer authorizer, String principal, ResourceType type, String name,
                              PatternType patternType, AclOperation op) {
        authorizer.addAcl(Uuid.randomUuid(), StandardAcl.fromAclBinding(new AclBinding(new ResourcePattern(type, name, patternType),
            new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW))));
    }

    private static Action action(ResourceType type, String name, AclOperation operation) {
        return new Action(operation, new ResourcePattern(type, name, PatternType.LITERAL), 1, true, true);
    }

    private static AuthorizationResult authorize(MirrorAwareAuthorizer authorizer, String principal, Action action) {
        return authorizer.authorize(context(principal), List.of(action)).get(0);
    }

    private static AuthorizableRequestContext context(String principal) {
        return TestRequestContext.of(principal);
    }
}
