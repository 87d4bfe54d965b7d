package io.clustermirror.broker.auth;

import org.apache.kafka.common.ClusterResource;
import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;
import org.junit.jupiter.api.Test;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
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

    @Test
    void heldListenersOpenOnceTheImageIsLoaded() throws Exception {
        CompletableFuture<Void> loaded = new CompletableFuture<>();
        Map<Endpoint, CompletionStage<Void>> futures = attachAndHold(60_000, () -> { }, Optional.of(loaded));
        assertTrue(futures.get(INTERNAL).toCompletableFuture().isDone(), "the inter-broker listener opens at once");
        CompletableFuture<Void> client = futures.get(CLIENT).toCompletableFuture();
        assertThrows(TimeoutException.class, () -> client.get(200, TimeUnit.MILLISECONDS), "held until loaded");
        loaded.complete(null);
        client.get(10, TimeUnit.SECONDS);
    }

    @Test
    void heldListenersOpenAfterTheHoldMaxWhenTheImageDoesNotLoad() throws Exception {
        Map<Endpoint, CompletionStage<Void>> futures = attachAndHold(100, () -> { }, Optional.of(new CompletableFuture<>()));
        futures.get(CLIENT).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void aFailedAttachFailsTheHeldListenersOnly() {
        Map<Endpoint, CompletionStage<Void>> futures = attachAndHold(60_000, () -> {
            throw new IllegalStateException("Failed to attach");
        }, Optional.empty());
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> futures.get(CLIENT).toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertEquals("Failed to attach", e.getCause().getMessage());
        assertTrue(futures.get(INTERNAL).toCompletableFuture().isDone());
        assertFalse(futures.get(INTERNAL).toCompletableFuture().isCompletedExceptionally());
    }

    private static Map<Endpoint, CompletionStage<Void>> attachAndHold(long holdMaxMs, Runnable attach,
                                                                       Optional<CompletableFuture<Void>> loaded) {
        Map<Endpoint, CompletableFuture<Void>> acls = Map.of(INTERNAL, CompletableFuture.completedFuture(null),
            CLIENT, CompletableFuture.completedFuture(null));
        return StartupHold.attachAndHold(acls, info(List.of(INTERNAL, CLIENT), INTERNAL, List.of()), Set.of("CONTROLLER"),
            holdMaxMs, attach, () -> loaded);
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
