package io.clustermirror.chaos;

import io.clustermirror.testsupport.FaultProxy;
import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.testsupport.KRaftConfigs;
import io.clustermirror.testsupport.LaunchedCluster;
import io.clustermirror.testsupport.LaunchedNode;
import io.clustermirror.testsupport.NodeRole;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The launched clusters of a chaos run ({@link LaunchedCluster}s of {@link #sourceTopology} and
 * {@link #destinationTopology}), every node its own JVM:
 * <ul>
 *   <li>the <b>source</b>: {@code sourceBrokers} nodes (the first one also the KRaft controller), with the Cluster
 *       Mirror launcher too, since failback makes the source a destination of its own mirror (until then the extension
 *       does nothing there: the source holds no mirror). Each broker has two listeners: {@code INTERNAL}, which its peers and the workload use directly, and
 *       {@code CLIENT}, which is advertised at the address of that broker's {@link FaultProxy}, so that every
 *       connection of the mirror (bootstrap, metadata, fetchers) goes through a proxy and its faults;</li>
 *   <li>the <b>destination</b>: three brokers and one dedicated controller, all with the Cluster Mirror launcher,
 *       replication factor 3 and {@code min.insync.replicas=2} for every topic (mirror topics included).</li>
 * </ul>
 */
final class ChaosClusters implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ChaosClusters.class);
    static final Duration START_TIMEOUT = Duration.ofSeconds(180);
    private static final String BROKER_HEAP = "-Xmx512m -Xms128m";
    private static final String CONTROLLER_HEAP = "-Xmx256m -Xms64m";
    /** The node id of the destination's controller (brokers are 1, 2, 3). */
    static final int DESTINATION_CONTROLLER_ID = 9;
    static final int DESTINATION_BROKERS = 3;
    /** The source's node that is also its only KRaft controller: never killed. */
    static final int SOURCE_CONTROLLER_ID = 1;
    /** The source's listener for its peers, the workload and the checker: never faulted. */
    private static final String INTERNAL = "INTERNAL";
    /** The source's listener for the mirror, advertised at its broker's proxy. */
    private static final String CLIENT = "CLIENT";

    private final LaunchedCluster source;
    private final LaunchedCluster destination;
    private final Map<Integer, FaultProxy> proxies = new TreeMap<>();

    private ChaosClusters(LaunchedCluster source, LaunchedCluster destination) {
        this.source = source;
        this.destination = destination;
    }

    /**
     * The source: {@code brokers} nodes, the first one also the KRaft controller, with the listeners {@code INTERNAL} and
     * {@code CLIENT} (bound to 127.0.0.1, where its proxy forwards).
     */
    static ClusterTopology sourceTopology(int brokers, String jvmOptions) {
        return ClusterTopology.builder("source")
            .node(SOURCE_CONTROLLER_ID, NodeRole.COMBINED)
            .nodes(NodeRole.BROKER, SOURCE_CONTROLLER_ID + 1, brokers - 1)
            .quorum(ClusterTopology.Quorum.STANDALONE)
            .listener(INTERNAL, SecurityProtocol.PLAINTEXT)
            .listener(CLIENT, SecurityProtocol.PLAINTEXT, "127.0.0.1")
            .serverProperties(replication(brokers))
            .heap(BROKER_HEAP)
            .jvmOptions(jvmOptions)
            .build();
    }

    /** The destination: three brokers and one dedicated controller, RF 3 and min ISR 2, killed brokers fenced soon. */
    static ClusterTopology destinationTopology(String jvmOptions) {
        return ClusterTopology.builder("destination")
            .nodes(NodeRole.BROKER, 1, DESTINATION_BROKERS)
            .node(DESTINATION_CONTROLLER_ID, NodeRole.CONTROLLER)
            .quorum(ClusterTopology.Quorum.STANDALONE)
            // No authorizer line: the launcher installs the read-only authorizer (ACLs off), as for an operator who sets none.
            .serverProperties(KRaftConfigs.fastFencing())
            .serverProperties(replication(DESTINATION_BROKERS))
            .heap(BROKER_HEAP)
            .controllerHeap(CONTROLLER_HEAP)
            .jvmOptions(jvmOptions)
            .build();
    }

    /**
     * Formats and starts both clusters and waits until every node is ready; every node's JVM runs with
     * {@code jvmOptions} (a test-only agent, else empty).
     */
    static ChaosClusters start(Path home, Path workDir, int sourceBrokers, String jvmOptions) throws Exception {
        ChaosClusters clusters = new ChaosClusters(
            LaunchedCluster.create(sourceTopology(sourceBrokers, jvmOptions), home, workDir.resolve("source")).readyTimeout(START_TIMEOUT),
            LaunchedCluster.create(destinationTopology(jvmOptions), home, workDir.resolve("destination")).readyTimeout(START_TIMEOUT));
        try {
            for (int id : clusters.source.brokerIds()) {
                FaultProxy proxy = FaultProxy.startKafka("source-" + id, new InetSocketAddress("127.0.0.1", clusters.source.ports().port(id, CLIENT)));
                clusters.proxies.put(id, proxy);
                clusters.source.ports().advertise(id, CLIENT, proxy.address().getPort());
            }
            clusters.source.start();
            clusters.destination.start();
            log.info("Clusters ready: source {} (mirror's view {}), destination {}", clusters.sourceBootstrapServers(),
                clusters.proxiedSourceBootstrapServers(), clusters.destinationBootstrapServers());
            return clusters;
        } catch (Exception e) {
            clusters.close();
            throw e;
        }
    }

    /** Replication settings for {@code brokers} brokers besides the test clusters' own: min ISR 2 where there are 3. */
    private static Map<String, String> replication(int brokers) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("min.insync.replicas", String.valueOf(KRaftConfigs.minInsyncReplicas(brokers)));
        // Retention runs every 5 s (5 minutes by default), so that chaos-retention loses old segments during a run.
        config.put("log.retention.check.interval.ms", "5000");
        return config;
    }

    /** Waits until a source broker is ready ({@link LaunchedCluster#awaitReady}), failing early if the node exits. */
    void awaitSourceBrokerReady(int id) throws Exception {
        source.awaitReady(id);
    }

    /** Waits until a destination broker is ready ({@link LaunchedCluster#awaitReady}), failing early if the node exits. */
    void awaitDestinationBrokerReady(int id) throws Exception {
        destination.awaitReady(id);
    }

    /**
     * Waits until every partition of the destination (internal ones included) has all its replicas in sync: a node
     * that is ready may still be catching up, and a second node lost before it has caught up can take partitions whose
     * only in-sync replica it was offline (Kafka's rule, not a fault of the mirror). Faults come one at a time, each after
     * the previous one healed in this sense.
     */
    void awaitDestinationFullyReplicated() throws Exception {
        try (Admin admin = destinationAdmin()) {
            awaitFullyReplicated(admin, "destination");
        }
    }

    /** The same on the source, after a fault on its brokers. */
    void awaitSourceFullyReplicated() throws Exception {
        try (Admin admin = sourceAdmin()) {
            awaitFullyReplicated(admin, "source");
        }
    }

    private static void awaitFullyReplicated(Admin admin, String cluster) throws Exception {
        TestUtils.await(() -> {
            Set<String> topics = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(30, TimeUnit.SECONDS);
            return admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS).values().stream()
                .flatMap(t -> t.partitions().stream())
                .allMatch(p -> p.isr().size() == p.replicas().size());
        }, START_TIMEOUT, "every " + cluster + " partition to have all its replicas in sync");
    }

    /** The source's INTERNAL listener: what the workload and the checker use, never faulted. */
    String sourceBootstrapServers() {
        return source.bootstrapServers(INTERNAL);
    }

    /** The source as the mirror sees it: the proxies' addresses. */
    String proxiedSourceBootstrapServers() {
        return source.bootstrapServers(CLIENT);
    }

    String destinationBootstrapServers() {
        return destination.bootstrapServers();
    }

    Map<Integer, FaultProxy> proxies() {
        return proxies;
    }

    Map<Integer, LaunchedNode> sourceNodes() {
        return source.nodes();
    }

    /** The destination's brokers, by id (its controller is {@link #destinationController}). */
    Map<Integer, LaunchedNode> destinationBrokers() {
        Map<Integer, LaunchedNode> brokers = new TreeMap<>(destination.nodes());
        brokers.keySet().retainAll(destination.brokerIds());
        return brokers;
    }

    LaunchedNode destinationBroker(int id) {
        if (!destination.brokerIds().contains(id)) {
            throw new IllegalArgumentException("no destination broker " + id + ": " + destination.brokerIds());
        }
        return destination.node(id);
    }

    LaunchedNode destinationController() {
        return destination.node(DESTINATION_CONTROLLER_ID);
    }

    static Properties clientProperties(String bootstrapServers) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        // Killed nodes stay in the bootstrap list: do not wait long for them.
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        return props;
    }

    private static Admin admin(String bootstrapServers) {
        return Admin.create(clientProperties(bootstrapServers));
    }

    Admin sourceAdmin() {
        return admin(sourceBootstrapServers());
    }

    Admin destinationAdmin() {
        return admin(destinationBootstrapServers());
    }

    /** The mirror's config: the source through the proxies, plus {@code extra} {@code mirror.*} settings. */
    Map<String, String> mirrorConfig(Map<String, String> extra) {
        Map<String, String> config = new HashMap<>(extra);
        config.put("bootstrap.servers", proxiedSourceBootstrapServers());
        return config;
    }

    /** Leader and replicas of a partition as the cluster's metadata names them now. */
    record Placement(Optional<Integer> leader, List<Integer> replicas) {
    }

    static Placement placement(Admin admin, TopicPartition tp) throws Exception {
        TopicDescription description = admin.describeTopics(Set.of(tp.topic())).allTopicNames().get(30, TimeUnit.SECONDS).get(tp.topic());
        TopicPartitionInfo info = description.partitions().get(tp.partition());
        Optional<Integer> leader = Optional.ofNullable(info.leader()).filter(l -> !l.isEmpty()).map(Node::id);
        return new Placement(leader, info.replicas().stream().map(Node::id).toList());
    }

    /** The in-sync replicas of a partition as the cluster's metadata names them now, sorted. */
    static List<Integer> isr(Admin admin, TopicPartition tp) throws Exception {
        TopicDescription description = admin.describeTopics(Set.of(tp.topic())).allTopicNames().get(30, TimeUnit.SECONDS).get(tp.topic());
        return description.partitions().get(tp.partition()).isr().stream().map(Node::id).sorted().toList();
    }

    /** Waits until metadata names a leader of {@code tp} among the running destination brokers. */
    int destinationLeader(Admin admin, TopicPartition tp) throws TimeoutException, InterruptedException {
        return TestUtils.awaitValue(() -> placement(admin, tp).leader().filter(l -> destinationBroker(l).alive()),
            START_TIMEOUT, "a leader of " + tp + " on a running destination broker");
    }

    /** Kills every node (SIGKILL: the run's data is not kept for a restart) and closes the proxies. */
    @Override
    public void close() {
        destination.close();
        source.close();
        proxies.values().forEach(FaultProxy::close);
    }
}
