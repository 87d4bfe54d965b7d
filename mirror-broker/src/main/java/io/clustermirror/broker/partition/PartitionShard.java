package io.clustermirror.broker.partition;

import io.clustermirror.broker.bridge.LeaderChange;
import io.clustermirror.broker.bridge.LeaderLogState;
import io.clustermirror.broker.fetch.ClusterLogReader;
import io.clustermirror.broker.fetch.DestinationLogStart;
import io.clustermirror.broker.fetch.UnmirroredRecords;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.FailureRetries;
import io.clustermirror.common.records.HeldDecision;
import io.clustermirror.common.records.HeldLogStarts;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.StopCut;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.DoubleSupplier;

/**
 * Every decision about the mirror partitions one destination broker leads, and all their state: each partition's
 * {@link MirrorPartition} (through {@link PartitionStateMachine}), its {@link MirrorProgress}, the leaderships this broker
 * holds and the mirror image it acts on. Each input (a leadership, an image, a fetcher's report, a procedure's outcome, a
 * timer) returns the {@link PartitionEffect}s to perform, in order; the shard performs none itself, as Kafka's coordinator
 * shards return records and a response to their runtime. It reads only the clock and the local leader logs' state.
 *
 * <p>Not thread-safe: {@link PartitionRuntime} calls it from its one event thread, so inputs are seen in order.
 *
 * <p>Invariants:
 * <ul>
 *   <li>An action of the machine that completes at once (taking a partition from its fetcher, starting to fetch, stopping
 *       a partition never mirrored into) completes with its event before the next input is handled: the machine's
 *       invariants count on it (a stop waits for the fetcher's removal it issued, not an earlier one).</li>
 *   <li>A partition is handed to a fetcher only while this broker leads it at the leader epoch of the transition that
 *       asked, fetching from the destination log end, with the last fetched epoch the lineage shows; a procedure's
 *       outcome, and with it any lineage it brings, is taken only while the generation it was issued in is current.</li>
 *   <li>A partition's generation continues, when it leaves its mirror and comes back, from the highest this shard gave it,
 *       so that no earlier procedure passes for a current one.</li>
 * </ul>
 */
final class PartitionShard {
    private static final Logger log = LoggerFactory.getLogger(PartitionShard.class);

    private final int nodeId;
    private final Time time;
    private final LocalLeaderLogs logs;
    private final PartitionStateMachine machine;

    private MirrorImage image = MirrorImage.EMPTY;
    private final Map<TopicPartition, LeaderChange> leaderships = new HashMap<>();
    private final Map<TopicPartition, MirrorPartition> partitions = new HashMap<>();
    private final Map<TopicPartition, MirrorProgress> progress = new HashMap<>();
    /** The highest generation each partition reached; never removed (see the class invariants). */
    private final Map<TopicPartition, Long> generations = new HashMap<>();
    /** Each mirror's retry policy, read from the current image's configs when first needed. */
    private final Map<String, RetryPolicy> retryPolicies = new HashMap<>();
    /** Partitions whose progress changed since their last record: the next snapshot records them. */
    private final Set<TopicPartition> dirty = new HashSet<>();

    /** The local leader logs' state: the only thing besides the clock the shard reads. */
    interface LocalLeaderLogs {
        Optional<LeaderLogState> leaderLogState(TopicPartition tp);
    }

    /**
     * @param retryJitter where each retry of a FAILED partition falls in its backoff range ({@link RetryPolicy#delayMs})
     */
    PartitionShard(int nodeId, Time time, LocalLeaderLogs logs, DoubleSupplier retryJitter) {
        this.nodeId = nodeId;
        this.time = time;
        this.logs = logs;
        this.machine = new PartitionStateMachine(this::retryPolicy, retryJitter);
    }

    /** The partition's state as this broker knows it, if it has a machine for it. */
    Optional<MirrorPartition> partition(TopicPartition tp) {
        return Optional.ofNullable(partitions.get(tp));
    }

    /** True if the partition has a machine here and belongs to {@code mirror}: its fetchers' reports concern it. */
    boolean belongsTo(TopicPartition tp, String mirror) {
        MirrorPartition p = partitions.get(tp);
        return p != null && p.mirror().equals(mirror);
    }

    /** This broker leads the partition at the leadership's epoch, and the image holds everything its predecessor recorded. */
    List<PartitionEffect> leadershipGained(LeaderChange leadership) {
        leaderships.put(leadership.partition(), leadership);
        List<PartitionEffect> out = new ArrayList<>();
        reconcile(leadership.partition(), out);
        return out;
    }

    /** Another broker leads the partition now, or it was deleted. */
    List<PartitionEffect> leadershipLost(TopicPartition tp) {
        leaderships.remove(tp);
        return partitions.containsKey(tp) ? handle(tp, new PartitionEvent.BecameFollower()) : List.of();
    }

    /**
     * A new mirror image: every partition is brought in line with it, a deleted mirror's fetchers close, a mirror whose
     * configs changed (an ALTER, or secrets sealed again for a new key) moves its fetching partitions to new fetchers with
     * new source clients, and new operator decisions (held log-start moves, {@code --recover}) reach the partitions.
     */
    List<PartitionEffect> imageLoaded(MirrorImage newImage) {
        MirrorImage oldImage = image;
        image = newImage;
        retryPolicies.clear();
        List<PartitionEffect> out = new ArrayList<>();
        Set<TopicPartition> all = new HashSet<>(partitions.keySet());
        all.addAll(leaderships.keySet());
        all.forEach(tp -> reconcile(tp, out));
        oldImage.mirrors().forEach((name, before) -> {
            Optional<MirrorRecord> now = image.mirror(name);
            if (now.isEmpty()) {
                out.add(new PartitionEffect.CloseFetchers(name));
            } else if (!now.get().configs().equals(before.configs())) {
                List<MirrorPartition> moving = partitions.values().stream().filter(p -> p.mirror().equals(name) && p.fetching()).toList();
                log.info("Mirror '{}': its configs changed; {} fetching partition(s) continue on new source clients", name, moving.size());
                out.add(new PartitionEffect.ReplaceFetchers(name, moving));
            }
        });
        passOnHeldDecisions(oldImage, out);
        passOnRecoveries(oldImage, out);
        return out;
    }

    /**
     * The fetchers of a mirror whose configs changed let go of {@code moving}: each partition still fetching at the same
     * leader epoch continues on new fetchers at the destination log end, with its last fetched epoch, as a new leader's
     * fetch does. It stays MIRRORING: nothing is prepared again or truncated.
     */
    List<PartitionEffect> fetchersReplaced(List<MirrorPartition> moving) {
        List<PartitionEffect> out = new ArrayList<>();
        for (MirrorPartition before : moving) {
            TopicPartition tp = before.partition();
            MirrorPartition now = partitions.get(tp);
            if (now != null && now.fetching() && now.leaderEpoch() == before.leaderEpoch()) {
                startFetching(tp, now, out).ifPresent(event -> handle(tp, event, out));
            }
        }
        return out;
    }

    /** {@code __mirror_state} alone was lost: each partition this broker leads records its state again. */
    List<PartitionEffect> stateRecordsLost() {
        List<PartitionEffect> out = new ArrayList<>();
        new ArrayList<>(partitions.keySet()).forEach(tp -> out.addAll(handle(tp, new PartitionEvent.StateRecordLost())));
        return out;
    }

    /** Hands an event to the partition's machine, if it has one, and returns what it asks for. */
    List<PartitionEffect> handle(TopicPartition tp, PartitionEvent event) {
        List<PartitionEffect> out = new ArrayList<>();
        handle(tp, event, out);
        return out;
    }

    /** The fetcher mirrored up to {@code lastMirroredOffset} of source epoch {@code lastSourceEpoch}. */
    List<PartitionEffect> mirrored(TopicPartition tp, long lastMirroredOffset, int lastSourceEpoch, long firstSourceEpochStart,
                                   long sourceEndOffset) {
        MirrorProgress pr = progress.get(tp);
        if (pr == null || !partitions.containsKey(tp)) {
            return List.of();
        }
        pr.mirrored(lastMirroredOffset, lastSourceEpoch, firstSourceEpochStart);
        pr.sourceEndOffset = sourceEndOffset;
        dirty.add(tp);
        return handle(tp, new PartitionEvent.MadeProgress());
    }

    /** The source's end as the fetcher last saw it. */
    List<PartitionEffect> sourceEndSeen(TopicPartition tp, long sourceEndOffset) {
        MirrorProgress pr = progress.get(tp);
        if (pr != null && pr.sourceEndOffset != sourceEndOffset) {
            pr.sourceEndOffset = sourceEndOffset;
            dirty.add(tp);
        }
        return List.of();
    }

    /** The source timestamp of the oldest record the destination lacks, as the fetcher last saw it. */
    List<PartitionEffect> oldestUnmirroredSeen(TopicPartition tp, long oldestUnmirroredTimestamp) {
        MirrorProgress pr = progress.get(tp);
        if (pr == null || !partitions.containsKey(tp) || pr.oldestUnmirroredTimestamp == oldestUnmirroredTimestamp) {
            return List.of();
        }
        pr.oldestUnmirroredTimestamp = oldestUnmirroredTimestamp;
        dirty.add(tp);
        return List.of(lag(tp));
    }

    /** The moves of the source's log start the destination holds back, as the fetcher last reported them. */
    List<PartitionEffect> logStartsHeld(TopicPartition tp, HeldLogStarts held) {
        MirrorProgress pr = progress.get(tp);
        if (pr != null && partitions.containsKey(tp) && !pr.heldLogStarts.equals(held)) {
            pr.heldLogStarts = held;
            dirty.add(tp);
        }
        return List.of();
    }

    /** The fetcher mirrored a barrier at {@code barrierOffset}: the followers' producer-state hygiene learns it from the record. */
    List<PartitionEffect> barrierMirrored(TopicPartition tp, long barrierOffset) {
        MirrorProgress pr = progress.get(tp);
        if (pr == null) {
            return List.of();
        }
        pr.barrierOffset = Math.max(pr.barrierOffset, barrierOffset);
        return handle(tp, new PartitionEvent.LineageChanged());
    }

    /** The source deleted {@code [fromOffset, toOffset)} before it was mirrored: the mirror's data-loss policy decides. */
    List<PartitionEffect> sourceRecordsLost(TopicPartition tp, long fromOffset, long toOffset) {
        MirrorPartition p = partitions.get(tp);
        if (p == null) {
            return List.of();
        }
        boolean failOnLoss = mirrorConfig(p.mirror()).map(MirrorConfig::failOnSourceDataLoss).orElse(false);
        return handle(tp, new PartitionEvent.SourceRecordsLost(fromOffset, toOffset, failOnLoss));
    }

    /** A procedure removed {@code [from, to)} from the leader's log: the record shows it at once (a later failure must not lose it). */
    List<PartitionEffect> truncated(TopicPartition tp, long from, long to) {
        progress.computeIfAbsent(tp, k -> new MirrorProgress()).truncated(from, to);
        return handle(tp, new PartitionEvent.LineageChanged());
    }

    /**
     * A preparation of {@code generation} ended with {@code outcome}; {@code aligned} is what its alignment left, null if it
     * kept the log as it was. A log found identical to the source's up to its end gets its lineage back from the source's
     * batch there (a lost or degraded state record must not leave the fetcher without its last fetched epoch).
     */
    List<PartitionEffect> prepared(TopicPartition tp, long generation, LeaderLogProcedures.Aligned aligned, PartitionEvent outcome) {
        if (!current(tp, generation)) {
            return List.of();
        }
        MirrorProgress pr = progress.computeIfAbsent(tp, k -> new MirrorProgress());
        if (aligned != null && aligned.lastIdenticalEnd() > 0 && aligned.lastIdenticalEnd() == aligned.logEnd()
                && pr.lastMirroredOffset < aligned.logEnd() - 1) {
            pr.lastMirroredOffset = aligned.logEnd() - 1;
            pr.lastMirroredEpoch = aligned.sourceEpoch();
        }
        return handle(tp, outcome);
    }

    /**
     * The source of the partition copies its topic from this cluster ({@code copyingMirror}, the source's mirror): mirroring
     * it back would be a loop, so the preparation fails, naming it.
     */
    List<PartitionEffect> refusedAsLoop(TopicPartition tp, long generation, String copyingMirror) {
        return handle(tp, new PartitionEvent.PrepareFailed(generation, MirrorError.MIRROR_LOOP.format("the source cluster copies "
            + tp.topic() + " from this cluster (its mirror '" + copyingMirror + "'); stop one direction")));
    }

    /**
     * A divergence repair of {@code generation} ended with {@code outcome}; {@code aligned} is where it cut, null if it
     * failed. The fetcher continues after the source's diverging epoch when the cut was confirmed there, after the source's
     * epoch of the last identical batch when the batch comparison decided, and after an unknown epoch when unproven batches
     * remain at the log end.
     */
    List<PartitionEffect> repaired(TopicPartition tp, long generation, int sourceEpoch, LeaderLogProcedures.Aligned aligned,
                                   PartitionEvent outcome) {
        if (!current(tp, generation)) {
            return List.of();
        }
        if (aligned != null) {
            long end = aligned.logEnd();
            int lastEpoch = aligned.lastIdenticalEnd() < 0 ? sourceEpoch : aligned.lastIdenticalEnd() == end ? aligned.sourceEpoch() : -1;
            progress.computeIfAbsent(tp, k -> new MirrorProgress()).cutAt(end, lastEpoch);
        }
        return handle(tp, outcome);
    }

    /**
     * The stop of {@code generation} decided a cut that removes records: it is recorded (describe shows it from now on,
     * whichever leader makes it) and the stop goes on once the record has landed, so that whatever happens to this leader
     * after its truncation, the next attempt cuts at the same offset.
     */
    List<PartitionEffect> stopCutDecided(TopicPartition tp, long generation, StopCut cut, String sourceClusterId) {
        if (!current(tp, generation)) {
            return List.of(); // superseded: the stop that superseded it decides for itself
        }
        MirrorProgress pr = progress.computeIfAbsent(tp, k -> new MirrorProgress());
        pr.stopCut = cut;
        pr.truncated(cut.offset(), cut.logEnd());
        MirrorPartition p = partitions.get(tp);
        return stateRecord(tp, p).<List<PartitionEffect>>map(record -> List.of(new PartitionEffect.CompleteStopOnceRecorded(record, p, cut,
            stopGroupOffsets(tp), sourceClusterId))).orElse(List.of());
    }

    /** The offsets a consistent stop under way gives on {@code tp} to groups that commit it inside transactions. */
    private java.util.Map<String, Long> stopGroupOffsets(TopicPartition tp) {
        return image.topic(tp.topic()).map(t -> t.stopGroupOffsetsOf(tp.partition())).orElse(java.util.Map.of());
    }

    /**
     * The stop of {@code generation} ended with {@code outcome}; {@code done} is what it did to the log, null if it failed.
     * The producer state is marked clean before STOPPED is recorded: the authorizer lets clients write once it reads STOPPED.
     */
    List<PartitionEffect> stopped(TopicPartition tp, long generation, LeaderLogProcedures.Outcome done, PartitionEvent outcome) {
        if (!current(tp, generation)) {
            return List.of();
        }
        List<PartitionEffect> out = new ArrayList<>();
        if (done != null) {
            MirrorProgress pr = progress.computeIfAbsent(tp, k -> new MirrorProgress());
            pr.barrierOffset = done.barrierOffset();
            if (done.truncatedFromOffset() >= 0) {
                pr.truncated(done.truncatedFromOffset(), done.truncatedToOffset());
            }
            out.add(new PartitionEffect.MarkProducerStateClean(tp, partitions.get(tp).leaderEpoch()));
        }
        handle(tp, outcome, out);
        return out;
    }

    /** A retry a FAILED partition scheduled is due. */
    List<PartitionEffect> retryDue(TopicPartition tp) {
        return partitions.containsKey(tp) ? handle(tp, new PartitionEvent.RetryDue()) : List.of();
    }

    /**
     * The periodic snapshot: records the partitions whose progress changed, and the mirroring ones that lack source records
     * (their lag grows also when no progress is made: the record shows its age as of its write).
     */
    List<PartitionEffect> snapshotDue() {
        progress.forEach((tp, pr) -> {
            MirrorPartition p = partitions.get(tp);
            if (p != null && p.state() == PartitionState.MIRRORING && pr.oldestUnmirroredTimestamp >= 0) {
                dirty.add(tp);
            }
        });
        List<PartitionEffect> out = new ArrayList<>();
        for (TopicPartition tp : new ArrayList<>(dirty)) {
            handle(tp, new PartitionEvent.ProgressSnapshotDue(), out);
        }
        dirty.clear();
        return out;
    }

    /** The destination log ends of the paused partitions this broker leads, by mirror: where a probe of the source looks. */
    Map<String, Map<TopicPartition, Long>> pausedLogEnds() {
        Map<String, Map<TopicPartition, Long>> ends = new HashMap<>();
        partitions.forEach((tp, p) -> {
            if (p.leader() && p.state() == PartitionState.PAUSED && image.mirror(p.mirror()).isPresent()) {
                logs.leaderLogState(tp).ifPresent(s -> ends.computeIfAbsent(p.mirror(), m -> new HashMap<>()).put(tp, s.logEndOffset()));
            }
        });
        return ends;
    }

    /** The validated configs of a mirror in the current image. */
    Optional<MirrorConfig> mirrorConfig(String mirror) {
        return image.mirror(mirror).map(m -> MirrorConfig.validate(m.name(), m.configs()));
    }

    /**
     * A probe of the source found {@code heads} at the destination ends it probed ({@code ends}): the source's end and its
     * first batch past each. It applies only to a partition still paused, led here, at the same end; the lag then grows
     * from the oldest record the destination lacks.
     */
    List<PartitionEffect> probed(Map<String, Map<TopicPartition, Long>> ends, Map<TopicPartition, ClusterLogReader.Head> heads) {
        List<PartitionEffect> out = new ArrayList<>();
        ends.values().forEach(offsets -> offsets.forEach((tp, destEnd) -> {
            ClusterLogReader.Head head = heads.get(tp);
            MirrorPartition p = partitions.get(tp);
            MirrorProgress pr = progress.get(tp);
            boolean unchanged = p != null && p.leader() && p.state() == PartitionState.PAUSED && pr != null
                && logs.leaderLogState(tp).map(LeaderLogState::logEndOffset).orElse(-1L).equals(destEnd);
            if (head == null || !unchanged) {
                return;
            }
            long oldest = UnmirroredRecords.atProbe(destEnd, head.highWatermark(), head.firstBatch());
            if (oldest != pr.oldestUnmirroredTimestamp || head.highWatermark() != pr.sourceEndOffset) {
                pr.oldestUnmirroredTimestamp = oldest;
                pr.sourceEndOffset = head.highWatermark();
                dirty.add(tp);
                out.add(lag(tp));
            }
        }));
        return out;
    }

    /** The retry policy of a mirror as its configs in the current image give it (the defaults once it is gone). */
    private RetryPolicy retryPolicy(String mirror) {
        return retryPolicies.computeIfAbsent(mirror, m -> mirrorConfig(m).map(RetryPolicy::of).orElse(RetryPolicy.DEFAULTS));
    }

    /** Hands an operator's new {@code --recover} of a topic to the machines of its partitions that this broker leads. */
    private void passOnRecoveries(MirrorImage oldImage, List<PartitionEffect> out) {
        new ArrayList<>(partitions.values()).stream().filter(MirrorPartition::leader).forEach(p -> {
            TopicPartition tp = p.partition();
            String recovery = image.topic(tp.topic()).map(MirrorTopicRecord::recoveryCommandId).orElse(null);
            if (recovery != null && !recovery.equals(oldImage.topic(tp.topic()).map(MirrorTopicRecord::recoveryCommandId).orElse(null))) {
                handle(tp, new PartitionEvent.RecoverRequested(), out);
            }
        });
    }

    /** Hands an operator's new decision on a topic's held changes to the fetchers of its partitions that fetch here. */
    private void passOnHeldDecisions(MirrorImage oldImage, List<PartitionEffect> out) {
        partitions.values().stream().filter(MirrorPartition::fetching).forEach(p -> {
            TopicPartition tp = p.partition();
            HeldDecision decision = image.topic(tp.topic()).map(MirrorTopicRecord::logStartDecision).orElse(null);
            if (decision != null && !decision.equals(oldImage.topic(tp.topic()).map(MirrorTopicRecord::logStartDecision).orElse(null))) {
                out.add(new PartitionEffect.DecideHeldLogStarts(p.mirror(), tp, decision));
            }
        });
    }

    /** Brings one partition's machine in line with leadership, the recorded state and the desired state. */
    private void reconcile(TopicPartition tp, List<PartitionEffect> out) {
        Optional<MirrorTopicRecord> topic = image.topic(tp.topic());
        MirrorPartition current = partitions.get(tp);
        LeaderChange leadership = leaderships.get(tp);
        if (current == null) {
            if (topic.isEmpty() || leadership == null) {
                return;
            }
            current = MirrorPartition.unknown(topic.get().mirror(), tp, topic.get().desired(), generations.getOrDefault(tp, 0L));
            partitions.put(tp, current);
        }
        if (topic.isEmpty() || !topic.get().mirror().equals(current.mirror())) {
            handle(tp, new PartitionEvent.DesiredChanged(null), out);
            partitions.remove(tp);
            progress.remove(tp);
            out.add(lag(tp));
            return;
        }
        Optional<PartitionStateRecord> persisted = image.partitionState(current.mirror(), tp.topic(), tp.partition());
        PartitionState recorded = persisted.map(PartitionStateRecord::state).orElse(PartitionState.UNKNOWN);
        if (leadership != null && (!current.leader() || current.leaderEpoch() != leadership.leaderEpoch())) {
            progress.put(tp, MirrorProgress.restoredFrom(persisted));
            handle(tp, new PartitionEvent.BecameLeader(leadership.leaderEpoch(), recorded,
                persisted.map(r -> r.lastMirroredOffset() >= 0).orElse(false)), out);
        }
        if (partitions.get(tp).recorded() != recorded) {
            handle(tp, new PartitionEvent.RecordedStateChanged(recorded), out);
        }
        if (partitions.get(tp).desired() != topic.get().desired()) {
            handle(tp, new PartitionEvent.DesiredChanged(topic.get().desired()), out);
        }
    }

    /**
     * Runs an event through the machine, then turns its actions into effects; an action that completes at once raises its
     * event here, handled in order after the actions of the transition that asked for it.
     */
    private void handle(TopicPartition tp, PartitionEvent first, List<PartitionEffect> out) {
        Deque<PartitionEvent> pending = new ArrayDeque<>();
        pending.add(first);
        while (!pending.isEmpty()) {
            PartitionEvent event = pending.poll();
            MirrorPartition before = partitions.get(tp);
            if (before == null) {
                break;
            }
            Transition t = machine.handle(before, event, time.milliseconds());
            MirrorPartition next = t.next();
            partitions.put(tp, next);
            if (next.generation() > generations.getOrDefault(tp, -1L)) {
                generations.put(tp, next.generation());
                out.add(new PartitionEffect.AdvanceFence(tp, next.generation()));
            }
            if (before.state() != next.state()) {
                log.info("Mirror '{}' partition {}: {} -> {} on {}{}", before.mirror(), tp, before.state(), next.state(),
                    event.getClass().getSimpleName(), next.lastError() == null ? "" : " (last error: " + next.lastError() + ")");
            }
            for (PartitionAction action : t.actions()) {
                effectsOf(tp, next, action, out).ifPresent(pending::add);
            }
        }
        out.add(lag(tp));
    }

    /** The lag gauge shows a partition while this broker leads it and it is not stopped. */
    private PartitionEffect lag(TopicPartition tp) {
        MirrorPartition p = partitions.get(tp);
        MirrorProgress pr = progress.get(tp);
        return p == null || pr == null || !p.leader() || p.state() == PartitionState.STOPPED
            ? new PartitionEffect.UntrackLag(tp)
            : new PartitionEffect.TrackLag(p.mirror(), tp, pr.oldestUnmirroredTimestamp);
    }

    /** The effects of one action of the machine; the event it completes with at once, if any. */
    private Optional<PartitionEvent> effectsOf(TopicPartition tp, MirrorPartition p, PartitionAction action, List<PartitionEffect> out) {
        if (action instanceof PartitionAction.PersistState) {
            stateRecord(tp, p).ifPresent(out::add);
        } else if (action instanceof PartitionAction.Prepare) {
            prepare(tp, p, out);
        } else if (action instanceof PartitionAction.StartFetching) {
            return startFetching(tp, p, out);
        } else if (action instanceof PartitionAction.SkipLostRecords skip) {
            return skipLostRecords(tp, p, skip, out);
        } else if (action instanceof PartitionAction.StopFetching) {
            out.add(new PartitionEffect.RemoveFromFetcher(p.mirror(), tp));
            return Optional.of(new PartitionEvent.FetcherStopped());
        } else if (action instanceof PartitionAction.RunStop) {
            String sourceClusterId = image.mirror(p.mirror()).map(MirrorRecord::sourceClusterId).orElse("");
            long chosenCut = image.topic(tp.topic()).map(t -> t.stopCutOf(tp.partition())).orElse(-1L);
            out.add(new PartitionEffect.RunStop(p, Optional.ofNullable(progress.computeIfAbsent(tp, k -> new MirrorProgress()).stopCut),
                chosenCut, stopGroupOffsets(tp), sourceClusterId));
        } else if (action instanceof PartitionAction.StopUnmirrored) {
            log.info("Mirror '{}' partition {}: never mirrored into, so it stops without truncation or barrier", p.mirror(), tp);
            out.add(new PartitionEffect.AwaitLogChanges(tp));
            return Optional.of(new PartitionEvent.StopSucceeded(p.generation()));
        } else if (action instanceof PartitionAction.RepairDivergence repair) {
            repair(tp, p, repair, out);
        } else if (action instanceof PartitionAction.ScheduleRetry retry) {
            out.add(new PartitionEffect.ScheduleRetry(tp, retry.atMs()));
        }
        return Optional.empty();
    }

    /**
     * PREPARING: mirroring again, so the next stop decides its own cut. A mirror or topic that is going issues nothing: the
     * image that removes it takes the partition out.
     */
    private void prepare(TopicPartition tp, MirrorPartition p, List<PartitionEffect> out) {
        Optional<MirrorConfig> config = mirrorConfig(p.mirror());
        Optional<Uuid> sourceTopicId = sourceTopicId(tp);
        if (config.isEmpty() || sourceTopicId.isEmpty()) {
            return;
        }
        progress.computeIfAbsent(tp, k -> new MirrorProgress()).stopCut = null;
        out.add(new PartitionEffect.Prepare(p, config.get(), sourceTopicId.get(),
            image.partitionState(p.mirror(), tp.topic(), tp.partition())));
    }

    private void repair(TopicPartition tp, MirrorPartition p, PartitionAction.RepairDivergence repair, List<PartitionEffect> out) {
        Optional<MirrorConfig> config = mirrorConfig(p.mirror());
        Optional<Uuid> sourceTopicId = sourceTopicId(tp);
        if (config.isEmpty() || sourceTopicId.isEmpty()) {
            return; // the mirror or topic is going: the image that removes it takes the partition out
        }
        log.warn("Mirror '{}' partition {}: the source diverged from the mirrored data (its epoch {} ends at offset {}); "
            + "truncating the destination there once the batches confirm it", p.mirror(), tp, repair.sourceEpoch(),
            repair.sourceEpochEndOffset());
        out.add(new PartitionEffect.RepairDivergence(p, config.get(), sourceTopicId.get(), repair.sourceEpoch(),
            repair.sourceEpochEndOffset()));
    }

    /** The id of the source topic the partition mirrors, as recorded when it started. */
    private Optional<Uuid> sourceTopicId(TopicPartition tp) {
        return image.topic(tp.topic()).map(t -> Uuid.fromString(t.sourceTopicId()));
    }

    /**
     * Hands the partition to a fetcher at the destination log end, with its leader epoch and last fetched epoch. Nothing
     * once the leadership moved on (the coming leadership event restarts the machine).
     */
    private Optional<PartitionEvent> startFetching(TopicPartition tp, MirrorPartition p, List<PartitionEffect> out) {
        Optional<MirrorConfig> config = mirrorConfig(p.mirror());
        Optional<MirrorTopicRecord> topic = image.topic(tp.topic());
        if (config.isEmpty() || topic.isEmpty()) {
            return Optional.of(new PartitionEvent.FetchFailed("mirror '" + p.mirror() + "' or its topic is no longer defined"));
        }
        Optional<LeaderLogState> logState = logs.leaderLogState(tp).filter(s -> s.leaderEpoch() == p.leaderEpoch());
        if (logState.isEmpty()) {
            return Optional.empty();
        }
        MirrorProgress pr = progress.computeIfAbsent(tp, k -> new MirrorProgress());
        pr.stopCut = null; // mirroring again: the next stop decides its own cut
        long fetchOffset = logState.get().logEndOffset();
        log.info("Mirror '{}' partition {}: fetching from source offset {} at destination leader epoch {}", p.mirror(), tp,
            fetchOffset, p.leaderEpoch());
        out.add(new PartitionEffect.AddToFetcher(config.get(), tp, Uuid.fromString(topic.get().sourceTopicId()), fetchOffset,
            p.leaderEpoch(), pr.lastMirroredEpoch, logStart(logState.get(), pr, topic.get())));
        return Optional.of(new PartitionEvent.FetchingStarted());
    }

    /** Hands the partition back to its fetcher past the records the source deleted before they were mirrored. */
    private Optional<PartitionEvent> skipLostRecords(TopicPartition tp, MirrorPartition p, PartitionAction.SkipLostRecords skip,
                                                     List<PartitionEffect> out) {
        Optional<MirrorConfig> config = mirrorConfig(p.mirror());
        Optional<MirrorTopicRecord> topic = image.topic(tp.topic());
        if (config.isEmpty() || topic.isEmpty()) {
            return Optional.of(new PartitionEvent.FetchFailed("mirror '" + p.mirror() + "' or its topic is no longer defined"));
        }
        log.warn("Mirror '{}' partition {}: skipping source offsets [{}, {}), which the source deleted before they were mirrored "
            + "({}=continue)", p.mirror(), tp, skip.fromOffset(), skip.toOffset(), MirrorConfig.SOURCE_DATA_LOSS_POLICY);
        Optional<LeaderLogState> logState = logs.leaderLogState(tp).filter(s -> s.leaderEpoch() == p.leaderEpoch());
        if (logState.isEmpty()) {
            return Optional.empty(); // leadership moved on; the coming leadership event restarts the machine
        }
        MirrorProgress pr = progress.computeIfAbsent(tp, k -> new MirrorProgress());
        out.add(new PartitionEffect.AddPastLostRecords(config.get(), tp, Uuid.fromString(topic.get().sourceTopicId()), skip.fromOffset(),
            skip.toOffset(), p.leaderEpoch(), logStart(logState.get(), pr, topic.get())));
        return Optional.empty();
    }

    private static DestinationLogStart logStart(LeaderLogState logState, MirrorProgress pr, MirrorTopicRecord topic) {
        return new DestinationLogStart(logState.logStartOffset(), pr.heldLogStarts, topic.logStartDecision());
    }

    /** The partition's state record as this leader knows it; none once its topic left the mirror (nothing to record). */
    private Optional<PartitionEffect.WriteState> stateRecord(TopicPartition tp, MirrorPartition p) {
        MirrorTopicRecord topic = image.topic(tp.topic()).orElse(null);
        if (topic == null) {
            return Optional.empty(); // the image that removed it takes the partition out
        }
        MirrorProgress pr = progress.computeIfAbsent(tp, k -> new MirrorProgress());
        long destEnd = logs.leaderLogState(tp).map(LeaderLogState::logEndOffset).orElse(-1L);
        PartitionStateRecord record = new PartitionStateRecord(p.mirror(), tp.topic(), tp.partition(), p.state(), p.leaderEpoch(),
            nodeId, topic.sourceTopicId(), pr.lastMirroredOffset, pr.lastMirroredEpoch, pr.sourceEpochs, pr.sourceEndOffset,
            destEnd, p.lastError(), pr.barrierOffset, pr.truncatedFromOffset, pr.truncatedToOffset, time.milliseconds(),
            pr.oldestUnmirroredTimestamp, pr.stopCut, pr.heldLogStarts, failureRetries(p));
        dirty.remove(tp);
        return Optional.of(new PartitionEffect.WriteState(record, image.stateLogKeysSupersededBy(record)));
    }

    /** How a FAILED partition tries again, as describe shows it; null in any other state. */
    private static FailureRetries failureRetries(MirrorPartition p) {
        return p.state() != PartitionState.FAILED ? null : new FailureRetries(p.failures(),
            p.retryAtMs() == MirrorPartition.NO_RETRY ? FailureRetries.NONE : p.retryAtMs(), p.recoverable());
    }

    /** True while {@code generation} is the partition's current one: a procedure's outcome is still wanted. */
    private boolean current(TopicPartition tp, long generation) {
        MirrorPartition p = partitions.get(tp);
        return p != null && p.generation() == generation;
    }
}
