package io.clustermirror.admin.internals;

import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.ClusterMirrorListing;
import io.clustermirror.admin.HeldLogStart;
import io.clustermirror.admin.HeldTopicChange;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.HeldChange;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;

import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static io.clustermirror.admin.MirrorPartitionDescription.UNKNOWN;

/** Builds the admin API's view of mirrors from a {@link MirrorImage}. No I/O. */
public final class MirrorDescriptions {
    private MirrorDescriptions() {
    }

    public static ClusterMirrorListing listing(MirrorImage image, MirrorRecord mirror) {
        return new ClusterMirrorListing(mirror.name(), mirror.configs().get(MirrorConfig.BOOTSTRAP_SERVERS),
            mirror.sourceClusterId(), image.topicsOf(mirror.name()).size());
    }

    /**
     * The destination partitions of a mirror's topics whose live end offsets a description shows: those a leader has
     * reported (they have a state record). A partition without one shows no offsets; its log may not exist yet (a start of
     * thousands of partitions creates them for tens of seconds), and asking its end would only make the admin client retry
     * a Metadata request of the whole topic until the call's deadline.
     */
    public static List<TopicPartition> reportedPartitionsOf(MirrorImage image, String mirror) {
        return image.topicsOf(mirror).stream()
            .flatMap(topic -> image.partitionStatesOf(mirror, topic.topic()).stream()
                .map(s -> new TopicPartition(topic.topic(), s.partition())))
            .collect(Collectors.toList());
    }

    /**
     * Describes a mirror. Its configs are redacted, so secrets never leave this method.
     *
     * @param destinationEndOffsets live end offsets of the destination partitions; a partition missing from
     *                              the map (e.g. its topic is not created yet) shows an unknown end offset
     * @param nowMs                 the time of the description, which the lag of a partition that does not fetch grows with
     */
    public static ClusterMirrorDescription description(MirrorImage image, MirrorRecord mirror,
                                                       Map<TopicPartition, Long> destinationEndOffsets, long nowMs) {
        List<MirrorTopicDescription> topics = new ArrayList<>();
        MirrorConfig config = MirrorConfig.validate(mirror.name(), mirror.configs());
        for (MirrorTopicRecord topic : image.topicsOf(mirror.name())) {
            List<MirrorPartitionDescription> partitions = IntStream.range(0, topic.partitions())
                .mapToObj(p -> partition(image, topic, p,
                    destinationEndOffsets.getOrDefault(new TopicPartition(topic.topic(), p), (long) UNKNOWN), nowMs,
                    config.destructiveHoldMs()))
                .collect(Collectors.toList());
            MirrorTopicDescription.Command lastCommand = topic.lastCommand() == null ? null
                : new MirrorTopicDescription.Command(topic.lastCommand().commandId(), String.valueOf(topic.lastCommand().op()),
                    topic.lastCommand().appliedMs(), topic.lastCommand().result());
            long holdMs = config.destructiveHoldMs();
            List<HeldTopicChange> held = topic.heldChanges().stream().map(c -> new HeldTopicChange(c.toDisplay(), c.sinceMs(),
                c.status().name(), c.status() == HeldChange.Status.HELD ? c.appliesAtMs(holdMs) : -1)).toList();
            topics.add(new MirrorTopicDescription(topic.topic(), topic.desired(), partitions, lastCommand, held));
        }
        return new ClusterMirrorDescription(mirror.name(), config.redacted(), mirror.sourceClusterId(), topics);
    }

    private static MirrorPartitionDescription partition(MirrorImage image, MirrorTopicRecord topic, int partition,
                                                        long destinationEndOffset, long nowMs, long holdMs) {
        return image.partitionState(topic.mirror(), topic.topic(), partition)
            .map(s -> new MirrorPartitionDescription(partition, s.state(), sourceEnd(s),
                destinationEndOffset, lag(sourceEnd(s), destinationEndOffset), s.lastMirroredOffset(),
                s.lastMirroredEpoch(), s.lastError(), s.barrierOffset(), s.truncatedFromOffset(),
                s.truncatedToOffset(), s.leaderId(), s.lagMs(nowMs), s.heldLogStarts().held().stream()
                    .map(h -> new HeldLogStart(h.offset(), h.sinceMs(), h.appliesAtMs(holdMs))).toList(),
                s.failureRetries() == null ? 0 : s.failureRetries().attempts(),
                s.failureRetries() == null ? UNKNOWN : s.failureRetries().nextAttemptMs(),
                s.failureRetries() == null || s.failureRetries().recoverable()))
            // No leader has reported the partition yet.
            .orElseGet(() -> new MirrorPartitionDescription(partition, PartitionState.UNKNOWN, UNKNOWN,
                destinationEndOffset, UNKNOWN, UNKNOWN, UNKNOWN, null, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN));
    }

    /**
     * The source's end as the leader last saw it, or unknown while it cannot reach the source: the source may have taken
     * records since, so a last-seen end would show a lag (often 0) that nobody knows.
     */
    private static long sourceEnd(PartitionStateRecord s) {
        return s.sourceUnavailable() ? UNKNOWN : s.sourceLogEndOffset();
    }

    /**
     * The lag in offsets, or unknown if either end is. The source end is a snapshot that may be older than the
     * live destination end, so a negative difference means caught up, not ahead.
     */
    static long lag(long sourceEndOffset, long destinationEndOffset) {
        if (sourceEndOffset < 0 || destinationEndOffset < 0) {
            return UNKNOWN;
        }
        return Math.max(0, sourceEndOffset - destinationEndOffset);
    }
}
