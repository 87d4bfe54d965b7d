package io.clustermirror.testkit;

import io.clustermirror.broker.ClusterMirrorExtension;
import io.clustermirror.broker.node.ExtensionRegistry;
import io.clustermirror.broker.bridge.BrokerHandle;
import io.clustermirror.broker.bridge.KafkaServerLauncher;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.testsupport.InJvmClusters;
import io.clustermirror.testsupport.KRaftConfigs;
import io.clustermirror.testsupport.TestCluster;
import io.clustermirror.testsupport.TestUtils;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.api.TestKitDefaults;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.config.ServerConfigs;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * An in-JVM KRaft cluster of stock Kafka (one controller and N brokers) for tests, optionally set up as a
 * Cluster Mirror destination: then every node runs the {@code MirrorAwareAuthorizer} and every broker has
 * the extension attached, re-attached after each restart. Source clusters need no extension.
 *
 * <pre>{@code
 * try (MirrorTestCluster source = MirrorTestCluster.builder().name("source").brokers(3).start();
 *      MirrorTestCluster destination = MirrorTestCluster.builder().name("destination").brokers(3).withExtension(true).start()) {
 *     ...
 * }
 * }</pre>
 *
 * Brokers keep their ports across restarts, so {@link #bootstrapServers()} stays valid.
 */
public final class MirrorTestCluster implements TestCluster, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorTestCluster.class);

    /** The newest production metadata version of the Kafka release we build against. */
    public static final MetadataVersion METADATA_VERSION = InJvmClusters.METADATA_VERSION;
    static final String MIRROR_AWARE_AUTHORIZER = "io.clustermirror.broker.auth.MirrorAwareAuthorizer";

    private final String name;
    private final boolean withExtension;
    private final KafkaClusterTestKit cluster;
    private final Map<Integer, Object> brokers;
    // Guarded by this.
    private final Map<Integer, ClusterMirrorExtension> extensions = new HashMap<>();
    private final Set<Integer> stoppedBrokers = new TreeSet<>();
    private String bootstrapServers;
    private boolean started;
    private boolean closed;

    private MirrorTestCluster(String name, boolean withExtension, KafkaClusterTestKit cluster) {
        this.name = name;
        this.withExtension = withExtension;
        this.cluster = cluster;
        this.brokers = new TreeMap<>(cluster.brokers());
    }

    public static Builder builder() {
        return new Builder();
    }

    public static final class Builder {
        private String name = "cluster";
        private int brokers = 1;
        private boolean withExtension;
        private Path baseDirectory;
        private final Map<String, String> configs = new LinkedHashMap<>();
        private final Map<String, SecurityProtocol> listeners = new LinkedHashMap<>();

        private Builder() {
        }

        /** Names the cluster in logs and temporary directories. */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        public Builder brokers(int brokers) {
            if (brokers < 1) {
                throw new IllegalArgumentException("A cluster needs at least one broker, got " + brokers);
            }
            this.brokers = brokers;
            return this;
        }

        /**
         * Destination clusters: the authorizer on every node and the extension on every broker. ACLs are enforced with
         * {@code allow.everyone.if.no.acl.found=true} and {@code super.users=User:ANONYMOUS} (the kit's PLAINTEXT
         * listener); {@link #brokerConfig} overrides both.
         */
        public Builder withExtension(boolean withExtension) {
            this.withExtension = withExtension;
            return this;
        }

        /**
         * A server config for every node, controller included (KRaft controllers apply broker defaults
         * such as {@code num.partitions} when topics are created). Overrides the kit's defaults.
         */
        public Builder brokerConfig(String key, Object value) {
            configs.put(key, String.valueOf(value));
            return this;
        }

        /**
         * An extra client listener on every broker (not on the controller), e.g. {@code listener("SCRAM",
         * SecurityProtocol.SASL_SSL)}. Inter-broker and controller traffic stay on the kit's PLAINTEXT listener, which
         * {@link MirrorTestCluster#bootstrapServers()} and {@link MirrorTestCluster#clientProperties()} keep naming;
         * {@link MirrorTestCluster#bootstrapServers(String)} gives the new listener's addresses. Configure it with
         * {@link #brokerConfig} and Kafka's lower-case listener prefix, e.g.
         * {@code listener.name.scram.sasl.enabled.mechanisms} or {@code listener.name.scram.scram-sha-512.sasl.jaas.config}
         * (unprefixed {@code ssl.*} configs apply to every TLS listener). Its port is chosen when the broker starts, so it
         * changes across a broker restart.
         */
        public Builder listener(String listenerName, SecurityProtocol protocol) {
            String normalised = ListenerName.normalised(listenerName).value();
            if (normalised.equals(TestKitDefaults.DEFAULT_BROKER_LISTENER_NAME)
                    || normalised.equals(TestKitDefaults.DEFAULT_CONTROLLER_LISTENER_NAME)) {
                throw new IllegalArgumentException("Listener " + normalised + " is the kit's own");
            }
            listeners.put(normalised, protocol);
            return this;
        }

        /** Where the nodes keep their data; a new temporary directory if unset. Deleted on close. */
        public Builder baseDirectory(Path baseDirectory) {
            this.baseDirectory = baseDirectory;
            return this;
        }

        /** The description of the cluster this builder makes ({@link InJvmClusters#topology}), the added listeners after the kit's. */
        public ClusterTopology topology() {
            ClusterTopology.Builder topology = InJvmClusters.topology(name, brokers)
                .mirrorDestination(withExtension)
                .serverProperties(configs);
            listeners.forEach(topology::listener);
            return topology.build();
        }

        /** Builds the (formatted, not yet started) cluster. */
        public MirrorTestCluster build() throws Exception {
            return MirrorTestCluster.build(topology(), baseDirectory);
        }

        /** Builds and starts the cluster. */
        public MirrorTestCluster start() throws Exception {
            return build().start();
        }
    }

    /** Builds and starts the cluster {@code topology} describes; see {@link #build(ClusterTopology, Path)}. */
    public static MirrorTestCluster start(ClusterTopology topology) throws Exception {
        return build(topology, null).start();
    }

    /**
     * Builds (formats, does not start) the cluster {@code topology} describes, in {@code baseDirectory} (a new temporary
     * directory if null; deleted on close), with {@link InJvmClusters#build}: the topology must be one the test kit can run,
     * as {@link Builder#topology} makes them. A mirror destination gets the authorizer on every node and, once started,
     * the extension on every broker.
     */
    public static MirrorTestCluster build(ClusterTopology topology, Path baseDirectory) throws Exception {
        Path base = baseDirectory != null ? baseDirectory : Files.createTempDirectory("mirror-testkit-" + topology.name() + "-");
        KafkaClusterTestKit cluster = InJvmClusters.build(topology, base, defaultConfigs(topology.brokers().size(), topology.mirrorDestination()));
        return new MirrorTestCluster(topology.name(), topology.mirrorDestination(), cluster);
    }

    private static Map<String, String> defaultConfigs(int brokers, boolean withExtension) {
        Map<String, String> defaults = new LinkedHashMap<>();
        // Behave like a production broker, not like Kafka's own tests.
        defaults.put(ServerConfigs.UNSTABLE_API_VERSIONS_ENABLE_CONFIG, "false");
        defaults.put(ServerConfigs.UNSTABLE_FEATURE_VERSIONS_ENABLE_CONFIG, "false");
        defaults.putAll(KRaftConfigs.internalTopics(brokers));
        if (withExtension) {
            ExtensionRegistry.expectAttachments("the test kit");
            defaults.put(ServerConfigs.AUTHORIZER_CLASS_NAME_CONFIG, MIRROR_AWARE_AUTHORIZER);
            // The delegate StandardAuthorizer denies what no ACL allows; test clusters have no ACLs.
            defaults.put("allow.everyone.if.no.acl.found", "true");
            // The kit's PLAINTEXT listener carries the brokers' traffic and the extension's local clients, as
            // User:ANONYMOUS: the super user, as a real destination's brokers are, so that only the extension (and
            // the tests' own PLAINTEXT clients) may write the control plane's topics.
            defaults.put("super.users", "User:ANONYMOUS");
        }
        return defaults;
    }

    /** Starts every node, waits until all brokers are ready, then attaches the extension (destination clusters). */
    public synchronized MirrorTestCluster start() throws Exception {
        if (started) {
            throw new IllegalStateException("Cluster " + name + " was already started");
        }
        started = true;
        try {
            cluster.startup();
            cluster.waitForReadyBrokers();
            bootstrapServers = cluster.bootstrapServers();
            if (withExtension) {
                for (int id : brokers.keySet()) {
                    attachExtension(id);
                }
            }
        } catch (Exception e) {
            try {
                close();
            } catch (RuntimeException closeError) {
                e.addSuppressed(closeError);
            }
            throw e;
        }
        log.info("Cluster {} started: brokers {} at {}", name, brokers.keySet(), bootstrapServers);
        return this;
    }

    @Override
    public String name() {
        return name;
    }

    /** Every broker's address, stopped ones included (ports do not change across restarts). */
    @Override
    public synchronized String bootstrapServers() {
        if (bootstrapServers == null) {
            throw new IllegalStateException("Cluster " + name + " is not started");
        }
        return bootstrapServers;
    }

    /**
     * The addresses of a listener added with {@link Builder#listener}, on every running broker (its ports change when a
     * broker restarts).
     */
    public synchronized String bootstrapServers(String listenerName) {
        ListenerName listener = ListenerName.normalised(listenerName);
        if (bootstrapServers == null) {
            throw new IllegalStateException("Cluster " + name + " is not started");
        }
        return cluster.brokers().entrySet().stream()
            .filter(e -> !stoppedBrokers.contains(e.getKey()))
            .map(e -> "localhost:" + e.getValue().boundPort(listener))
            .collect(Collectors.joining(","));
    }

    /** Client properties to connect to this cluster; add your own client configs to them. */
    @Override
    public Properties clientProperties() {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        return props;
    }

    /** A new Admin client for this cluster; the caller closes it. */
    @Override
    public Admin admin() {
        return Admin.create(clientProperties());
    }

    public Set<Integer> brokerIds() {
        return Set.copyOf(brokers.keySet());
    }

    /** The {@code kafka.server.BrokerServer} (typed Object: tests need no Scala types). */
    public Object brokerServer(int brokerId) {
        Object broker = brokers.get(brokerId);
        if (broker == null) {
            throw new IllegalArgumentException("No broker " + brokerId + " in cluster " + name + ": " + brokers.keySet());
        }
        return broker;
    }

    /** The extension's handle on a broker. */
    public BrokerHandle broker(int brokerId) {
        return BrokerHandle.of(brokerServer(brokerId));
    }

    /**
     * The mirror image the extension of a running broker has loaded so far (destination clusters): what that broker's
     * partition leaders act on, which may lag behind what the internal topics hold.
     */
    public synchronized MirrorImage mirrorImage(int brokerId) {
        if (!extensions.containsKey(brokerId)) {
            throw new IllegalStateException("No extension is attached to broker " + brokerId + " of cluster " + name);
        }
        return ExtensionRegistry.image(broker(brokerId).clusterId(), brokerId).orElseThrow(() ->
            new IllegalStateException("The extension of broker " + brokerId + " of cluster " + name + " is not registered"));
    }

    /**
     * The current leader of a partition, waiting until there is one on a running broker (metadata may
     * name a broker we just shut down for a moment).
     */
    @Override
    public int leaderOf(TopicPartition partition) throws InterruptedException {
        try (Admin admin = admin()) {
            return TestUtils.waitForValue(() -> {
                TopicDescription description = admin.describeTopics(Set.of(partition.topic()))
                    .allTopicNames().get().get(partition.topic());
                Set<Integer> stopped = stoppedBrokers();
                return description.partitions().stream()
                    .filter(p -> p.partition() == partition.partition())
                    .map(TopicPartitionInfo::leader)
                    .filter(leader -> leader != null && !leader.isEmpty() && !stopped.contains(leader.id()))
                    .map(Node::id)
                    .findFirst();
            }, TestUtils.DEFAULT_TIMEOUT, "a leader for " + partition + " in cluster " + name);
        }
    }

    /**
     * The directory holding a broker's replica of a partition (its segments, indexes and snapshots), for
     * byte-level checks; waits until the replica exists.
     */
    @Override
    public Path partitionDir(int brokerId, TopicPartition partition) throws InterruptedException {
        brokerServer(brokerId);
        Set<String> logDirs = cluster.nodes().brokerNodes().get(brokerId).logDataDirectories();
        return TestUtils.waitForValue(() -> logDirs.stream()
                .map(dir -> Path.of(dir, partition.toString()))
                .filter(Files::isDirectory)
                .findFirst(),
            TestUtils.DEFAULT_TIMEOUT, "a replica of " + partition + " on broker " + brokerId + " in cluster " + name);
    }

    /** Cleanly shuts a broker down (controlled shutdown: leadership moves away first), closing its extension first. */
    public synchronized void shutdownBroker(int brokerId) {
        Object broker = brokerServer(brokerId);
        if (stoppedBrokers.contains(brokerId)) {
            throw new IllegalStateException("Broker " + brokerId + " of cluster " + name + " is already shut down");
        }
        Optional<ClusterMirrorExtension> closed = closeExtension(brokerId);
        KafkaServerLauncher.shutdownBroker(broker);
        closed.ifPresent(ClusterMirrorExtension::detach);
        stoppedBrokers.add(brokerId);
        log.info("Cluster {}: broker {} shut down", name, brokerId);
    }

    /**
     * Starts a shut-down broker again: the same {@code BrokerServer} with the same log dirs and port, as
     * Kafka's own tests restart brokers. Returns once the broker is unfenced and the cluster sees it, with
     * the extension re-attached. Takes about {@code broker.session.timeout.ms} (9 s by default): the
     * controller accepts the new registration only once the previous one has expired.
     */
    public synchronized void startBroker(int brokerId) throws InterruptedException {
        Object broker = brokerServer(brokerId);
        if (!stoppedBrokers.contains(brokerId)) {
            throw new IllegalStateException("Broker " + brokerId + " of cluster " + name + " is running");
        }
        // Returns once the controller has unfenced the broker.
        KafkaServerLauncher.startupBroker(broker);
        stoppedBrokers.remove(brokerId);
        try (Admin admin = admin()) {
            TestUtils.waitFor(() -> admin.describeCluster().nodes().get().stream().anyMatch(n -> n.id() == brokerId),
                TestUtils.DEFAULT_TIMEOUT, "broker " + brokerId + " of cluster " + name + " to be visible to clients");
        }
        if (withExtension) {
            attachExtension(brokerId);
        }
        log.info("Cluster {}: broker {} started", name, brokerId);
    }

    public synchronized void restartBroker(int brokerId) throws InterruptedException {
        shutdownBroker(brokerId);
        startBroker(brokerId);
    }

    /** Brokers currently shut down by {@link #shutdownBroker(int)}. */
    public synchronized Set<Integer> stoppedBrokers() {
        return Set.copyOf(stoppedBrokers);
    }

    /** Closes the extensions, then shuts every node down and deletes the cluster's data. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<ClusterMirrorExtension> closedExtensions = new ArrayList<>();
        for (int id : Set.copyOf(extensions.keySet())) {
            closeExtension(id).ifPresent(closedExtensions::add);
        }
        try {
            cluster.close();
            closedExtensions.forEach(ClusterMirrorExtension::detach);
        } catch (RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while closing cluster " + name, e);
        } catch (Exception e) {
            throw new IllegalStateException("Failed to close cluster " + name, e);
        }
        log.info("Cluster {} closed", name);
    }

    /**
     * Attaches the extension and waits until it has loaded the mirror state: until then the broker refuses client
     * writes to every topic (it cannot tell mirror topics from others yet), which a test should not have to handle.
     */
    private void attachExtension(int brokerId) throws InterruptedException {
        ClusterMirrorExtension extension = ClusterMirrorExtension.attach(BrokerHandle.of(brokerServer(brokerId)));
        extensions.put(brokerId, extension);
        TestUtils.waitFor(extension::isReady, TestUtils.DEFAULT_TIMEOUT, "the extension of broker " + brokerId + " to load the mirror state");
    }

    /** Closes the broker's extension (before the broker shuts down) and returns it, to detach once the broker is down. */
    private Optional<ClusterMirrorExtension> closeExtension(int brokerId) {
        ClusterMirrorExtension extension = extensions.remove(brokerId);
        if (extension != null) {
            try {
                extension.close();
            } catch (RuntimeException e) {
                log.error("Cluster {}: error closing the extension of broker {}", name, brokerId, e);
            }
        }
        return Optional.ofNullable(extension);
    }

    @Override
    public String toString() {
        return "MirrorTestCluster(" + name + ", brokers=" + brokers.keySet() + ", withExtension=" + withExtension + ")";
    }
}
