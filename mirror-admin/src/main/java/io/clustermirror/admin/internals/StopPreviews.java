package io.clustermirror.admin.internals;

import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.StopPreview;
import io.clustermirror.admin.StopTransactions;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.stream.IntStream;

/**
 * The decisions of a failover dry-run (pure): which partitions a stop of the same topics would select, with the same
 * rules and refusals as the mirror controller's STOP, and what it would do to each given the destination's offsets.
 */
public final class StopPreviews {
    private StopPreviews() {
    }

    /**
     * The partitions of the topics a stop would select, ordered by topic and partition.
     *
     * @throws ClusterMirrorException as the stop would fail: UNKNOWN_CLUSTER_MIRROR, INVALID_REQUEST (no topics),
     *                                TOPIC_NOT_IN_CLUSTER_MIRROR (a pattern matching none of its topics),
     *                                MIRROR_TOPIC_NOT_MIRRORING (a topic already stopped)
     */
    public static List<TopicPartition> partitionsToStop(MirrorImage image, String mirror, List<String> topics, List<String> excludes) {
        SortedMap<String, MirrorTopicRecord> selected = image.selectTopicsOf(mirror, topics, excludes);
        for (MirrorTopicRecord topic : selected.values()) {
            if (topic.desired() == DesiredState.STOPPED) {
                throw new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_MIRRORING, "topic '" + topic.topic() + "' is already STOPPED");
            }
        }
        return selected.values().stream()
            .flatMap(topic -> IntStream.range(0, topic.partitions()).mapToObj(p -> new TopicPartition(topic.topic(), p)))
            .toList();
    }

    /**
     * What the stop would do to one partition: truncate from the last stable offset to the end when a transaction is
     * open there, nothing otherwise (also when the end is unknown: the stop then waits for the partition's leader). With
     * the partition's lag in milliseconds at {@code nowMs}: how old the source records are that a stop now would leave
     * behind.
     */
    public static StopPreview preview(MirrorImage image, String mirror, TopicPartition tp, long end, long lastStableOffset,
                                      long records, List<Long> openProducerIds, long nowMs) {
        Optional<PartitionStateRecord> recorded = image.partitionState(mirror, tp.topic(), tp.partition());
        PartitionState state = stateOf(recorded);
        boolean truncates = end >= 0 && lastStableOffset >= 0 && lastStableOffset < end;
        long unknown = MirrorPartitionDescription.UNKNOWN;
        return new StopPreview(tp.topic(), tp.partition(), state, end, lastStableOffset, truncates ? lastStableOffset : unknown,
            truncates ? end : unknown, truncates ? records : 0, openProducerIds, lagMs(image, mirror, tp, nowMs));
    }

    /**
     * The transactions of a dry-run: the split ones and the consistent cuts {@code found}, with what the analysis could not
     * see. A partition not known to have caught up with its source (its lag at {@code nowMs} unknown or above 0) may miss
     * records of a transaction altogether, which no analysis of the destination can see.
     */
    public static StopTransactions transactions(MirrorImage image, String mirror, TransactionTails.Result found, long nowMs) {
        TransactionCuts.Analysis analysis = found.analysis();
        List<StopTransactions.ConsistentCut> cuts = new ArrayList<>();
        analysis.consistentCuts().forEach((tp, cut) -> cuts.add(new StopTransactions.ConsistentCut(tp.topic(), tp.partition(), cut,
            found.lastStableOffsets().get(tp), analysis.extraRecords().get(tp))));
        cuts.sort(Comparator.comparing(StopTransactions.ConsistentCut::topic).thenComparingInt(StopTransactions.ConsistentCut::partition));
        List<String> limits = new ArrayList<>();
        KnownSourceLog known = found.known();
        boolean current = known.readUpToMs() >= found.offsetsReadAtMs();
        if (known.readUpToMs() < 0) {
            limits.add("read from the destination's mirrored data only (the mirror has not read the source's coordinator logs: its "
                + "controller's sync reads __transaction_state and the synced groups' __consumer_offsets, which needs READ and DESCRIBE "
                + "on both for the mirror's source principal; see its WARN): a transaction none of whose records on a partition was "
                + "mirrored is not seen there, nor offsets groups committed in transactions");
        } else if (!current) {
            limits.add("the source's transaction log is known up to " + java.time.Instant.ofEpochMilli(known.readUpToMs()) + " ("
                + known.transactions().size() + " transaction(s) over several partitions): a transaction prepared later, none of whose "
                + "records on a partition was mirrored, is not seen there");
        }
        List<TopicPartition> behind = analysis.consistentCuts().keySet().stream().filter(tp -> lagMs(image, mirror, tp, nowMs) != 0).toList();
        if (!behind.isEmpty() && !current) {
            limits.add(behind.size() + " partition(s) had not caught up with the source when last known (" + firstFew(behind)
                + "): records of a transaction may be missing there unseen");
        }
        if (!found.unread().isEmpty()) {
            limits.add("the offsets of " + found.unread().size() + " partition(s) could not be read (" + firstFew(found.unread())
                + "): not analysed; a consistent stop cuts them at their last stable offset");
        }
        if (!analysis.needEarlierWindow().isEmpty()) {
            limits.add("a transaction to cut began before what was read of " + firstFew(List.copyOf(analysis.needEarlierWindow()))
                + ": the cut there keeps part of it");
        }
        if (analysis.epochsReused()) {
            limits.add("a producer wrote several transactions with one epoch (transaction protocol version 1): they are cut together");
        }
        List<StopTransactions.GroupOffset> groupOffsets = analysis.groupOffsets().stream().map(g -> new StopTransactions.GroupOffset(
            g.group(), g.tp().topic(), g.tp().partition(), g.offset(), g.commitsCut())).toList();
        List<String> undecided = groupOffsets.stream().filter(g -> g.offset() < 0)
            .map(g -> "'" + g.group() + "' on " + g.topic() + "-" + g.partition()).toList();
        if (!undecided.isEmpty()) {
            limits.add("the cut keeps none of the transactional offset commits the mirror knows of for group(s) " + String.join(", ",
                undecided.subList(0, Math.min(5, undecided.size()))) + (undecided.size() > 5 ? " and " + (undecided.size() - 5) + " more" : "")
                + ": their offsets stay as the sync copied them (at most the cut), which may not match the output kept");
        }
        return new StopTransactions(analysis.splitByPlainStop(), cuts, limits, groupOffsets, known.readUpToMs(), current);
    }

    private static String firstFew(List<TopicPartition> partitions) {
        String few = partitions.stream().limit(5).map(TopicPartition::toString).collect(java.util.stream.Collectors.joining(", "));
        return partitions.size() > 5 ? few + " and " + (partitions.size() - 5) + " more" : few;
    }

    /** The partition's actual state as its leader last reported it, UNKNOWN before any report. */
    static PartitionState stateOf(MirrorImage image, String mirror, TopicPartition tp) {
        return stateOf(image.partitionState(mirror, tp.topic(), tp.partition()));
    }

    /** The partition's lag in milliseconds at {@code nowMs} as its leader last recorded it, UNKNOWN before any report. */
    static long lagMs(MirrorImage image, String mirror, TopicPartition tp, long nowMs) {
        return image.partitionState(mirror, tp.topic(), tp.partition()).map(r -> r.lagMs(nowMs))
            .orElse((long) MirrorPartitionDescription.UNKNOWN);
    }

    private static PartitionState stateOf(Optional<PartitionStateRecord> recorded) {
        return recorded.map(PartitionStateRecord::state).orElse(PartitionState.UNKNOWN);
    }
}
