package io.clustermirror.common.image;

import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.LogEnds;
import io.clustermirror.common.compat.BoundedClients;
import io.clustermirror.common.compat.ResponseBound;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.function.BiConsumer;

/**
 * Reads another cluster's mirror image: its {@code __mirror_metadata} and {@code __mirror_state} up to their
 * current ends. Failback and loop detection use it to learn what a source cluster mirrored from us; a
 * cluster that never ran Cluster Mirror has an empty image, and so has one whose mirror topics the client may not
 * read (logged as a warning): a destination log whose lineage is then unknown is compared with the source's batch by
 * batch before anything is cut, so that loses no data, only loop detection and failback through that cluster.
 */
public final class MirrorImageReader {
    private static final Logger log = LoggerFactory.getLogger(MirrorImageReader.class);

    private MirrorImageReader() {
    }

    /**
     * Replays partitions of {@code __mirror_metadata} and {@code __mirror_state} from their beginnings up to their ends at
     * the call ({@link LogEnds#readFromBeginning}) into an image: the one replay of every one-shot reader (this class, the
     * admin client, the controller's load on activation). No partition: the empty image.
     *
     * @param replay how a record goes into the delta: {@link MirrorDelta#replay} or {@link MirrorDelta#replayOrSkip}
     * @return the image, or empty if the deadline passed before every partition was read to its end
     */
    public static Optional<MirrorImage> replayFromBeginning(Consumer<byte[], byte[]> consumer, Collection<TopicPartition> partitions,
                                                            Time time, long deadlineMs,
                                                            BiConsumer<MirrorDelta, ConsumerRecord<byte[], byte[]>> replay) {
        if (partitions.isEmpty()) {
            return Optional.of(MirrorImage.EMPTY);
        }
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        boolean complete = LogEnds.readFromBeginning(consumer, partitions, time, deadlineMs, r -> replay.accept(delta, r));
        return complete ? Optional.of(delta.apply()) : Optional.empty();
    }

    /**
     * @param clientProperties Kafka client properties of that cluster (bootstrap servers, security)
     * @param bound            the largest response read from that cluster
     * @throws TimeoutException if the topics cannot be read to their ends within {@code timeout}
     */
    public static MirrorImage read(Properties clientProperties, ResponseBound bound, Duration timeout) {
        io.clustermirror.common.ListenerProbe.check(clientProperties);
        Properties props = new Properties();
        props.putAll(clientProperties);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        Time time = Time.SYSTEM;
        long deadlineMs = time.milliseconds() + timeout.toMillis();
        try (KafkaConsumer<byte[], byte[]> consumer = BoundedClients.consumer(props, bound)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (String topic : List.of(InternalTopics.METADATA, InternalTopics.STATE)) {
                // Asked by name: a topic the client may not describe fails here instead of looking absent.
                consumer.partitionsFor(topic, timeout).forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
            }
            return replayFromBeginning(consumer, partitions, time, deadlineMs, MirrorDelta::replay)
                .orElseThrow(() -> new TimeoutException("could not read the mirror topics to their ends within "
                    + timeout.toMillis() + " ms"));
        } catch (TopicAuthorizationException e) {
            log.warn("Cannot read the mirror state of the cluster at {} ({}): grant this mirror's principal READ on {} and {} "
                + "there (DESCRIBE on the cluster if it runs Cluster Mirror with ACLs); until then that cluster counts as having no "
                + "mirror state (no mirror loop through it is detected, no failback from it is recognised)",
                props.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG), e.getMessage(),
                InternalTopics.METADATA, InternalTopics.STATE);
            return MirrorImage.EMPTY;
        }
    }
}
