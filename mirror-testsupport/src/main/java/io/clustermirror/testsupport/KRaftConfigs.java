package io.clustermirror.testsupport;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Server configs every test cluster sets, in-JVM or launched, so that it behaves the same at every size: no more
 * replicas than brokers, and a minimum ISR that survives the loss of one broker; and the one place that turns a
 * {@link ClusterTopology} into a launched KRaft node's server properties ({@link #serverProperties}).
 */
public final class KRaftConfigs {
    private KRaftConfigs() {
    }

    /** The replication factor of a cluster of {@code brokers} brokers: 3, or all of them if fewer. */
    public static int replicationFactor(int brokers) {
        // A cluster of controllers only (a test of a node that must refuse to start) still needs a valid factor.
        return Math.max(1, Math.min(3, brokers));
    }

    /** The minimum ISR that goes with {@link #replicationFactor}: 2 of 3, otherwise 1. */
    public static int minInsyncReplicas(int brokers) {
        return replicationFactor(brokers) >= 3 ? 2 : 1;
    }

    /**
     * The internal topics' replication (consumer offsets, transaction state, share-group state), at
     * {@link #replicationFactor} and {@link #minInsyncReplicas}, so that groups and transactions work in 1- and
     * 2-broker clusters and across a broker restart; and no delay for a group's first rebalance.
     */
    public static Map<String, String> internalTopics(int brokers) {
        String replicationFactor = String.valueOf(replicationFactor(brokers));
        String minIsr = String.valueOf(minInsyncReplicas(brokers));
        Map<String, String> configs = new LinkedHashMap<>();
        configs.put("offsets.topic.replication.factor", replicationFactor);
        configs.put("transaction.state.log.replication.factor", replicationFactor);
        configs.put("transaction.state.log.min.isr", minIsr);
        configs.put("share.coordinator.state.topic.replication.factor", replicationFactor);
        configs.put("share.coordinator.state.topic.min.isr", minIsr);
        configs.put("group.initial.rebalance.delay.ms", "0");
        return configs;
    }

    /**
     * A killed broker is fenced (and its partitions get new leaders) after the session timeout, and a restarted one
     * registers again only once its previous registration expired: 6 s instead of the default 9 s, still safe with a
     * heartbeat every second. For clusters whose tests kill and restart nodes.
     */
    public static Map<String, String> fastFencing() {
        Map<String, String> configs = new LinkedHashMap<>();
        configs.put("broker.session.timeout.ms", "6000");
        configs.put("broker.heartbeat.interval.ms", "1000");
        return configs;
    }

    /**
     * The server properties of a launched KRaft node of {@code topology} (besides {@code process.roles}, {@code node.id}
     * and {@code log.dirs}, which {@link LaunchedNode} writes): the quorum as the topology says; the brokers' listeners
     * at {@code ports} (bound and advertised) and the controller's {@code CONTROLLER} listener; one partition per new
     * topic at {@link #replicationFactor}; {@link #internalTopics}; then the topology's own server properties, which
     * override all of these. A controller's listener is advertised too in a {@link ClusterTopology.Quorum#STANDALONE}
     * quorum, whose voters learn each other's endpoints from it.
     */
    public static Map<String, String> serverProperties(ClusterTopology topology, ClusterTopology.Node node, ListenerPorts ports) {
        String controllerListener = ClusterTopology.CONTROLLER_LISTENER;
        int brokers = topology.brokers().size();
        Map<String, String> config = new LinkedHashMap<>();
        switch (topology.quorum()) {
            case STATIC -> config.put("controller.quorum.voters", topology.controllers().stream()
                .map(c -> c.id() + "@localhost:" + ports.port(c.id(), controllerListener)).collect(Collectors.joining(",")));
            case STANDALONE -> config.put("controller.quorum.bootstrap.servers", topology.controllers().stream()
                .map(c -> "localhost:" + ports.port(c.id(), controllerListener)).collect(Collectors.joining(",")));
            case ZOOKEEPER -> throw new IllegalArgumentException(topology.name() + " is not a KRaft cluster");
        }
        StringBuilder listeners = new StringBuilder();
        StringBuilder advertised = new StringBuilder();
        if (node.role().broker()) {
            for (ClusterTopology.Listener l : topology.listeners()) {
                listeners.append(',').append(l.name()).append("://").append(l.host()).append(':').append(ports.port(node.id(), l.name()));
                advertised.append(',').append(l.name()).append("://").append(l.host()).append(':')
                    .append(ports.advertisedPort(node.id(), l.name()));
            }
        }
        if (node.role().controller()) {
            String controller = "," + controllerListener + "://localhost:" + ports.port(node.id(), controllerListener);
            listeners.append(controller);
            if (topology.quorum() == ClusterTopology.Quorum.STANDALONE) {
                advertised.append(controller);
            }
        }
        config.put("listeners", listeners.substring(1));
        if (!advertised.isEmpty()) {
            config.put("advertised.listeners", advertised.substring(1));
        }
        config.put("listener.security.protocol.map", topology.listeners().stream().map(l -> l.name() + ":" + l.protocol().name)
            .collect(Collectors.joining(",", "", "," + controllerListener + ":PLAINTEXT")));
        // A controller-only node names it too: the extension there reads the mirror state on the brokers' listener.
        config.put("inter.broker.listener.name", topology.interBrokerListener());
        config.put("controller.listener.names", controllerListener);
        config.put("num.partitions", "1");
        config.put("default.replication.factor", String.valueOf(replicationFactor(brokers)));
        config.putAll(internalTopics(brokers));
        config.putAll(topology.serverProperties());
        return config;
    }
}
