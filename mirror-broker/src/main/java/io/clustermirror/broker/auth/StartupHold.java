package io.clustermirror.broker.auth;

import org.apache.kafka.common.Endpoint;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Holds a starting broker's client listeners until its extension has loaded the mirror image, so that no client writes
 * while the broker cannot tell mirror topics from others (it would have to refuse the write with an error producers do
 * not retry). Kafka starts each listener's acceptor once the authorizer's future for it completes.
 *
 * <p>Invariants: the inter-broker listener, the controller listeners and Kafka's {@code early.start.listeners} are never
 * held (the extension's own clients load the image through the inter-broker listener); a held listener opens when the
 * image is loaded, or after {@value #HOLD_MAX_MS_CONFIG} (the authorizer then refuses client writes until it is
 * loaded), and never if attaching the extension fails: the broker then fails to start.
 */
final class StartupHold {
    /** How long a starting broker holds its client listeners at most while its extension loads the mirror image. */
    static final String HOLD_MAX_MS_CONFIG = "cluster.mirror.startup.hold.max.ms";
    static final long HOLD_MAX_MS_DEFAULT = 60_000;

    private static final Logger log = LoggerFactory.getLogger(StartupHold.class);

    private StartupHold() {
    }

    /** The listeners that wait for the mirror image: all but the inter-broker, controller and early-start ones. */
    static Set<Endpoint> held(AuthorizerServerInfo serverInfo, Set<String> controllerListeners) {
        String interBroker = listenerOf(serverInfo.interBrokerEndpoint());
        return serverInfo.endpoints().stream()
            .filter(e -> !listenerOf(e).equals(interBroker) && !controllerListeners.contains(listenerOf(e))
                && !serverInfo.earlyStartListeners().contains(listenerOf(e)))
            .collect(Collectors.toUnmodifiableSet());
    }

    /** The listeners of a start call for the node's controller (combined node), not its broker. */
    static boolean onlyControllerListeners(AuthorizerServerInfo serverInfo, Set<String> controllerListeners) {
        return serverInfo.endpoints().stream().allMatch(e -> controllerListeners.contains(listenerOf(e)));
    }

    /**
     * The endpoint's listener name. Through {@code listenerName()}, which every supported line has ({@code listener()}
     * came in 4.1); a broker's endpoints always carry one.
     */
    private static String listenerOf(Endpoint endpoint) {
        return endpoint.listenerName().orElse("");
    }

    /**
     * Runs {@code attach} on a thread of its own and returns, per listener, Kafka's future combined with the hold for the
     * held ones ({@link #held}).
     *
     * @param loaded once {@code attach} has returned: when the extension it attached has loaded the image (empty if it
     *               attached none)
     */
    static Map<Endpoint, CompletionStage<Void>> attachAndHold(Map<Endpoint, ? extends CompletionStage<Void>> aclFutures,
                                                              AuthorizerServerInfo serverInfo, Set<String> controllerListeners,
                                                              long holdMaxMs, Runnable attach,
                                                              Supplier<Optional<CompletableFuture<Void>>> loaded) {
        int nodeId = serverInfo.brokerId();
        Set<Endpoint> held = held(serverInfo, controllerListeners);
        CompletableFuture<Void> attached = new CompletableFuture<>();
        Thread attacher = new Thread(() -> {
            try {
                attach.run();
                attached.complete(null);
            } catch (Throwable e) {
                attached.completeExceptionally(e);
            }
        }, "cluster-mirror-attach-" + nodeId);
        attacher.setDaemon(true);
        attacher.start();
        if (held.isEmpty()) {
            log.warn("Broker {} has no client listener apart from its inter-broker listener, so it serves clients before its "
                + "Cluster Mirror state is loaded and refuses client writes to topics until then (TOPIC_AUTHORIZATION_FAILED, "
                + "not retried by producers). Give clients a listener of their own, separate from inter.broker.listener.name, "
                + "to close this window", nodeId);
            return new HashMap<>(aclFutures);
        }
        List<String> names = held.stream().map(StartupHold::listenerOf).sorted().toList();
        log.info("Broker {} opens its client listeners {} once its Cluster Mirror state is loaded (at most {}={} ms)",
            nodeId, names, HOLD_MAX_MS_CONFIG, holdMaxMs);
        CompletableFuture<Void> hold = attached
            .thenCompose(v -> loaded.get().orElseThrow(() -> new IllegalStateException(
                "the Cluster Mirror extension of broker " + nodeId + " did not register")).thenApply(done -> true))
            .completeOnTimeout(false, holdMaxMs, TimeUnit.MILLISECONDS)
            .thenAccept(loadedInTime -> {
                if (loadedInTime) {
                    log.info("Broker {} opens its client listeners {}: its Cluster Mirror state is loaded", nodeId, names);
                } else {
                    log.warn("Broker {} opens its client listeners {} before its Cluster Mirror state is loaded: not loaded "
                        + "within {}={} ms (are __mirror_metadata and __mirror_state available?). Until it is, client writes "
                        + "to every topic but internal ones are refused (TOPIC_AUTHORIZATION_FAILED)", nodeId, names,
                        HOLD_MAX_MS_CONFIG, holdMaxMs);
                }
            });
        Map<Endpoint, CompletionStage<Void>> futures = new HashMap<>();
        aclFutures.forEach((endpoint, acls) ->
            futures.put(endpoint, held.contains(endpoint) ? acls.thenCompose(v -> hold) : acls));
        return futures;
    }
}
