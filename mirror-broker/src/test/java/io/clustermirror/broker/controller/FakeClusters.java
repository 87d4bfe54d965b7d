package io.clustermirror.broker.controller;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.image.MirrorImage;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Source and destination clusters of a test's own making, for the controller's decisions. */
final class FakeClusters {
    private FakeClusters() {
    }

    /** A source cluster of our own making: topics with partition counts, or unreachable. */
    static final class FakeSource implements SourceCluster {
        final Map<String, SourceTopic> topics = new HashMap<>();
        boolean reachable = true;
        MirrorImage image = MirrorImage.EMPTY;
        /** The clusters some bootstrap servers reach instead of the source. */
        final Map<String, String> otherClusters = new HashMap<>();

        @Override
        public MirrorImage mirrorImage(MirrorConfig config) {
            return image;
        }

        @Override
        public String clusterId(MirrorConfig config) {
            if (!reachable) {
                throw new ClusterMirrorException(MirrorError.SOURCE_CLUSTER_UNREACHABLE, "down");
            }
            return otherClusters.getOrDefault(config.bootstrapServers(), "source-cluster-id");
        }

        @Override
        public Set<String> topicNames(MirrorConfig config) {
            return topics.keySet();
        }

        @Override
        public Map<String, SourceTopic> describe(MirrorConfig config, Collection<String> names) {
            Map<String, SourceTopic> m = new HashMap<>();
            names.forEach(n -> m.put(n, topics.get(n)));
            return m;
        }
    }

    static final class FakeDestination implements DestinationCluster {
        final Map<String, Topic> topics = new HashMap<>();
        final List<String> created = new ArrayList<>();
        int describeCalls;
        int createCalls;
        final List<String> grown = new ArrayList<>();
        final Map<String, Map<String, String>> createdConfigs = new HashMap<>();
        String failCreateOf;
        /** Thrown by every call while set: a bug that is not a ClusterMirrorException. */
        RuntimeException failWith;

        @Override
        public Map<String, Topic> describe(Collection<String> names) {
            if (failWith != null) {
                throw failWith;
            }
            describeCalls++;
            Map<String, Topic> m = new HashMap<>();
            names.stream().filter(topics::containsKey).forEach(n -> m.put(n, topics.get(n)));
            return m;
        }

        /** All or none, as the real destination: nothing is created if one of them cannot be. */
        @Override
        public void create(List<NewTopicSpec> newTopics) {
            createCalls++;
            if (newTopics.stream().anyMatch(t -> t.topic().equals(failCreateOf))) {
                throw new ClusterMirrorException(MirrorError.UNKNOWN_SERVER_ERROR, "cannot create " + failCreateOf);
            }
            for (NewTopicSpec t : newTopics) {
                created.add(t.topic());
                createdConfigs.put(t.topic(), t.configs());
                topics.put(t.topic(), emptyTopic(t.partitions()));
            }
        }

        @Override
        public void createPartitions(String topic, int totalPartitions) {
            grown.add(topic + "=" + totalPartitions);
            List<Log> logs = new ArrayList<>(topics.get(topic).logs());
            logs.addAll(emptyTopic(totalPartitions - logs.size()).logs());
            topics.put(topic, new Topic(logs));
        }
    }

    static DestinationCluster.Topic emptyTopic(int partitions) {
        return new DestinationCluster.Topic(java.util.Collections.nCopies(partitions, new DestinationCluster.Log(0, 0)));
    }
}
