package io.clustermirror.testsupport;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The ports of a launched cluster's listeners, from {@link FreePorts}: per node, the port each of its listeners binds
 * (the brokers' listeners of {@link ClusterTopology#listeners()} on a broker, {@link ClusterTopology#CONTROLLER_LISTENER}
 * on a controller) and the port it is advertised at: its own, or another's in front of it such as a
 * {@link FaultProxy}'s ({@link #advertise}). Not thread-safe: set up before the nodes start.
 */
public final class ListenerPorts {
    private final Map<Integer, Map<String, Integer>> bound = new TreeMap<>();
    private final Map<Integer, Map<String, Integer>> advertised = new TreeMap<>();

    /** Ports for every node of {@code topology}: its {@link ClusterTopology#fixedPorts() fixed ones}, and free ones. */
    public static ListenerPorts allocate(ClusterTopology topology) {
        ListenerPorts ports = new ListenerPorts();
        topology.nodes().forEach(node -> ports.allocate(topology, node));
        topology.fixedPorts().forEach(f -> ports.use(f.nodeId(), f.listener(), f.port(), f.advertisedPort()));
        return ports;
    }

    /** Ports for one more node of {@code topology} (a broker added to a running cluster). */
    public void allocate(ClusterTopology topology, ClusterTopology.Node node) {
        Map<String, Integer> ports = new LinkedHashMap<>();
        if (node.role().broker()) {
            topology.listeners().forEach(l -> ports.put(l.name(), FreePorts.next()));
        }
        if (node.role().controller()) {
            ports.put(ClusterTopology.CONTROLLER_LISTENER, FreePorts.next());
        }
        bound.put(node.id(), ports);
        advertised.put(node.id(), new LinkedHashMap<>(ports));
    }

    /**
     * Binds the node's listener to {@code port}, chosen by the caller (a proxy in front of it already forwards there), and
     * advertises it at {@code advertisedPort}.
     */
    private void use(int nodeId, String listener, int port, int advertisedPort) {
        lookUp(bound, nodeId, listener);
        bound.get(nodeId).put(listener, port);
        advertised.get(nodeId).put(listener, advertisedPort);
    }

    /** The port the node's listener binds; fails if the node has no such listener. */
    public int port(int nodeId, String listener) {
        return lookUp(bound, nodeId, listener);
    }

    /** The port clients are told to reach the node's listener at. */
    public int advertisedPort(int nodeId, String listener) {
        return lookUp(advertised, nodeId, listener);
    }

    /** Advertises the node's listener at {@code port} (something in front of it) instead of its own port. */
    public void advertise(int nodeId, String listener, int port) {
        lookUp(advertised, nodeId, listener);
        advertised.get(nodeId).put(listener, port);
    }

    private static int lookUp(Map<Integer, Map<String, Integer>> ports, int nodeId, String listener) {
        Integer port = ports.getOrDefault(nodeId, Map.of()).get(listener);
        if (port == null) {
            throw new IllegalArgumentException("node " + nodeId + " has no listener " + listener + ": " + ports.get(nodeId));
        }
        return port;
    }
}
