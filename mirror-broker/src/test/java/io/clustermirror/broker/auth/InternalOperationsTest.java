package io.clustermirror.broker.auth;

import io.clustermirror.broker.auth.InternalOperations.Operation;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class InternalOperationsTest {
    private static AuthorizableRequestContext client(String clientId) {
        return new TestRequestContext(KafkaPrincipal.ANONYMOUS, clientId);
    }

    private static Action alter(String topic, PatternType patternType) {
        return new Action(AclOperation.ALTER, new ResourcePattern(ResourceType.TOPIC, topic, patternType), 1, true, true);
    }

    @Test
    void onlyTheRegisteredClientsExactOperationsPassAndOnlyWhileInFlight() {
        String id = InternalOperations.newClientId("cluster-mirror-1-sync");
        assertNotEquals(id, InternalOperations.newClientId("cluster-mirror-1-sync"), "every client gets its own id");
        assertTrue(id.startsWith("cluster-mirror-1-sync-") && id.length() > "cluster-mirror-1-sync-".length() + 30, id);
        assertFalse(InternalOperations.isInternal(client(id), alter("t", PatternType.LITERAL)), "nothing before begin");
        try (InternalOperations.Scope ignored = InternalOperations.begin(id, List.of(Operation.topic("t", AclOperation.ALTER)))) {
            assertTrue(InternalOperations.isInternal(client(id), alter("t", PatternType.LITERAL)));
            assertFalse(InternalOperations.isInternal(client("cluster-mirror-1-sync"), alter("t", PatternType.LITERAL)), "another client id");
            assertFalse(InternalOperations.isInternal(client(id), alter("u", PatternType.LITERAL)), "another topic");
            assertFalse(InternalOperations.isInternal(client(id), alter("t", PatternType.PREFIXED)), "only literal resources");
            assertFalse(InternalOperations.isInternal(client(id), new Action(AclOperation.DELETE,
                new ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL), 1, true, true)), "another operation");
            List<AuthorizationResult> results = new ArrayList<>(List.of(AuthorizationResult.DENIED, AuthorizationResult.DENIED));
            InternalOperations.allowInternal(client(id), List.of(alter("t", PatternType.LITERAL), alter("u", PatternType.LITERAL)), results);
            assertEquals(List.of(AuthorizationResult.ALLOWED, AuthorizationResult.DENIED), results);
        }
        assertFalse(InternalOperations.isInternal(client(id), alter("t", PatternType.LITERAL)), "nothing after close");
    }

    @Test
    void overlappingCallsKeepTheOperationUntilTheLastEnds() {
        String id = InternalOperations.newClientId("cluster-mirror-x");
        InternalOperations.Scope first = InternalOperations.begin(id, List.of(Operation.topic("t", AclOperation.ALTER)));
        InternalOperations.Scope second = InternalOperations.begin(id, List.of(Operation.topic("t", AclOperation.ALTER)));
        first.close();
        assertTrue(InternalOperations.isInternal(client(id), alter("t", PatternType.LITERAL)));
        second.close();
        assertFalse(InternalOperations.isInternal(client(id), alter("t", PatternType.LITERAL)));
    }
}
