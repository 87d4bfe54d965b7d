package io.clustermirror.testsupport;

import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.common.test.api.TestKitDefaults;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The in-JVM back end of a {@link ClusterTopology}: stock Kafka on Kafka's test kit ({@link KafkaClusterTestKit}),
 * without Cluster Mirror; mirror-testkit's {@code MirrorTestCluster} adds the extension on top, mirror-broker's tests
 * use it as it is. Needs Kafka's test kit on the classpath, an optional dependency of this module that only those two
 * bring: the launched back end ({@link LaunchedCluster}) must not need Kafka's broker classes.
 */
public final class InJvmClusters {
    /** The newest production metadata version of the Kafka release we build against. */
    public static final MetadataVersion METADATA_VERSION = MetadataVersion.IBP_4_3_IV0;

    private InJvmClusters() {
    }

    /**
     * The description of an in-JVM cluster of {@code brokers} brokers, as the test kit lays it out: one controller, node
     * {@value TestKitDefaults#CONTROLLER_ID_OFFSET}, brokers numbered from {@value TestKitDefaults#BROKER_ID_OFFSET}, and
     * the kit's PLAINTEXT listener first, for clients and brokers. Add listeners and server properties to it.
     */
    public static ClusterTopology.Builder topology(String name, int brokers) {
        return ClusterTopology.builder(name)
            .launchMode(ClusterTopology.LaunchMode.IN_JVM)
            .nodes(NodeRole.CONTROLLER, TestKitDefaults.CONTROLLER_ID_OFFSET, 1)
            .nodes(NodeRole.BROKER, TestKitDefaults.BROKER_ID_OFFSET, brokers)
            .listener(TestKitDefaults.DEFAULT_BROKER_LISTENER_NAME, TestKitDefaults.DEFAULT_BROKER_SECURITY_PROTOCOL);
    }

    /**
     * Builds and formats (does not start) the cluster {@code topology} describes in {@code baseDirectory}, which the kit
     * deletes on close: {@code defaults} then the topology's server properties on every node, the topology's listeners
     * after the kit's own on every broker, each on a port chosen when the broker starts, and the production features at
     * their defaults for {@link #METADATA_VERSION}, as a cluster formatted by {@code kafka-storage.sh} runs.
     *
     * @throws IllegalArgumentException if the kit cannot run {@code topology}: it is not one {@link #topology} describes
     *     (the build's Kafka, in this JVM, the kit's node layout and listener first)
     */
    public static KafkaClusterTestKit build(ClusterTopology topology, Path baseDirectory, Map<String, String> defaults) throws Exception {
        checkKitLayout(topology);
        int brokers = topology.brokers().size();
        List<ClusterTopology.Listener> extraListeners = topology.listeners().subList(1, topology.listeners().size());
        TestKitNodes nodes = new TestKitNodes.Builder(bootstrapMetadata())
            .setNumControllerNodes(1)
            .setNumBrokerNodes(brokers)
            .setPerServerProperties(listenerConfigsPerBroker(brokers, extraListeners))
            .setBaseDirectory(baseDirectory)
            .build();
        KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(nodes);
        defaults.forEach(builder::setConfigProp);
        if (!extraListeners.isEmpty()) {
            StringBuilder protocols = new StringBuilder(TestKitDefaults.DEFAULT_BROKER_LISTENER_NAME + ":"
                + TestKitDefaults.DEFAULT_BROKER_SECURITY_PROTOCOL.name + "," + TestKitDefaults.DEFAULT_CONTROLLER_LISTENER_NAME
                + ":" + TestKitDefaults.DEFAULT_CONTROLLER_SECURITY_PROTOCOL.name);
            extraListeners.forEach(l -> protocols.append(',').append(l.name()).append(':').append(l.protocol().name));
            builder.setConfigProp("listener.security.protocol.map", protocols.toString());
        }
        topology.serverProperties().forEach(builder::setConfigProp);
        KafkaClusterTestKit cluster = builder.build();
        try {
            cluster.format();
        } catch (Exception e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** Fails unless the test kit runs {@code topology} as it says. */
    private static void checkKitLayout(ClusterTopology topology) {
        int brokers = topology.brokers().size();
        ClusterTopology kit = topology(topology.name(), brokers).build();
        String kitListener = TestKitDefaults.DEFAULT_BROKER_LISTENER_NAME;
        boolean kitRuns = topology.launchMode() == ClusterTopology.LaunchMode.IN_JVM && topology.kafkaRelease().isEmpty()
            && topology.quorum() == ClusterTopology.Quorum.STATIC && brokers > 0 && topology.fixedPorts().isEmpty();
        boolean kitLayout = topology.nodes().equals(kit.nodes()) && topology.listeners().get(0).equals(kit.listeners().get(0))
            && topology.interBrokerListener().equals(kitListener) && topology.clientListener().equals(kitListener);
        if (!kitRuns || !kitLayout) {
            throw new IllegalArgumentException("The test kit cannot run " + topology + ": it runs the build's Kafka in this JVM with "
                + kit.nodes() + " and its " + kitListener + " listener first, for brokers and clients, every port chosen at start");
        }
    }

    /** The brokers' {@code listeners}: the kit's own and the extra ones, each on a port chosen at start. */
    private static Map<Integer, Map<String, String>> listenerConfigsPerBroker(int brokers, List<ClusterTopology.Listener> extraListeners) {
        if (extraListeners.isEmpty()) {
            return Map.of();
        }
        String all = TestKitDefaults.DEFAULT_BROKER_LISTENER_NAME + "://localhost:0" + extraListeners.stream()
            .map(l -> "," + l.name() + "://localhost:0").collect(Collectors.joining());
        return IntStream.range(0, brokers).boxed()
            .collect(Collectors.toMap(i -> TestKitDefaults.BROKER_ID_OFFSET + i, i -> Map.of("listeners", all)));
    }

    /**
     * Production features only, at their defaults for {@link #METADATA_VERSION}, as a real cluster would run. Not the
     * kit's {@code setBootstrapMetadataVersion}: Kafka 4.3.1's {@code BootstrapMetadata.copyWithFeatureRecord} drops every
     * feature record after the one it replaces, so the cluster would run with transaction.version 0.
     */
    private static BootstrapMetadata bootstrapMetadata() {
        Map<String, Short> features = Feature.PRODUCTION_FEATURES.stream()
            .collect(Collectors.toMap(Feature::featureName, f -> f.defaultLevel(METADATA_VERSION), (a, b) -> a, TreeMap::new));
        return BootstrapMetadata.fromVersions(METADATA_VERSION, features, "mirror-testsupport");
    }
}
