package io.clustermirror.broker;

import io.clustermirror.broker.auth.MirrorAwareAuthorizer;
import io.clustermirror.broker.bridge.BrokerHandle;
import io.clustermirror.broker.bridge.LeaderChange;
import io.clustermirror.broker.controller.MirrorController;
import io.clustermirror.broker.controller.MirrorImageTailer;
import io.clustermirror.broker.node.ExtensionRegistry;
import io.clustermirror.broker.node.InjectedProductBug;
import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.broker.partition.PartitionRuntime;
import io.clustermirror.broker.partition.ProducerStateHygiene;
import io.clustermirror.broker.sync.MetadataSyncManager;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.HeldChange;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Metrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The Cluster Mirror extension attached to one running destination broker. Attach it after the broker
 * has started (launcher or test kit) and again after every broker restart; close it before shutdown.
 *
 * <p>Parts: a tailer keeps this broker's {@link MirrorImage}; a {@link PartitionRuntime} runs the
 * state machines of the mirror partitions this broker leads; the {@link MirrorController} runs here while
 * this broker leads {@code __mirror_commands-0}; a {@link ControllerEnforcementCheck} proves that the controllers keep
 * mirror topics read-only. Leadership comes from a metadata publisher whose callbacks
 * only hand work to these parts, so the metadata loader is never blocked.
 */
public final class ClusterMirrorExtension implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterMirrorExtension.class);
    private static final TopicPartition COMMANDS_PARTITION = new TopicPartition(InternalTopics.COMMANDS, 0);
    private static final String AUTHORIZER_CLASS_NAME = "authorizer.class.name";

    private final BrokerHandle broker;
    private final LocalClients clients;
    private final BrokerClientConfigs clientConfigs;
    private final MirrorImageTailer tailer;
    private final PartitionRuntime partitions;
    private final ProducerStateHygiene hygiene;
    private final Supplier<MirrorImage> imageSupplier;
    /** Starts and stops the controller off the loader thread; owns {@link #controller}. */
    private final ExecutorService controllerLifecycle;
    private final String listenerName;
    /** The broker's registry, kept: the broker lets go of it when it shuts down, before {@link #detach()}. */
    private final Metrics metrics;
    /** Mirror topics this broker keeps read-only because the mirror state that named them was lost: alert when above 0. */
    private final MetricName fencedTopicsMetric;
    private final MetricName heldTopicChangesMetric;
    private MirrorController controller;
    private ControllerEnforcementCheck enforcementCheck;
    /** False once {@link #close()} stopped the parts that write and fetch. */
    private volatile boolean working = true;
    private MetadataSyncManager metadataSync; // runs where the controller runs

    private ClusterMirrorExtension(BrokerHandle broker) {
        this.broker = broker;
        this.clients = new LocalClients(broker.localBootstrapServers(), broker.brokerConfigs(), broker.nodeId());
        this.clientConfigs = BrokerClientConfigs.fromBrokerConfigs(broker.brokerConfigs());
        this.hygiene = new ProducerStateHygiene(broker, clients);
        // The tailer is created below; new leaderships ask it for a read barrier only once events flow.
        this.partitions = new PartitionRuntime(broker, clients, hygiene, this::imageCatchUp, clientConfigs);
        this.tailer = new MirrorImageTailer(clients, broker.nodeId(), broker.metadataLogDir(), broker.metrics(), image -> {
            if (!working) {
                return; // closed: the image only serves the read-only rule until detach()
            }
            hygiene.onImage(image);
            partitions.onImage(image);
        });
        this.tailer.onStateLost(partitions::recordStatesAgain);
        this.imageSupplier = tailer::image;
        this.listenerName = "cluster-mirror-" + broker.nodeId();
        this.metrics = broker.metrics();
        this.fencedTopicsMetric = metrics.metricName("fenced-topics", "cluster-mirror",
            "topics kept read-only because the mirror state that named them was lost (see docs/operations.md, 'Losing an internal topic')");
        this.heldTopicChangesMetric = metrics.metricName("topic-changes-held", "cluster-mirror",
            "changes of source topics (configs that delete sooner, large partition growths) the metadata sync holds back, over "
                + "every mirror, until their hold ends or an operator applies them (" + MirrorConfig.SOURCE_DESTRUCTIVE_POLICY + ")");
        this.controllerLifecycle = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "cluster-mirror-controller-lifecycle-" + broker.nodeId());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts the extension on a started broker and returns at once; its work runs on its own threads.
     *
     * @throws IllegalStateException if the broker does not run {@link MirrorAwareAuthorizer}: its mirror topics would
     *                               accept client writes
     */
    public static ClusterMirrorExtension attach(BrokerHandle broker) {
        Object authorizer = broker.brokerConfigs().get(AUTHORIZER_CLASS_NAME);
        String name = authorizer instanceof Class<?> c ? c.getName() : String.valueOf(authorizer).trim();
        if (!MirrorAwareAuthorizer.keepsMirrorTopicsReadOnly(name)) {
            throw new IllegalStateException("broker " + broker.nodeId() + " runs authorizer.class.name=" + name + ", which would let "
                + "clients write to read-only mirror topics; run it with " + MirrorAwareAuthorizer.class.getName()
                + " (the launcher and the agent install it when the setting is absent)");
        }
        ClusterMirrorExtension extension = new ClusterMirrorExtension(broker);
        extension.start();
        return extension;
    }

    private void start() {
        ExtensionRegistry.register(broker.clusterId(), broker.nodeId(), imageSupplier, tailer.loaded(), hygiene::cleanForWrites);
        metrics.addMetric(fencedTopicsMetric, (Gauge<Integer>) (config, now) -> tailer.fencedTopicCount());
        metrics.addMetric(heldTopicChangesMetric, (Gauge<Long>) (config, now) -> imageSupplier.get().topics().values().stream()
            .flatMap(t -> t.heldChanges().stream()).filter(c -> c.status() == HeldChange.Status.HELD).count());
        tailer.start();
        enforcementCheck = ControllerEnforcementCheck.start(clients, broker.nodeId(), imageSupplier, metrics);
        broker.installLeadershipListener(listenerName, this::onLeadershipChanges).join();
        log.info("Cluster Mirror extension attached to broker {} of cluster {}", broker.nodeId(), broker.clusterId());
        InjectedProductBug.injected().ifPresent(bug -> log.error("Broker {} runs with the TEST-ONLY product bug '{}' injected by {} "
            + "on its class path: never outside tests", broker.nodeId(), bug.id(), bug.getClass().getName()));
    }

    private java.util.concurrent.CompletableFuture<Void> imageCatchUp() {
        return tailer.catchUp();
    }

    /** True once the mirror image is loaded: from then on this broker refuses client writes to mirror topics. */
    public boolean isReady() {
        return tailer.isReady();
    }

    private void onLeadershipChanges(List<LeaderChange> changes) {
        hygiene.onLeadershipChanges(changes);
        partitions.onLeadershipChanges(changes);
        for (LeaderChange change : changes) {
            if (change.partition().equals(COMMANDS_PARTITION)) {
                boolean lead = change.leader() && !change.deleted();
                controllerLifecycle.execute(() -> setControllerActive(lead));
            }
        }
    }

    private void setControllerActive(boolean active) {
        if (active && controller == null) {
            controller = new MirrorController(clients, broker.nodeId(), imageSupplier, clientConfigs, broker.metrics());
            controller.start();
            metadataSync = MetadataSyncManager.start(clients, broker.nodeId(), imageSupplier, clientConfigs, broker.metrics());
        } else if (!active && controller != null) {
            metadataSync.close();
            metadataSync = null;
            controller.close();
            controller = null;
        }
    }

    /**
     * Stops everything that writes or fetches (the mirror controller and sync, the partition state machines and their
     * fetchers, the producer-state passes), before the broker shuts down. The image keeps loading and the read-only rule
     * keeps being enforced with it while the broker hands its partitions over: a broker that shuts down must neither
     * let clients write to mirror topics nor refuse writes to other topics. Call {@link #detach()} once the broker has
     * shut down.
     */
    @Override
    public void close() {
        working = false;
        try {
            broker.removeLeadershipListener(listenerName).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn("Could not remove the leadership listener of broker {}", broker.nodeId(), e);
        }
        controllerLifecycle.execute(() -> setControllerActive(false));
        controllerLifecycle.shutdown();
        try {
            controllerLifecycle.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        partitions.close();
        hygiene.close();
        enforcementCheck.close();
        log.info("Cluster Mirror extension closed on broker {}; the read-only rule holds until the broker has shut down",
            broker.nodeId());
    }

    /** After the broker has shut down (and after {@link #close()}): stops the image and leaves the registry. */
    public void detach() {
        tailer.close();
        clientConfigs.close();
        metrics.removeMetric(fencedTopicsMetric);
        metrics.removeMetric(heldTopicChangesMetric);
        ExtensionRegistry.unregister(broker.clusterId(), broker.nodeId());
        log.info("Cluster Mirror extension detached from broker {}", broker.nodeId());
    }
}
