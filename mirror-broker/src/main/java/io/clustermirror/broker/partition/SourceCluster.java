package io.clustermirror.broker.partition;

import io.clustermirror.broker.fetch.ClusterLogReader;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.image.MirrorImageReader;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What the preparations, repairs and lag probes read from a mirror's source cluster. */
interface SourceCluster {
    /** The source's own mirror image: whether it copies a topic from this cluster, and what it mirrored from it. */
    MirrorImage image(MirrorConfig config);

    /**
     * A reader of the source's log of {@code tp}, of the topic with id {@code topicId} only: it refuses to read another with
     * {@link MirrorError#SOURCE_TOPIC_ID_CHANGED}, so that no alignment compares the mirrored data with a re-created topic's
     * and cuts it. Closing it releases its clients.
     */
    SourceLog log(MirrorConfig config, String clientId, TopicPartition tp, Uuid topicId);

    /**
     * The source's end and first batch at or past each given offset (the destinations' ends of paused partitions).
     *
     * @throws RuntimeException when the source cannot be read
     */
    Map<TopicPartition, ClusterLogReader.Head> heads(MirrorConfig config, String clientId, Map<TopicPartition, Long> offsets);

    /** The batches of one source partition. */
    interface SourceLog extends LogComparison.BatchReader, AutoCloseable {
        @Override
        void close();
    }

    /** The source clusters as this broker's clients of them read them, each read with its own short-lived clients. */
    static SourceCluster of(BrokerClientConfigs clientConfigs) {
        return new SourceCluster() {
            @Override
            public MirrorImage image(MirrorConfig config) {
                return MirrorImageReader.read(clientConfigs.clientProperties(config), clientConfigs.sourceResponseBound(config.name()),
                    Duration.ofSeconds(15));
            }

            @Override
            public SourceLog log(MirrorConfig config, String clientId, TopicPartition tp, Uuid topicId) {
                ClusterLogReader reader = new ClusterLogReader(clientConfigs.clientProperties(config),
                    clientConfigs.sourceResponseBound(config.name()), clientId, Duration.ofSeconds(30));
                return new SourceLog() {
                    @Override
                    public List<StoredBatch> batches(long from, long to) {
                        return reader.batches(tp, topicId, from, to);
                    }

                    @Override
                    public void close() {
                        reader.close();
                    }
                };
            }

            @Override
            public Map<TopicPartition, ClusterLogReader.Head> heads(MirrorConfig config, String clientId, Map<TopicPartition, Long> offsets) {
                Map<TopicPartition, ClusterLogReader.Head> heads = new HashMap<>();
                try (ClusterLogReader reader = new ClusterLogReader(clientConfigs.clientProperties(config),
                        clientConfigs.sourceResponseBound(config.name()), clientId, Duration.ofSeconds(10))) {
                    offsets.forEach((tp, offset) -> heads.put(tp, reader.head(tp, offset)));
                }
                return heads;
            }
        };
    }
}
