package io.clustermirror.testsupport;

import org.apache.kafka.common.security.auth.SecurityProtocol;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What a test cluster is, whoever starts it: its nodes and their roles, the brokers' listeners and their security
 * protocols, how the controllers form the quorum, the server properties on top of the test defaults, the Kafka release
 * the nodes run, how they are launched and whether the cluster is a Cluster Mirror destination. One description serves
 * every back end: mirror-testkit's {@code MirrorTestCluster} (in this JVM), {@link LaunchedCluster} (each node its own
 * JVM) and the launchers built on it (mirror-it's {@code ProcessCluster} and {@code ReleaseSource}, the chaos run, the
 * benchmark). {@link KRaftConfigs#serverProperties} turns it into a node's server properties.
 *
 * <p>Immutable; a back end refuses what it cannot start (the in-JVM one, for example, only the test kit's node layout
 * and the build's Kafka).
 */
public final class ClusterTopology {
    /** The listener every controller has, and the name of {@code controller.listener.names}. */
    public static final String CONTROLLER_LISTENER = "CONTROLLER";
    /** The JVM heap of a launched node unless the topology says otherwise. */
    public static final String DEFAULT_HEAP = "-Xmx512m -Xms64m";

    /** How the nodes run. */
    public enum LaunchMode {
        /** In the test's JVM, on Kafka's test kit: the build's Kafka only. */
        IN_JVM,
        /** Each node its own JVM, started with the checkout's {@code bin/cluster-mirror-server-start.sh}. */
        LAUNCHER,
        /** Each node its own JVM: stock {@code kafka.Kafka} as Kafka's scripts run it, Cluster Mirror installed the drop-in way. */
        DROP_IN,
        /** Each node its own JVM: stock {@code kafka.Kafka} of {@link #kafkaRelease()}, without Cluster Mirror (a source of another release). */
        STOCK;

        /** Whether each node is a process of its own. */
        public boolean launched() {
            return this != IN_JVM;
        }
    }

    /** How the controllers find each other. */
    public enum Quorum {
        /** {@code controller.quorum.voters} naming every controller: a static quorum, formatted without {@code --standalone}. */
        STATIC,
        /**
         * {@code controller.quorum.bootstrap.servers}, the one controller formatted with {@code --standalone}: a dynamic
         * quorum (KIP-853), as {@code kafka-storage.sh format --standalone} sets up a new cluster.
         */
        STANDALONE,
        /** No KRaft: a ZooKeeper server in a JVM of its own (releases before 4.0 only; {@link LaunchMode#STOCK}). */
        ZOOKEEPER
    }

    /** One node: its {@code node.id} and roles. */
    public record Node(int id, NodeRole role) {
    }

    /**
     * A broker listener: its name, security protocol and the host it binds and is advertised at. Configure its security
     * with server properties under Kafka's prefix {@code listener.name.<lower-case name>.}.
     */
    public record Listener(String name, SecurityProtocol protocol, String host) {
    }

    /**
     * A port chosen by the caller for one node's listener, and the port it is advertised at: its own, or that of
     * something in front of it already listening, such as a {@link FaultProxy} that forwards to {@code port}.
     */
    public record FixedPort(int nodeId, String listener, int port, int advertisedPort) {
    }

    private final String name;
    private final List<Node> nodes;
    private final Quorum quorum;
    private final List<Listener> listeners;
    private final String interBrokerListener;
    private final String clientListener;
    private final Map<String, String> serverProperties;
    private final String kafkaRelease;
    private final LaunchMode launchMode;
    private final boolean mirrorDestination;
    private final String brokerHeap;
    private final String controllerHeap;
    private final String jvmOptions;
    private final List<FixedPort> fixedPorts;

    private ClusterTopology(Builder b) {
        this.name = b.name;
        this.nodes = List.copyOf(b.nodes.values());
        this.quorum = b.quorum;
        this.listeners = List.copyOf(b.listeners.values());
        this.interBrokerListener = b.interBrokerListener != null ? b.interBrokerListener : listeners.get(0).name();
        this.clientListener = b.clientListener != null ? b.clientListener : listeners.get(0).name();
        this.serverProperties = Collections.unmodifiableMap(new LinkedHashMap<>(b.serverProperties));
        this.kafkaRelease = b.kafkaRelease;
        this.launchMode = b.launchMode;
        this.mirrorDestination = b.mirrorDestination;
        this.brokerHeap = b.brokerHeap;
        this.controllerHeap = b.controllerHeap != null ? b.controllerHeap : b.brokerHeap;
        this.jvmOptions = b.jvmOptions;
        this.fixedPorts = List.copyOf(b.fixedPorts.values());
    }

    /** A new description of a cluster named {@code name} (in logs, directories and node names). */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** A builder holding this description, to derive another from it. */
    public Builder toBuilder() {
        Builder b = new Builder(name);
        nodes.forEach(n -> b.node(n.id(), n.role()));
        b.quorum = quorum;
        listeners.forEach(l -> b.listeners.put(l.name(), l));
        b.interBrokerListener = interBrokerListener;
        b.clientListener = clientListener;
        b.serverProperties.putAll(serverProperties);
        b.kafkaRelease = kafkaRelease;
        b.launchMode = launchMode;
        b.mirrorDestination = mirrorDestination;
        b.brokerHeap = brokerHeap;
        b.controllerHeap = controllerHeap;
        b.jvmOptions = jvmOptions;
        fixedPorts.forEach(f -> b.fixedPort(f.nodeId(), f.listener(), f.port(), f.advertisedPort()));
        return b;
    }

    /** The listener ports the caller chose (a launched back end's); every other port is a free one chosen at launch. */
    public List<FixedPort> fixedPorts() {
        return fixedPorts;
    }

    public String name() {
        return name;
    }

    /** Every node, by id. */
    public List<Node> nodes() {
        return nodes;
    }

    /** The nodes with the broker role (combined ones included), by id. */
    public List<Node> brokers() {
        return nodes.stream().filter(n -> n.role().broker()).toList();
    }

    /** The nodes with the controller role (combined ones included), by id. */
    public List<Node> controllers() {
        return nodes.stream().filter(n -> n.role().controller()).toList();
    }

    /** The node {@code id}; fails if there is none. */
    public Node node(int id) {
        return nodes.stream().filter(n -> n.id() == id).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("no node " + id + " in " + name + ": " + nodes));
    }

    public Quorum quorum() {
        return quorum;
    }

    /** The brokers' listeners, in the order they were added (the controller's own is not one of them). */
    public List<Listener> listeners() {
        return listeners;
    }

    /** The listener the brokers (and the extension's local clients) talk to each other on. */
    public String interBrokerListener() {
        return interBrokerListener;
    }

    /** The listener whose addresses a cluster's {@code bootstrapServers()} gives. */
    public String clientListener() {
        return clientListener;
    }

    /** Server properties of every node, on top of (and overriding) {@link KRaftConfigs#serverProperties}'s. */
    public Map<String, String> serverProperties() {
        return serverProperties;
    }

    /** The Apache Kafka release the nodes run; empty for the build's own. */
    public Optional<String> kafkaRelease() {
        return Optional.ofNullable(kafkaRelease);
    }

    public LaunchMode launchMode() {
        return launchMode;
    }

    /** Whether the cluster is a Cluster Mirror destination: the extension (and its authorizer) on every node. */
    public boolean mirrorDestination() {
        return mirrorDestination;
    }

    /** The {@code KAFKA_HEAP_OPTS} of a launched node of this role. */
    public String heap(NodeRole role) {
        return role == NodeRole.CONTROLLER ? controllerHeap : brokerHeap;
    }

    /** JVM options of every launched node ({@code KAFKA_OPTS}: system properties, a test agent); empty if none. */
    public String jvmOptions() {
        return jvmOptions;
    }

    @Override
    public String toString() {
        return "ClusterTopology(" + name + ", " + launchMode + kafkaRelease().map(r -> " on Kafka " + r).orElse("") + ", nodes=" + nodes
            + ", quorum=" + quorum + ", listeners=" + listeners + (mirrorDestination ? ", mirror destination" : "") + ")";
    }

    /** Builds a {@link ClusterTopology}; every setter returns the builder. */
    public static final class Builder {
        private final String name;
        private final Map<Integer, Node> nodes = new TreeMap<>();
        private Quorum quorum = Quorum.STATIC;
        private final Map<String, Listener> listeners = new LinkedHashMap<>();
        private String interBrokerListener;
        private String clientListener;
        private final Map<String, String> serverProperties = new LinkedHashMap<>();
        private String kafkaRelease;
        private LaunchMode launchMode = LaunchMode.LAUNCHER;
        private boolean mirrorDestination;
        private String brokerHeap = DEFAULT_HEAP;
        private String controllerHeap;
        private String jvmOptions = "";
        private final Map<String, FixedPort> fixedPorts = new LinkedHashMap<>();

        private Builder(String name) {
            this.name = name;
        }

        /** {@code count} combined nodes, ids 1 to {@code count}. */
        public Builder combined(int count) {
            return nodes(NodeRole.COMBINED, 1, count);
        }

        /** {@code controllers} controller-only nodes (ids from 1), then {@code brokers} broker-only nodes (the next ids). */
        public Builder dedicated(int controllers, int brokers) {
            return nodes(NodeRole.CONTROLLER, 1, controllers).nodes(NodeRole.BROKER, controllers + 1, brokers);
        }

        /** {@code count} nodes of {@code role}, ids from {@code firstId} on. */
        public Builder nodes(NodeRole role, int firstId, int count) {
            for (int i = 0; i < count; i++) {
                node(firstId + i, role);
            }
            return this;
        }

        /** One node; replaces a node of the same id. */
        public Builder node(int id, NodeRole role) {
            nodes.put(id, new Node(id, role));
            return this;
        }

        public Builder quorum(Quorum quorum) {
            this.quorum = quorum;
            return this;
        }

        /** A broker listener bound to and advertised at {@code localhost}; the first one is the default inter-broker and client listener. */
        public Builder listener(String listenerName, SecurityProtocol protocol) {
            return listener(listenerName, protocol, "localhost");
        }

        /** A broker listener bound to and advertised at {@code host}. Names are upper case, as Kafka normalises them. */
        public Builder listener(String listenerName, SecurityProtocol protocol, String host) {
            String normalised = listenerName.toUpperCase(Locale.ROOT);
            if (normalised.equals(CONTROLLER_LISTENER)) {
                throw new IllegalArgumentException("Listener " + CONTROLLER_LISTENER + " is the controllers' own");
            }
            listeners.put(normalised, new Listener(normalised, protocol, host));
            return this;
        }

        /** The listener brokers talk to each other on; the first listener if unset. */
        public Builder interBrokerListener(String listenerName) {
            this.interBrokerListener = listenerName.toUpperCase(Locale.ROOT);
            return this;
        }

        /** The listener clients bootstrap from; the first listener if unset. */
        public Builder clientListener(String listenerName) {
            this.clientListener = listenerName.toUpperCase(Locale.ROOT);
            return this;
        }

        /** A server property of every node, controllers included (they apply broker defaults such as {@code num.partitions}). */
        public Builder serverProperty(String key, Object value) {
            serverProperties.put(key, String.valueOf(value));
            return this;
        }

        /** Server properties of every node, in their order. */
        public Builder serverProperties(Map<String, String> properties) {
            serverProperties.putAll(properties);
            return this;
        }

        /** The Apache Kafka release the nodes run (a launched back end's choice); the build's own if unset. */
        public Builder kafkaRelease(String release) {
            this.kafkaRelease = release;
            return this;
        }

        public Builder launchMode(LaunchMode launchMode) {
            this.launchMode = launchMode;
            return this;
        }

        /** A Cluster Mirror destination: the extension and its authorizer on every node. */
        public Builder mirrorDestination(boolean mirrorDestination) {
            this.mirrorDestination = mirrorDestination;
            return this;
        }

        /** The heap of every launched node ({@code KAFKA_HEAP_OPTS}), and of controller-only ones unless {@link #controllerHeap} is set. */
        public Builder heap(String heap) {
            this.brokerHeap = heap;
            return this;
        }

        /** The heap of controller-only launched nodes. */
        public Builder controllerHeap(String heap) {
            this.controllerHeap = heap;
            return this;
        }

        /** JVM options of every launched node ({@code KAFKA_OPTS}). */
        public Builder jvmOptions(String options) {
            this.jvmOptions = options;
            return this;
        }

        /**
         * Binds node {@code nodeId}'s listener to {@code port} and advertises it at {@code advertisedPort}: a proxy
         * listening at {@code advertisedPort} and forwarding to {@code port} then carries every connection of the clients
         * of that listener, not only their bootstrap. Launched back ends only.
         */
        public Builder fixedPort(int nodeId, String listenerName, int port, int advertisedPort) {
            String normalised = listenerName.toUpperCase(Locale.ROOT);
            fixedPorts.put(nodeId + "/" + normalised, new FixedPort(nodeId, normalised, port, advertisedPort));
            return this;
        }

        /**
         * The description. Without listeners the brokers have one, {@code PLAINTEXT}; fails without nodes, with a node
         * role the quorum cannot have, or with an inter-broker or client listener that is not one of the listeners.
         */
        public ClusterTopology build() {
            if (nodes.isEmpty()) {
                throw new IllegalStateException("Cluster " + name + " has no nodes");
            }
            if (listeners.isEmpty()) {
                listener("PLAINTEXT", SecurityProtocol.PLAINTEXT);
            }
            for (String chosen : Arrays.asList(interBrokerListener, clientListener)) {
                if (chosen != null && !listeners.containsKey(chosen)) {
                    throw new IllegalStateException("Listener " + chosen + " of cluster " + name + " is not one of " + listeners.keySet());
                }
            }
            for (FixedPort f : fixedPorts.values()) {
                Node node = nodes.get(f.nodeId());
                if (node == null || !node.role().broker() || !listeners.containsKey(f.listener())) {
                    throw new IllegalStateException("Cluster " + name + ": a fixed port for listener " + f.listener() + " of node "
                        + f.nodeId() + ", which is not a broker with that listener: " + nodes.values() + ", " + listeners.keySet());
                }
            }
            boolean hasController = nodes.values().stream().anyMatch(n -> n.role().controller());
            if (quorum == Quorum.ZOOKEEPER ? hasController : !hasController) {
                throw new IllegalStateException("Cluster " + name + ": a " + quorum + " quorum "
                    + (hasController ? "has no KRaft controllers" : "needs a KRaft controller") + ": " + nodes.values());
            }
            return new ClusterTopology(this);
        }
    }
}
