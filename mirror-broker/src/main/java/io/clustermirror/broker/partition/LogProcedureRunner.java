package io.clustermirror.broker.partition;

import io.clustermirror.broker.bridge.LeaderLogState;
import io.clustermirror.broker.bridge.LeaderLogs;
import io.clustermirror.broker.bridge.NotLeaderException;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.PartitionStateRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.metrics.Sensor;

import java.util.Optional;
import java.util.OptionalLong;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Runs the procedures on a leader's log that the shard asks for ({@link PartitionEffect.Prepare},
 * {@link PartitionEffect.RepairDivergence}, {@link PartitionEffect.RunStop}, {@link PartitionEffect.CompleteStopOnceRecorded})
 * on their threads, and hands what each found or did back to the shard as an input. They share one skeleton
 * ({@link #runProcedure}): a result goes to the shard; a lost leadership or a superseded generation reports nothing; any
 * other failure becomes the procedure's failure event. It decides nothing about the partition: where a procedure's
 * course depends on what it read (a loop, a plan, a cut that must be recorded first), the shard or a pure plan decides.
 *
 * <p>Each procedure changes the log only through the {@link LogFence} permit of the generation it was issued in, taken on
 * the event thread when the effect is performed.
 */
final class LogProcedureRunner {
    private final LeaderLogs broker;
    private final String clusterId;
    private final LeaderLogProcedures procedures;
    private final SourceCluster source;
    /** The source images the preparations share ({@link SourceCluster#image} through it only). */
    private final SharedSourceImages sourceImages;
    private final PartitionRuntime.StateRecords stateRecords;
    private final PartitionRuntime.CommittedOffsets committedOffsets;
    private final ExecutorService alignments;
    private final ExecutorService stops;
    private final FetcherRegistry.ShardInputs inputs;
    private final Function<TopicPartition, LogFence> fences;
    /** Counts the cuts a stop refused (see {@link PartitionRuntime}). */
    private final Sensor refusedCuts;

    /**
     * @param clusterId  the id of this (the destination) cluster
     * @param alignments the thread of alignments and repairs (they read the source and may take tens of seconds)
     * @param stops      the thread of stops, so that a stop never waits behind an alignment
     * @param fences     each partition's log fence (called on the event thread only)
     */
    LogProcedureRunner(LeaderLogs broker, String clusterId, LeaderLogProcedures procedures, SourceCluster source,
                       PartitionRuntime.StateRecords stateRecords, PartitionRuntime.CommittedOffsets committedOffsets,
                       ExecutorService alignments, ExecutorService stops, FetcherRegistry.ShardInputs inputs,
                       Function<TopicPartition, LogFence> fences, Sensor refusedCuts) {
        this.broker = broker;
        this.clusterId = clusterId;
        this.procedures = procedures;
        this.source = source;
        this.sourceImages = new SharedSourceImages(source::image);
        this.stateRecords = stateRecords;
        this.committedOffsets = committedOffsets;
        this.alignments = alignments;
        this.stops = stops;
        this.inputs = inputs;
        this.fences = fences;
        this.refusedCuts = refusedCuts;
    }

    /** Starts the procedure an effect asks for (on the event thread). */
    void perform(PartitionEffect.ProcedureEffect effect) {
        if (effect instanceof PartitionEffect.Prepare prepare) {
            prepare(prepare);
        } else if (effect instanceof PartitionEffect.RepairDivergence repair) {
            repair(repair);
        } else if (effect instanceof PartitionEffect.RunStop stop) {
            runStop(stop);
        } else if (effect instanceof PartitionEffect.CompleteStopOnceRecorded complete) {
            completeStopOnceRecorded(complete);
        } else {
            throw new IllegalArgumentException("not a procedure: " + effect);
        }
    }

    /** The mirrors of a new image: the shared source images of the others are dropped (on the event thread). */
    void retainMirrors(java.util.Set<String> mirrors) {
        sourceImages.retain(mirrors);
    }

    /** One procedure on a leader's log, on a procedure thread: what it found or did, as the shard's input. */
    private interface Procedure {
        FetcherRegistry.ShardInput run() throws Exception;
    }

    /**
     * Runs a procedure on {@code thread} and hands its result to the shard, or, if it failed, what {@code failed} makes of
     * the failure. A procedure that lost the leadership or was superseded reports nothing: the new leader, or whatever
     * superseded it, goes on from the log as it is. Never interrupted (see {@link #close}).
     */
    private void runProcedure(ExecutorService thread, Procedure procedure, Function<Exception, FetcherRegistry.ShardInput> failed) {
        thread.execute(() -> {
            FetcherRegistry.ShardInput result;
            try {
                result = procedure.run();
            } catch (NotLeaderException | LogFence.SupersededException e) {
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                result = failed.apply(e);
            }
            inputs.submit(result);
        });
    }

    /**
     * PREPARING: a log this mirror was already mirroring into continues from its end; any other log is first cut where
     * it provably stops matching the source ({@link LogAlignment}, {@link LogComparison}), which needs the source's own
     * mirror state and log. A source that copies the topic from this cluster is reported to the shard (a loop) before
     * anything is cut. An unreachable source fails the preparation: it never cuts.
     */
    private void prepare(PartitionEffect.Prepare prepare) {
        MirrorPartition p = prepare.partition();
        TopicPartition tp = p.partition();
        long generation = p.generation();
        LogFence.Permit permit = fences.apply(tp).permit(generation);
        long imageTicket = sourceImages.ticket();
        runProcedure(alignments, () -> {
            permit.check(); // a preparation a stop superseded while queued does not even read the source
            MirrorImage sourceImage = sourceImages.image(prepare.config(), imageTicket);
            Optional<String> loop = sourceImage.mirrorCopyingFrom(clusterId, tp.topic());
            if (loop.isPresent()) {
                return s -> s.refusedAsLoop(tp, generation, loop.get());
            }
            Optional<PartitionStateRecord> fromUs = sourceImage.partitionStateMirroredFrom(clusterId, tp.topic(), tp.partition());
            LeaderLogState logState = broker.leaderLogState(tp).orElseThrow(() -> new NotLeaderException("no longer the leader of " + tp));
            OptionalLong ourEnd = fromUs.filter(r -> r.lastMirroredEpoch() >= 0)
                .map(r -> broker.endOffsetForEpoch(tp, r.lastMirroredEpoch())).orElse(OptionalLong.empty());
            LogAlignment.Plan plan = LogAlignment.plan(logState.logStartOffset(), logState.logEndOffset(), prepare.own(), fromUs, ourEnd);
            LeaderLogProcedures.Aligned aligned = plan instanceof LogAlignment.Keep ? null
                : alignWithSource(prepare.config(), tp, prepare.sourceTopicId(), p, permit, plan);
            return s -> s.prepared(tp, generation, aligned, new PartitionEvent.PrepareSucceeded(generation));
        }, e -> s -> s.prepared(tp, generation, null,
            new PartitionEvent.PrepareFailed(generation, failure("preparing failed: ", e), sourceUnreachable(e))));
    }

    /** The source's log no longer matches what was mirrored: cuts the destination where the source's epoch ends, once confirmed. */
    private void repair(PartitionEffect.RepairDivergence repair) {
        MirrorPartition p = repair.partition();
        TopicPartition tp = p.partition();
        long generation = p.generation();
        LogFence.Permit permit = fences.apply(tp).permit(generation);
        LogAlignment.Plan plan = new LogAlignment.Propose(new Cut(repair.sourceEpochEndOffset(), Cut.Evidence.SOURCE_EPOCH_LINEAGE,
            "the source's leader epoch " + repair.sourceEpoch() + " ends at offset " + repair.sourceEpochEndOffset()));
        runProcedure(alignments, () -> {
            LeaderLogProcedures.Aligned aligned = alignWithSource(repair.config(), tp, repair.sourceTopicId(), p, permit, plan);
            return s -> s.repaired(tp, generation, repair.sourceEpoch(), aligned, new PartitionEvent.RepairSucceeded(generation));
        }, e -> s -> s.repaired(tp, generation, repair.sourceEpoch(), null,
            new PartitionEvent.RepairFailed(generation, failure("cannot align with the diverged source: ", e))));
    }

    /** On the alignment thread: aligns the leader's log with the source's, reading the source's batches. */
    private LeaderLogProcedures.Aligned alignWithSource(MirrorConfig config, TopicPartition tp, Uuid sourceTopicId, MirrorPartition p,
                                                        LogFence.Permit permit, LogAlignment.Plan plan) throws Exception {
        try (SourceCluster.SourceLog sourceLog = source.log(config, "cluster-mirror-" + p.mirror() + "-" + broker.nodeId()
                + "-compare", tp, sourceTopicId)) {
            return procedures.alignWithSource(p.mirror(), tp, p.leaderEpoch(), permit, plan, sourceLog, truncationRecorder(p));
        }
    }

    /**
     * Begins a stop on the stop thread: it takes the cut an earlier attempt recorded, or decides one. A cut that removes
     * records goes to the shard to be recorded first ({@link PartitionShard#stopCutDecided}); any other completes at once.
     */
    private void runStop(PartitionEffect.RunStop stop) {
        MirrorPartition p = stop.partition();
        TopicPartition tp = p.partition();
        LogFence.Permit permit = fences.apply(tp).permit(p.generation());
        runProcedure(stops, () -> {
            LeaderLogProcedures.StopStart start = procedures.beginStop(p.mirror(), tp, p.leaderEpoch(), permit, stop.decided(),
                stop.chosenCut());
            if (start instanceof LeaderLogProcedures.AlreadyStopped stopped) {
                return stopped(p, stopped.outcome(), stop.groupOffsets());
            }
            LeaderLogProcedures.CutAt at = (LeaderLogProcedures.CutAt) start;
            if (at.mustRecord()) {
                return s -> s.stopCutDecided(tp, p.generation(), at.cut(), stop.sourceClusterId());
            }
            return stopped(p, procedures.completeStop(p.mirror(), tp, p.leaderEpoch(), permit, stop.sourceClusterId(), at.cut(),
                truncationRecorder(p)), stop.groupOffsets());
        }, e -> stopFailed(p, e));
    }

    /** Records the stop's cut, and completes the stop on the stop thread once the record has landed; nothing is cut before. */
    private void completeStopOnceRecorded(PartitionEffect.CompleteStopOnceRecorded complete) {
        MirrorPartition p = complete.partition();
        TopicPartition tp = p.partition();
        LogFence.Permit permit = fences.apply(tp).permit(p.generation());
        stateRecords.write(complete.record().record(), complete.record().superseded())
            .orTimeout(LeaderLogProcedures.WAIT_MS, TimeUnit.MILLISECONDS)
            .whenComplete((landed, error) -> runProcedure(stops, () -> {
                if (error != null) {
                    throw new LeaderLogProcedures.StepTimeoutException("could not record the cut at offset " + complete.cut().offset()
                        + " of " + tp + " in " + InternalTopics.STATE + " within " + LeaderLogProcedures.WAIT_MS + " ms, so nothing "
                        + "was truncated: " + error);
                }
                return stopped(p, procedures.completeStop(p.mirror(), tp, p.leaderEpoch(), permit, complete.sourceClusterId(),
                    complete.cut(), truncationRecorder(p)), complete.groupOffsets());
            }, e -> stopFailed(p, e)));
    }

    /**
     * The stop's success, once the groups a consistent stop names have their offsets: consumers may begin here as soon as
     * STOPPED is recorded.
     */
    private FetcherRegistry.ShardInput stopped(MirrorPartition p, LeaderLogProcedures.Outcome outcome, Map<String, Long> groupOffsets) {
        if (!groupOffsets.isEmpty()) {
            committedOffsets.set(p.mirror(), p.partition(), groupOffsets);
        }
        return s -> s.stopped(p.partition(), p.generation(), outcome, new PartitionEvent.StopSucceeded(p.generation()));
    }

    private FetcherRegistry.ShardInput stopFailed(MirrorPartition p, Exception e) {
        if (e instanceof LeaderLogProcedures.CutRefusedException) {
            refusedCuts.record();
        }
        return s -> s.stopped(p.partition(), p.generation(), null,
            new PartitionEvent.StopFailed(p.generation(), "stop failed: " + e.getMessage()));
    }

    /**
     * Hands each truncation to the shard at once (describe shows it; a later failure must not lose it), and moves committed
     * group offsets past it back before the procedure goes on: once the stop reports STOPPED, consumers may move here.
     */
    private LeaderLogProcedures.TruncationListener truncationRecorder(MirrorPartition p) {
        return (from, to) -> {
            inputs.submit(s -> s.truncated(p.partition(), from, to));
            committedOffsets.rewind(p.mirror(), p.partition(), from);
        };
    }

    /** The source did not answer in time or the connection failed: one of Kafka's retriable errors caused {@code e}. */
    static boolean sourceUnreachable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof RetriableException) {
                return true;
            }
        }
        return false;
    }

    /** A procedure's failure as the last error: a named mirror error as it is, any other after what failed. */
    private static String failure(String what, Exception e) {
        return e instanceof ClusterMirrorException ? e.getMessage() : what + e.getMessage();
    }
}
