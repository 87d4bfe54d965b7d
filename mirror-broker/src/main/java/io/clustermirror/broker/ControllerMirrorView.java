package io.clustermirror.broker;

import io.clustermirror.broker.bridge.ControllerHandle;
import io.clustermirror.broker.controller.MirrorImageTailer;
import io.clustermirror.broker.node.ExtensionRegistry;
import io.clustermirror.broker.node.LocalClients;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What a controller-only node knows of the mirror topics, so that its authorizer keeps them read-only: Kafka's brokers
 * forward CreatePartitions, DeleteTopics and topic config changes to the active controller, which authorizes them itself.
 * A {@link MirrorImageTailer} reads {@code __mirror_metadata} and {@code __mirror_state} through the cluster's brokers,
 * with the clients the brokers' extension uses ({@link LocalClients}: {@code cluster.mirror.local.*} for security).
 *
 * <p>Bootstrap servers: {@value #BOOTSTRAP_CONFIG} if set, else the listeners of the unfenced brokers registered in the
 * node's metadata image ({@link #bootstrapServers}). Until a broker registers, and until the tailer has loaded the state
 * committed when it started, the node's view is not ready and its authorizer fails closed for those topic changes
 * ({@code MirrorAwareAuthorizer}). Once loaded the view follows the internal topics; while the brokers cannot be
 * reached it keeps its last image (it never moves backwards), as a broker's does.
 */
public final class ControllerMirrorView implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ControllerMirrorView.class);
    /** Where a controller reads the mirror state, if the listeners the brokers registered are not reachable from it. */
    public static final String BOOTSTRAP_CONFIG = LocalClients.PREFIX + CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG;
    private static final long REGISTRATION_POLL_MS = 1_000;
    private static final long WAITING_LOG_INTERVAL_MS = 30_000;

    private final ControllerHandle controller;
    private final Thread starter;
    private final Object closeSignal = new Object();
    private volatile boolean running = true;
    /** Set once a bootstrap is known (starter thread), read by close. */
    private volatile MirrorImageTailer tailer;

    private ControllerMirrorView(ControllerHandle controller) {
        this.controller = controller;
        this.starter = new Thread(this::startWhenBrokersKnown, "cluster-mirror-controller-view-" + controller.nodeId());
        this.starter.setDaemon(true);
    }

    /** Starts the view of a started controller-only node; its authorizer refuses mirror-topic changes until it has loaded. */
    public static ControllerMirrorView start(ControllerHandle controller) {
        ControllerMirrorView view = new ControllerMirrorView(controller);
        view.starter.start();
        return view;
    }

    /**
     * The bootstrap servers of a controller's clients to its brokers: {@value #BOOTSTRAP_CONFIG} if set; else the
     * registered listeners named {@code interBrokerListener}; else those of the clients' security protocol
     * ({@code cluster.mirror.local.security.protocol}, PLAINTEXT by default). Empty while none is known.
     */
    static Optional<String> bootstrapServers(Map<String, ?> configs, List<Endpoint> brokerListeners, String interBrokerListener) {
        Object explicit = configs.get(BOOTSTRAP_CONFIG);
        if (explicit != null && !explicit.toString().isBlank()) {
            return Optional.of(explicit.toString().trim());
        }
        Set<String> named = addresses(brokerListeners.stream().filter(e -> Optional.of(interBrokerListener).equals(e.listenerName())).toList());
        if (!named.isEmpty()) {
            return Optional.of(String.join(",", named));
        }
        Object protocol = configs.get(LocalClients.PREFIX + CommonClientConfigs.SECURITY_PROTOCOL_CONFIG);
        SecurityProtocol wanted = protocol == null ? SecurityProtocol.PLAINTEXT : SecurityProtocol.forName(protocol.toString().trim());
        Set<String> matching = addresses(brokerListeners.stream().filter(e -> e.securityProtocol() == wanted).toList());
        return matching.isEmpty() ? Optional.empty() : Optional.of(String.join(",", matching));
    }

    private static Set<String> addresses(List<Endpoint> endpoints) {
        Set<String> addresses = new LinkedHashSet<>();
        for (Endpoint e : endpoints) {
            if (e.host() != null && !e.host().isBlank()) {
                addresses.add(e.host() + ":" + e.port());
            }
        }
        return addresses;
    }

    private void startWhenBrokersKnown() {
        long lastWaitingLog = 0;
        while (running) {
            try {
                Optional<String> bootstrap = bootstrapServers(controller.configs(), controller.brokerEndpoints(),
                    controller.interBrokerListenerName());
                if (bootstrap.isPresent()) {
                    startTailer(bootstrap.get());
                    return;
                }
            } catch (RuntimeException e) {
                // Invalid client configs: nothing changes until the node restarts with fixed ones.
                log.error("Controller {} cannot read the mirror state ({}): fix the {}* settings and restart it; until then it "
                    + "refuses CreatePartitions, DeleteTopics and topic config changes on every topic", controller.nodeId(), e.toString(),
                    LocalClients.PREFIX);
                return;
            }
            long now = System.currentTimeMillis();
            if (now - lastWaitingLog >= WAITING_LOG_INTERVAL_MS) {
                lastWaitingLog = now;
                log.info("Controller {} waits for a broker to register (or {}) to read the mirror state; until then it refuses "
                    + "CreatePartitions, DeleteTopics and topic config changes", controller.nodeId(), BOOTSTRAP_CONFIG);
            }
            synchronized (closeSignal) {
                try {
                    if (running) {
                        closeSignal.wait(REGISTRATION_POLL_MS);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void startTailer(String bootstrap) {
        int nodeId = controller.nodeId();
        LocalClients clients = new LocalClients(bootstrap, controller.configs(), nodeId);
        MirrorImageTailer started = new MirrorImageTailer(clients, nodeId, controller.metadataLogDir(), controller.metrics(), image -> { });
        synchronized (closeSignal) {
            if (!running) {
                return;
            }
            tailer = started;
        }
        ExtensionRegistry.register(controller.clusterId(), nodeId, started::image, started.loaded(), topic -> true);
        started.start();
        log.info("Controller {} of cluster {} reads the mirror state through the brokers at {} to keep mirror topics read-only",
            nodeId, controller.clusterId(), bootstrap);
    }

    /** Stops reading; the node's authorizer then fails closed again for the topic changes it keeps from mirror topics. */
    @Override
    public void close() {
        synchronized (closeSignal) {
            running = false;
            closeSignal.notifyAll();
        }
        try {
            starter.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        MirrorImageTailer started = tailer;
        if (started != null) {
            ExtensionRegistry.unregister(controller.clusterId(), controller.nodeId());
            started.close();
        }
    }
}
