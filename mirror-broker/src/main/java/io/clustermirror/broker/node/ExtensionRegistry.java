package io.clustermirror.broker.node;

import io.clustermirror.common.image.MirrorImage;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Where the authorizer (instantiated by Kafka, not by us) finds what the extension of its node knows. Keyed
 * by cluster id and node id, because one JVM may host nodes of several clusters (the test kit does).
 * A dedicated controller started by the launcher registers its own view ({@link io.clustermirror.broker.ControllerMirrorView}); one without
 * (the test kit, the agent) uses the image of any node of its cluster in this JVM.
 */
public final class ExtensionRegistry {
    private record NodeKey(String clusterId, int nodeId) {
    }

    /**
     * @param image              the node's mirror image
     * @param loaded             completes once the image has loaded what was committed when the extension started
     * @param producerStateClean makes the node's leader replicas of a topic fit for client writes (their producer
     *                           state clean after a barrier) and says whether they are
     */
    private record NodeView(Supplier<MirrorImage> image, CompletableFuture<Void> loaded,
                            Predicate<String> producerStateClean) {
    }

    private static final Map<NodeKey, NodeView> NODES = new ConcurrentHashMap<>();
    /** What attaches a node's extension while its broker starts ({@link #attachWhileStarting}), until taken. */
    private static final Map<NodeKey, Runnable> STARTUP_ATTACHES = new ConcurrentHashMap<>();
    /** What attaches the extension to this JVM's brokers (the launcher, the agent, the test kit); null if nothing does. */
    private static volatile String attacher;
    /** Whether this JVM's controller-only nodes get a view of the mirror topics ({@link io.clustermirror.broker.ControllerMirrorView}). */
    private static volatile boolean controllerViews;

    private ExtensionRegistry() {
    }

    /**
     * Declares that {@code by} attaches the extension to the brokers this JVM starts. Every way in calls it before Kafka
     * configures the authorizer: the read-only authorizer refuses to run where nothing attaches the extension, since its
     * broker would then refuse every client write forever (it never learns which topics are mirror topics).
     */
    public static void expectAttachments(String by) {
        attacher = by;
    }

    /** What declared it attaches the extension in this JVM ({@link #expectAttachments}), if anything did. */
    public static Optional<String> attacher() {
        return Optional.ofNullable(attacher);
    }

    /**
     * Declares that this JVM's controller-only nodes get their own view of the mirror topics (the launcher gives them one);
     * until a node's view has loaded, its authorizer refuses the topic changes that controllers authorize.
     */
    public static void expectControllerViews() {
        controllerViews = true;
    }

    /** Whether controller-only nodes of this JVM get their own view ({@link #expectControllerViews}). */
    public static boolean controllerViewsExpected() {
        return controllerViews;
    }

    /** The node's own image once it holds everything committed when its view started; empty before (or without a view). */
    public static Optional<MirrorImage> loadedImage(String clusterId, int nodeId) {
        NodeView own = NODES.get(new NodeKey(clusterId, nodeId));
        return own != null && own.loaded().isDone() ? Optional.of(own.image().get()) : Optional.empty();
    }

    /**
     * The loaded image of the only node with this id in this JVM, for what Kafka gives no cluster id (a config policy);
     * empty if none has loaded, or if nodes of several clusters share the id here (the test kit), so that a caller fails
     * closed rather than decide on another cluster's image.
     */
    public static Optional<MirrorImage> loadedImageOfNode(int nodeId) {
        List<NodeView> views = NODES.entrySet().stream().filter(e -> e.getKey().nodeId() == nodeId).map(Map.Entry::getValue).toList();
        return views.size() == 1 && views.get(0).loaded().isDone() ? Optional.of(views.get(0).image().get()) : Optional.empty();
    }

    public static void register(String clusterId, int nodeId, Supplier<MirrorImage> image, CompletableFuture<Void> loaded,
                         Predicate<String> producerStateClean) {
        NODES.put(new NodeKey(clusterId, nodeId), new NodeView(image, loaded, producerStateClean));
    }

    /**
     * Before a broker starts (the launcher, the agent): {@code attach} attaches the node's extension and registers it.
     * The node's authorizer runs it while the broker starts, before the broker opens its client listeners, so that they
     * open once the mirror image is loaded ({@code MirrorAwareAuthorizer#start}).
     */
    public static void attachWhileStarting(String clusterId, int nodeId, Runnable attach) {
        STARTUP_ATTACHES.put(new NodeKey(clusterId, nodeId), attach);
    }

    /** Takes what {@link #attachWhileStarting} left for the node, if anything: only one caller gets it. */
    public static Optional<Runnable> takeStartupAttach(String clusterId, int nodeId) {
        return Optional.ofNullable(STARTUP_ATTACHES.remove(new NodeKey(clusterId, nodeId)));
    }

    /** Completes once the node's own extension has loaded its image; empty while no extension is attached to the node. */
    public static Optional<CompletableFuture<Void>> loaded(String clusterId, int nodeId) {
        NodeView own = NODES.get(new NodeKey(clusterId, nodeId));
        return own == null ? Optional.empty() : Optional.of(own.loaded().copy());
    }

    public static void unregister(String clusterId, int nodeId) {
        NODES.remove(new NodeKey(clusterId, nodeId));
    }

    /** The image of the given node, or of another node of the same cluster in this JVM. */
    public static Optional<MirrorImage> image(String clusterId, int nodeId) {
        NodeView own = NODES.get(new NodeKey(clusterId, nodeId));
        if (own != null) {
            return Optional.of(own.image().get());
        }
        return NODES.entrySet().stream()
            .filter(e -> e.getKey().clusterId().equals(clusterId))
            .map(e -> e.getValue().image().get())
            .findFirst();
    }

    /**
     * True once the node's own extension is attached and its image loaded. Until then a broker cannot tell mirror
     * topics from others (after a restart it serves clients before the launcher attaches the extension).
     */
    public static boolean ready(String clusterId, int nodeId) {
        NodeView own = NODES.get(new NodeKey(clusterId, nodeId));
        return own != null && own.loaded().isDone();
    }

    /**
     * Removes, if not done yet, the mirrored producer state of the node's leader replicas of the topic; false only if
     * that failed (the write must wait).
     */
    public static boolean producerStateClean(String clusterId, int nodeId, String topic) {
        NodeView own = NODES.get(new NodeKey(clusterId, nodeId));
        return own == null || own.producerStateClean().test(topic);
    }
}
