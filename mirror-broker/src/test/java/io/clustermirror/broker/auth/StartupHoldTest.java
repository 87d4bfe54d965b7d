package io.clustermirror.broker.auth;

import org.apache.kafka.common.ClusterResource;
import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;
import org.junit.jupiter.api.Test;

import java.util.Collection;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StartupHoldTest {
    private static final Endpoint INTERNAL = endpoint("INTERNAL", 9092);
    private static final Endpoint CLIENT = endpoint("CLIENT", 9093);
    private static final Endpoint EARLY = endpoint("EARLY", 9094);
    private static final Endpoint CONTROLLER = endpoint("CONTROLLER", 9095);

    @Test
    void holdsEveryClientListenerButTheInterBrokerControllerAndEarlyStartOnes() {
        AuthorizerServerInfo broker = info(List.of(INTERNAL, CLIENT, EARLY), INTERNAL, List.of("EARLY"));
        assertEquals(Set.of(CLIENT), StartupHold.held(broker, Set.of("CONTROLLER")));
        assertFalse(StartupHold.onlyControllerListeners(broker, Set.of("CONTROLLER")));
    }

    @Test
    void holdsNothingWhenClientsShareTheInterBrokerListener() {
        AuthorizerServerInfo broker = info(List.of(INTERNAL), INTERNAL, List.of());
        assertEquals(Set.of(), StartupHold.held(broker, Set.of("CONTROLLER")));
    }

    @Test
    void aCombinedNodesControllerStartHoldsNothing() {
        AuthorizerServerInfo controller = info(List.of(CONTROLLER), CONTROLLER, List.of("CONTROLLER"));
        assertTrue(StartupHold.onlyControllerListeners(controller, Set.of("CONTROLLER")));
        assertEquals(Set.of(), StartupHold.held(controller, Set.of("CONTROLLER")));
    }

    private static Endpoint endpoint(String listener, int port) {
        return new Endpoint(listener, SecurityProtocol.PLAINTEXT, "localhost", port);
    }

    private static AuthorizerServerInfo info(List<Endpoint> endpoints, Endpoint interBroker, List<String> earlyStart) {
        return new AuthorizerServerInfo() {
            @Override
            public ClusterResource clusterResource() {
                return new ClusterResource("cluster");
            }

            @Override
            public int brokerId() {
                return 1;
            }

            @Override
            public Collection<Endpoint> endpoints() {
                return endpoints;
            }

            @Override
            public Endpoint interBrokerEndpoint() {
                return interBroker;
            }

            @Override
            public Collection<String> earlyStartListeners() {
                return earlyStart;
            }
        };
    }
}
