package io.clustermirror.broker.partition;

import io.clustermirror.broker.fetch.DestinationLogStart;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.records.HeldDecision;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.StopCut;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@link PartitionShard} asks {@link PartitionRuntime} to do, as Kafka's coordinator shards return the records to
 * write and the response: the state records to write, the fetcher changes, the procedures on a leader's log and the
 * timers. The shard has decided everything; the runtime performs each effect in the order the shard listed them (a
 * producer-state cleaning before the STOPPED record it permits, a fence's advance before the procedure it admits), and
 * reports what comes of the asynchronous ones back to the shard as new inputs.
 *
 * <p>Effects may be issued again for the same partition (a retry, a new leader epoch, a broker restart half-way
 * through), so each is idempotent or fenced by the partition's leader epoch or generation.
 */
sealed interface PartitionEffect {
    /** A change of which partitions the mirrors' fetchers fetch ({@link FetcherRegistry}). */
    sealed interface FetcherEffect extends PartitionEffect {
    }

    /** A procedure on a leader's log, run on a procedure thread ({@link LogProcedureRunner}). */
    sealed interface ProcedureEffect extends PartitionEffect {
    }

    /** Refuse from now on every log change of a procedure issued before {@code generation} ({@link LogFence#advanceTo}). */
    record AdvanceFence(TopicPartition tp, long generation) implements PartitionEffect {
    }

    /**
     * Write {@code record} to {@code __mirror_state}; {@code superseded} are the log keys of the partition's older records,
     * tombstoned once it landed.
     */
    record WriteState(PartitionStateRecord record, List<String> superseded) implements PartitionEffect {
        public WriteState {
            superseded = List.copyOf(superseded);
        }
    }

    /**
     * Hand the partition to its mirror's fetchers (built from {@code config} if the mirror has none), fetching from
     * {@code fetchOffset}, the destination log end, after source epoch {@code lastFetchedEpoch} (-1: unknown). If the
     * fetchers cannot be built, the runtime reports {@link PartitionEvent.FetchFailed}.
     */
    record AddToFetcher(MirrorConfig config, TopicPartition tp, Uuid sourceTopicId, long fetchOffset, int leaderEpoch,
                        int lastFetchedEpoch, DestinationLogStart logStart) implements FetcherEffect {
    }

    /** Hand the partition back to its mirror's fetchers past source records {@code [fromOffset, toOffset)} the source deleted. */
    record AddPastLostRecords(MirrorConfig config, TopicPartition tp, Uuid sourceTopicId, long fromOffset, long toOffset,
                              int leaderEpoch, DestinationLogStart logStart) implements FetcherEffect {
    }

    /** Take the partition from its mirror's fetchers; once this returns no append of theirs is in flight. */
    record RemoveFromFetcher(String mirror, TopicPartition tp) implements FetcherEffect {
    }

    /** Pass the operator's decision on the partition's held log-start moves to the fetcher that holds them. */
    record DecideHeldLogStarts(String mirror, TopicPartition tp, HeldDecision decision) implements FetcherEffect {
    }

    /** Close the fetchers of a mirror that is gone. */
    record CloseFetchers(String mirror) implements FetcherEffect {
    }

    /**
     * The mirror's configs changed: take {@code moving} from its fetchers, close them, and then (behind the progress they
     * reported before they let go) report {@link PartitionShard#fetchersReplaced} so that each continues on new ones.
     */
    record ReplaceFetchers(String mirror, List<MirrorPartition> moving) implements FetcherEffect {
        public ReplaceFetchers {
            moving = List.copyOf(moving);
        }
    }

    /**
     * Align the leader's log with the source before mirroring ({@link LogAlignment}) on the alignment thread, and report
     * {@link PartitionShard#prepared}. {@code own} is the partition's record in this cluster's image when it was issued.
     */
    record Prepare(MirrorPartition partition, MirrorConfig config, Uuid sourceTopicId, Optional<PartitionStateRecord> own) implements ProcedureEffect {
    }

    /**
     * Cut the log where the source's epoch {@code sourceEpoch} ends at {@code sourceEpochEndOffset}, once the batches confirm
     * it, on the alignment thread, and report {@link PartitionShard#repaired}.
     */
    record RepairDivergence(MirrorPartition partition, MirrorConfig config, Uuid sourceTopicId, int sourceEpoch,
                            long sourceEpochEndOffset) implements ProcedureEffect {
    }

    /**
     * Begin the stop on the stop thread: take {@code decided}, the cut an earlier attempt recorded, or decide one (at
     * {@code chosenCut}, a consistent stop's cut for the partition, or at the last stable offset when that is -1); a cut
     * that removes records goes to {@link PartitionShard#stopCutDecided} to be recorded first, any other completes at once.
     * Once the log is stopped, and before STOPPED is recorded, the groups of {@code groupOffsets} get those offsets.
     */
    record RunStop(MirrorPartition partition, Optional<StopCut> decided, long chosenCut, Map<String, Long> groupOffsets,
                   String sourceClusterId) implements ProcedureEffect {
    }

    /**
     * Write {@code record}, which holds the stop's cut, and once it has landed complete the stop at that cut, then give the
     * groups of {@code groupOffsets} those offsets.
     */
    record CompleteStopOnceRecorded(WriteState record, MirrorPartition partition, StopCut cut, Map<String, Long> groupOffsets,
                                    String sourceClusterId) implements ProcedureEffect {
    }

    /** Wait until no log change of a superseded procedure runs ({@link LogFence#awaitChangesInProgress}). */
    record AwaitLogChanges(TopicPartition tp) implements PartitionEffect {
    }

    /** The leader's producer state is clean up to its log end: clients may write once STOPPED is recorded. */
    record MarkProducerStateClean(TopicPartition tp, int leaderEpoch) implements PartitionEffect {
    }

    /** Report {@link PartitionShard#retryDue} at {@code atMs}. */
    record ScheduleRetry(TopicPartition tp, long atMs) implements PartitionEffect {
    }

    /** Show the partition's lag gauge, from the source timestamp of its oldest unmirrored record. */
    record TrackLag(String mirror, TopicPartition tp, long oldestUnmirroredTimestamp) implements PartitionEffect {
    }

    /** Remove the partition's lag gauge: this broker does not lead it, or it is stopped or left its mirror. */
    record UntrackLag(TopicPartition tp) implements PartitionEffect {
    }
}
