package io.clustermirror.broker;

import io.clustermirror.common.image.MirrorImage;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Where the authorizer (instantiated by Kafka, not by us) finds the mirror image of its node. Keyed by
 * cluster id and node id, because one JVM may host nodes of several clusters (the test kit does).
 * A node without an attached extension (a dedicated controller) uses any node of its cluster in this
 * JVM (combined mode, test kit).
 */
public final class ExtensionRegistry {
    private record NodeKey(String clusterId, int nodeId) {
    }

    private static final Map<NodeKey, Supplier<MirrorImage>> IMAGES = new ConcurrentHashMap<>();

    private ExtensionRegistry() {
    }

    static void register(String clusterId, int nodeId, Supplier<MirrorImage> image) {
        IMAGES.put(new NodeKey(clusterId, nodeId), image);
    }

    static void unregister(String clusterId, int nodeId, Supplier<MirrorImage> image) {
        IMAGES.remove(new NodeKey(clusterId, nodeId), image);
    }

    /** The image of the given node, or of another node of the same cluster in this JVM. */
    public static Optional<MirrorImage> image(String clusterId, int nodeId) {
        Supplier<MirrorImage> own = IMAGES.get(new NodeKey(clusterId, nodeId));
        if (own != null) {
            return Optional.of(own.get());
        }
        return IMAGES.entrySet().stream()
            .filter(e -> e.getKey().clusterId().equals(clusterId))
            .map(e -> e.getValue().get())
            .findFirst();
    }
}
