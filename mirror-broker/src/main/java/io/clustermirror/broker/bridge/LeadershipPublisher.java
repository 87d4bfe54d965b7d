package io.clustermirror.broker.bridge;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.image.LocalReplicaChanges;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.TopicImage;
import org.apache.kafka.image.loader.LoaderManifest;
import org.apache.kafka.image.publisher.MetadataPublisher;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.metadata.Replicas;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * A KRaft {@link MetadataPublisher} that turns metadata deltas into this broker's {@link LeaderChange}s.
 * Runs on the broker's single metadata loader thread: it only computes the changes and hands them to the
 * listener (which must not block); it never throws into the loader, since a publisher fault there is
 * handled as a broker fault.
 */
final class LeadershipPublisher implements MetadataPublisher {
    private static final Logger log = LoggerFactory.getLogger(LeadershipPublisher.class);

    /**
     * Installed publishers per metadata loader (identity; a broker restart builds a new loader), so that a
     * handle can remove them by name and never asks a loader for something it does not have: the loader
     * reports a duplicate install or an unknown removal to its fault handler, which halts a combined
     * broker+controller node and, on a broker-only node, disables metadata snapshots.
     */
    private static final Map<Object, Map<String, LeadershipPublisher>> INSTALLED = new WeakHashMap<>();

    private final String name;
    private final int nodeId;
    private final LeadershipListener listener;
    private boolean initialized; // loader thread only

    LeadershipPublisher(String name, int nodeId, LeadershipListener listener) {
        this.name = loaderName(name);
        this.nodeId = nodeId;
        this.listener = listener;
    }

    /** Reserves the name on this loader; false if a publisher of ours with that name is installed there. */
    static boolean reserve(Object loader, LeadershipPublisher p) {
        synchronized (INSTALLED) {
            return INSTALLED.computeIfAbsent(loader, l -> new HashMap<>()).putIfAbsent(p.name, p) == null;
        }
    }

    static LeadershipPublisher unregister(Object loader, String name) {
        synchronized (INSTALLED) {
            Map<String, LeadershipPublisher> m = INSTALLED.get(loader);
            return m == null ? null : m.remove(name);
        }
    }

    /** The loader-side name: prefixed so it cannot clash with Kafka's own publishers. */
    static String loaderName(String name) {
        return "cluster-mirror-" + name;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void onMetadataUpdate(MetadataDelta delta, MetadataImage newImage, LoaderManifest manifest) {
        try {
            List<LeaderChange> changes;
            boolean first = !initialized;
            if (first) {
                changes = fullImage(newImage);
                initialized = true;
            } else if (delta.topicsDelta() == null) {
                return;
            } else {
                changes = fromDelta(delta.topicsDelta().localChanges(nodeId), delta, newImage);
            }
            if (first || !changes.isEmpty()) { // the first call always comes, even with no local partition
                listener.onLeadershipChanges(Collections.unmodifiableList(changes));
            }
        } catch (Throwable t) {
            log.error("Leadership listener {} failed on a metadata update at offset {}; the update is skipped",
                name, manifest.provenance().lastContainedOffset(), t);
        }
    }

    /** Every partition with a replica on this broker, for the first call after installation. */
    private List<LeaderChange> fullImage(MetadataImage image) {
        List<LeaderChange> out = new ArrayList<>();
        for (TopicImage topic : image.topics().topicsById().values()) {
            for (Map.Entry<Integer, PartitionRegistration> e : topic.partitions().entrySet()) {
                PartitionRegistration reg = e.getValue();
                if (Replicas.contains(reg.replicas, nodeId)) {
                    out.add(new LeaderChange(new TopicPartition(topic.name(), e.getKey()), topic.id(),
                        reg.leader == nodeId, reg.leaderEpoch, false));
                }
            }
        }
        return out;
    }

    private List<LeaderChange> fromDelta(LocalReplicaChanges local, MetadataDelta delta, MetadataImage newImage) {
        List<LeaderChange> out = new ArrayList<>();
        for (TopicPartition tp : local.deletes()) {
            // The id of a deleted topic: from the previous image (the new one no longer has it).
            TopicImage prev = delta.image().topics().getTopic(tp.topic());
            out.add(new LeaderChange(tp, prev != null ? prev.id() : null, false, -1, true));
        }
        for (Map.Entry<TopicPartition, LocalReplicaChanges.PartitionInfo> e : local.leaders().entrySet()) {
            out.add(new LeaderChange(e.getKey(), e.getValue().topicId(), true, e.getValue().partition().leaderEpoch, false));
        }
        for (Map.Entry<TopicPartition, LocalReplicaChanges.PartitionInfo> e : local.followers().entrySet()) {
            out.add(new LeaderChange(e.getKey(), e.getValue().topicId(), false, e.getValue().partition().leaderEpoch, false));
        }
        return out;
    }
}
