package io.clustermirror.broker.partition;

import io.clustermirror.broker.LocalClients;
import io.clustermirror.broker.bridge.BrokerHandle;
import io.clustermirror.broker.bridge.LeaderChange;
import io.clustermirror.broker.bridge.LeaderLogState;
import io.clustermirror.broker.fetch.ClusterLogReader;
import io.clustermirror.broker.fetch.FetchListener;
import io.clustermirror.broker.fetch.LocalLeaderAppender;
import io.clustermirror.broker.fetch.MirrorFetcherManager;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.image.MirrorImageReader;
import io.clustermirror.common.records.EpochStart;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The executor of the per-partition state machines on one destination broker: the only place that
 * turns {@link PartitionAction}s into I/O. Every input (leadership, image, fetch progress and failures,
 * timers) is an event on one thread, so the machines need no locks and see events in order.
 *
 * <p>Invariants: a partition is handed to a fetcher only while this broker leads it, with the leader epoch
 * it leads at (a stale append is refused by Kafka); the fetch starts at the destination log end, so a new
 * leader continues where the log is, with no gap and no duplicate.
 */
public final class PartitionMirrorManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PartitionMirrorManager.class);
    private static final long PERSIST_INTERVAL_MS = 5_000;
    private static final long CATCH_UP_WARN_MS = 10_000;
    static final Set<PartitionState> PAST_PREPARING =
        java.util.EnumSet.of(PartitionState.MIRRORING, PartitionState.PAUSING, PartitionState.PAUSED, PartitionState.STOPPING);

    private final BrokerHandle broker;
    private final ScheduledExecutorService executor;
    private final PartitionStateMachine machine;
    private final StateWriter stateWriter;
    private final LeaderLogProcedures procedures;
    private final ProducerStateHygiene hygiene;
    private final java.util.function.Supplier<java.util.concurrent.CompletableFuture<Void>> imageCatchUp;
    /** Runs alignments and stops, whose waits must not hold up the event thread. */
    private final java.util.concurrent.ExecutorService procedureExecutor;

    // Owned by the executor thread.
    private final Map<TopicPartition, LeaderChange> localLeaders = new HashMap<>();
    /** Leaderships waiting for the image to catch up before they act. */
    private final Map<TopicPartition, LeaderChange> pendingLeaders = new HashMap<>();
    private final Map<TopicPartition, MirrorPartition> partitions = new HashMap<>();
    private final Map<TopicPartition, Progress> progress = new HashMap<>();
    private final Map<String, MirrorFetcherManager> fetchers = new HashMap<>();
    private final Set<TopicPartition> dirty = new HashSet<>();
    /** Partitions with an alignment or a stop running, and the leader epoch it runs at. */
    private final Map<TopicPartition, Integer> running = new HashMap<>();
    private MirrorImage image = MirrorImage.EMPTY;

    /** What the data plane reported for one partition since this broker became its leader. */
    private static final class Progress {
        long lastMirroredOffset = -1;
        int lastMirroredEpoch = -1;
        List<EpochStart> sourceEpochs = new ArrayList<>();
        long sourceEndOffset = -1;
        long barrierOffset = -1;
        long truncatedFromOffset = -1;
        long truncatedToOffset = -1;
        /** This mirror has fetched into the partition (now or under an earlier leader): its log may hold mirrored data. */
        boolean everMirrored;
    }

    /**
     * @param imageCatchUp a read barrier on the mirror image: completes once the image holds everything committed to
     *                     the internal topics when it was called
     */
    public PartitionMirrorManager(BrokerHandle broker, LocalClients clients, ProducerStateHygiene hygiene,
                                  java.util.function.Supplier<java.util.concurrent.CompletableFuture<Void>> imageCatchUp,
                                  long retryBackoffMs, long retryBackoffMaxMs) {
        this.broker = broker;
        this.hygiene = hygiene;
        this.imageCatchUp = imageCatchUp;
        this.procedures = new LeaderLogProcedures(broker);
        this.procedureExecutor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "cluster-mirror-procedures-" + broker.nodeId());
            t.setDaemon(true);
            return t;
        });
        this.machine = new PartitionStateMachine(retryBackoffMs, retryBackoffMaxMs);
        this.stateWriter = new StateWriter(clients, broker.nodeId());
        java.util.concurrent.ScheduledThreadPoolExecutor events = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "cluster-mirror-partitions-" + broker.nodeId());
            t.setDaemon(true);
            return t;
        });
        // Pending retries are dropped at close: they would act on a closed state writer and fetchers.
        events.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.executor = events;
        executor.scheduleWithFixedDelay(() -> guarded(this::persistProgress), PERSIST_INTERVAL_MS, PERSIST_INTERVAL_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * Leadership changes of local partitions (from the metadata loader thread: only enqueues). A lost leadership acts at
     * once; a new one only after a read barrier on the image ({@code imageCatchUp}), so that the new leader decides on
     * the partition's recorded state as its previous leader left it, never on an image that has not loaded it yet.
     */
    public void onLeadershipChanges(List<LeaderChange> changes) {
        List<LeaderChange> gained = changes.stream().filter(c -> c.leader() && !c.deleted()).toList();
        executor.execute(() -> guarded(() -> {
            for (LeaderChange change : changes) {
                if (change.deleted() || !change.leader()) {
                    localLeaders.remove(change.partition());
                    pendingLeaders.remove(change.partition());
                    if (partitions.containsKey(change.partition())) {
                        handle(change.partition(), new PartitionEvent.BecameFollower());
                    }
                } else {
                    pendingLeaders.put(change.partition(), change);
                }
            }
        }));
        if (gained.isEmpty()) {
            return;
        }
        long askedMs = System.currentTimeMillis();
        java.util.concurrent.CompletableFuture<Void> caughtUp = imageCatchUp.get();
        executor.schedule(() -> {
            if (!caughtUp.isDone()) {
                log.warn("New leaderships of {} partition(s) on broker {} wait for the mirror state to load (more than {} ms): their "
                    + "mirror topics stay read-only and are not mirrored until __mirror_metadata and __mirror_state can be read",
                    gained.size(), broker.nodeId(), CATCH_UP_WARN_MS);
            }
        }, CATCH_UP_WARN_MS, TimeUnit.MILLISECONDS);
        caughtUp.whenComplete((ignored, error) -> executor.execute(() -> guarded(() -> {
            if (error != null) {
                return; // closing
            }
            for (LeaderChange change : gained) {
                // Only the latest leadership still pending: a later change (lost, or a newer epoch) replaced it.
                if (pendingLeaders.remove(change.partition(), change)) {
                    localLeaders.put(change.partition(), change);
                    reconcile(change.partition());
                }
            }
            long waitedMs = System.currentTimeMillis() - askedMs;
            if (waitedMs > CATCH_UP_WARN_MS) {
                log.warn("New leaderships of {} partition(s) waited {} ms for the mirror state to load", gained.size(), waitedMs);
            }
        })));
    }

    /** A new mirror image (from the tailer thread: only enqueues). */
    public void onImage(MirrorImage newImage) {
        executor.execute(() -> guarded(() -> {
            image = newImage;
            Set<TopicPartition> all = new HashSet<>(partitions.keySet());
            all.addAll(localLeaders.keySet());
            all.forEach(this::reconcile);
            closeFetchersOfDeletedMirrors();
        }));
    }

    /** Brings one partition's machine in line with leadership and desired state. */
    private void reconcile(TopicPartition tp) {
        Optional<MirrorTopicRecord> topic = image.topic(tp.topic());
        MirrorPartition current = partitions.get(tp);
        LeaderChange leadership = localLeaders.get(tp);
        if (current == null) {
            if (topic.isEmpty() || leadership == null) {
                return;
            }
            current = MirrorPartition.unknown(topic.get().mirror(), tp, topic.get().desired());
            partitions.put(tp, current);
        }
        if (topic.isEmpty() || !topic.get().mirror().equals(current.mirror())) {
            handle(tp, new PartitionEvent.DesiredChanged(null));
            partitions.remove(tp);
            progress.remove(tp);
            return;
        }
        if (leadership != null && (!current.leader() || current.leaderEpoch() != leadership.leaderEpoch())) {
            Optional<PartitionStateRecord> persisted = image.partitionState(current.mirror(), tp.topic(), tp.partition());
            progress.put(tp, restoredProgress(persisted));
            handle(tp, new PartitionEvent.BecameLeader(leadership.leaderEpoch(),
                persisted.map(PartitionStateRecord::state).orElse(PartitionState.UNKNOWN)));
        }
        if (partitions.get(tp).desired() != topic.get().desired()) {
            handle(tp, new PartitionEvent.DesiredChanged(topic.get().desired()));
        }
    }

    private static Progress restoredProgress(Optional<PartitionStateRecord> persisted) {
        Progress p = new Progress();
        persisted.ifPresent(r -> {
            p.lastMirroredOffset = r.lastMirroredOffset();
            p.lastMirroredEpoch = r.lastMirroredEpoch();
            p.sourceEpochs = new ArrayList<>(r.sourceEpochs());
            p.sourceEndOffset = r.sourceLogEndOffset();
            p.barrierOffset = r.barrierOffset();
            p.truncatedFromOffset = r.truncatedFromOffset();
            p.truncatedToOffset = r.truncatedToOffset();
            p.everMirrored = r.lastMirroredOffset() >= 0 || EnumSet.of(PartitionState.MIRRORING, PartitionState.PAUSING,
                PartitionState.PAUSED, PartitionState.STOPPING, PartitionState.STOPPED).contains(r.state());
        });
        return p;
    }

    /** Runs an event through the machine, then its actions; actions may raise further events, handled in order. */
    private void handle(TopicPartition tp, PartitionEvent first) {
        Deque<PartitionEvent> pending = new ArrayDeque<>();
        pending.add(first);
        while (!pending.isEmpty()) {
            PartitionEvent event = pending.poll();
            MirrorPartition before = partitions.get(tp);
            if (before == null) {
                return;
            }
            Transition t = machine.handle(before, event, System.currentTimeMillis());
            partitions.put(tp, t.next());
            if (before.state() != t.next().state()) {
                log.info("Mirror '{}' partition {}: {} -> {} on {}{}", before.mirror(), tp, before.state(), t.next().state(),
                    event.getClass().getSimpleName(), t.next().lastError() == null ? "" : " (last error: " + t.next().lastError() + ")");
            }
            for (PartitionAction action : t.actions()) {
                execute(tp, t.next(), action).ifPresent(pending::add);
            }
        }
    }

    /** Performs one action; returns the event it completes with, if any. */
    private Optional<PartitionEvent> execute(TopicPartition tp, MirrorPartition p, PartitionAction action) {
        if (action instanceof PartitionAction.PersistState) {
            persist(tp, p);
        } else if (action instanceof PartitionAction.Prepare) {
            return prepare(tp, p);
        } else if (action instanceof PartitionAction.StartFetching) {
            return startFetching(tp, p);
        } else if (action instanceof PartitionAction.StopFetching) {
            MirrorFetcherManager f = fetchers.get(p.mirror());
            if (f != null) {
                f.removePartition(tp);
            }
            return Optional.of(new PartitionEvent.FetcherStopped());
        } else if (action instanceof PartitionAction.RunStop) {
            return startStop(tp, p);
        } else if (action instanceof PartitionAction.ScheduleRetry retry) {
            long delay = Math.max(0, retry.atMs() - System.currentTimeMillis());
            executor.schedule(() -> guarded(() -> {
                if (partitions.containsKey(tp)) {
                    handle(tp, new PartitionEvent.RetryDue());
                }
            }), delay, TimeUnit.MILLISECONDS);
        }
        return Optional.empty();
    }

    /**
     * Starts the stop on the procedure thread (once per leader epoch); its outcome comes back as an event. A partition
     * this mirror never fetched into (e.g. refused as a loop while preparing) holds only its own data: it stops at once,
     * with no truncation and no barrier, so stopping it loses nothing.
     */
    private Optional<PartitionEvent> startStop(TopicPartition tp, MirrorPartition p) {
        if (!progress.computeIfAbsent(tp, k -> new Progress()).everMirrored) {
            log.info("Mirror '{}' partition {}: never mirrored into, so it stops without truncation or barrier", p.mirror(), tp);
            return Optional.of(new PartitionEvent.StopSucceeded());
        }
        if (Integer.valueOf(p.leaderEpoch()).equals(running.get(tp))) {
            return Optional.empty();
        }
        String sourceClusterId = image.mirror(p.mirror()).map(MirrorRecord::sourceClusterId).orElse("");
        running.put(tp, p.leaderEpoch());
        procedureExecutor.execute(() -> {
            PartitionEvent result;
            LeaderLogProcedures.Outcome outcome = null;
            try {
                outcome = procedures.stop(p.mirror(), tp, p.leaderEpoch(), sourceClusterId, truncationRecorder(tp));
                result = new PartitionEvent.StopSucceeded();
            } catch (io.clustermirror.broker.bridge.NotLeaderException e) {
                result = null; // the new leader stops it
            } catch (LeaderLogProcedures.StepTimeoutException | RuntimeException e) {
                result = new PartitionEvent.StopFailed("stop failed: " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            LeaderLogProcedures.Outcome done = outcome;
            PartitionEvent event = result;
            executor.execute(() -> guarded(() -> {
                running.remove(tp, p.leaderEpoch());
                if (event == null || !partitions.containsKey(tp)) {
                    return;
                }
                if (done != null) {
                    Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
                    pr.barrierOffset = done.barrierOffset();
                    if (done.truncatedFromOffset() >= 0) {
                        pr.truncatedFromOffset = done.truncatedFromOffset();
                        pr.truncatedToOffset = done.truncatedToOffset();
                    }
                    // Clean before STOPPED is recorded: the authorizer lets clients write once it reads STOPPED.
                    hygiene.markClean(tp, p.leaderEpoch());
                }
                handle(tp, event);
            }));
        });
        return Optional.empty();
    }

    /** Records a truncation at once (describe shows it; a later failure must not lose it). */
    private LeaderLogProcedures.TruncationListener truncationRecorder(TopicPartition tp) {
        return (from, to) -> executor.execute(() -> guarded(() -> {
            Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
            pr.truncatedFromOffset = from;
            pr.truncatedToOffset = to;
            MirrorPartition current = partitions.get(tp);
            if (current != null) {
                persist(tp, current);
            }
        }));
    }

    /**
     * PREPARING: a log this mirror was already mirroring into continues from its end; any other log is first cut where
     * it provably stops matching the source ({@link LogAlignment}, {@link LogComparison}), which needs the source's own
     * mirror state and log. Mirroring a topic back to a cluster that copies it from us is refused (a loop). An
     * unreachable source fails the preparation (retried): it never cuts.
     */
    private Optional<PartitionEvent> prepare(TopicPartition tp, MirrorPartition p) {
        Optional<PartitionStateRecord> own = image.partitionState(p.mirror(), tp.topic(), tp.partition());
        // Only a partition that got past PREPARING continues at once (a leader change). FAILED and PREPARING do not
        // prove it: a preparation refused as a loop must be refused again on every retry.
        if (own.map(o -> PAST_PREPARING.contains(o.state())).orElse(false)) {
            return Optional.of(new PartitionEvent.PrepareSucceeded());
        }
        Optional<MirrorRecord> mirror = image.mirror(p.mirror());
        if (mirror.isEmpty() || Integer.valueOf(p.leaderEpoch()).equals(running.get(tp))) {
            return Optional.empty();
        }
        running.put(tp, p.leaderEpoch());
        procedureExecutor.execute(() -> {
            PartitionEvent event;
            LeaderLogProcedures.Aligned aligned = null;
            try {
                MirrorConfig config = MirrorConfig.validate(mirror.get().name(), mirror.get().configs());
                MirrorImage sourceImage = MirrorImageReader.read(config.sourceClientProperties(), Duration.ofSeconds(15));
                Optional<String> loop = sourceImage.mirrorCopyingFrom(broker.clusterId(), tp.topic());
                if (loop.isPresent()) {
                    event = new PartitionEvent.PrepareFailed(MirrorError.MIRROR_LOOP.format("the source cluster copies " + tp.topic()
                        + " from this cluster (its mirror '" + loop.get() + "'); stop one direction"));
                } else {
                    Optional<PartitionStateRecord> fromUs = sourceImage.partitionStateMirroredFrom(broker.clusterId(), tp.topic(), tp.partition());
                    LeaderLogState log = broker.leaderLogState(tp).orElseThrow(() ->
                        new io.clustermirror.broker.bridge.NotLeaderException("no longer the leader of " + tp));
                    java.util.OptionalLong ourEnd = fromUs.filter(r -> r.lastMirroredEpoch() >= 0)
                        .map(r -> broker.endOffsetForEpoch(tp, r.lastMirroredEpoch())).orElse(java.util.OptionalLong.empty());
                    LogAlignment.Plan plan = LogAlignment.plan(log.logStartOffset(), log.logEndOffset(), own, fromUs, ourEnd);
                    if (!(plan instanceof LogAlignment.Keep)) {
                        aligned = alignWithSource(config, tp, p, plan);
                    }
                    event = new PartitionEvent.PrepareSucceeded();
                }
            } catch (io.clustermirror.broker.bridge.NotLeaderException e) {
                event = null; // the new leader prepares it
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                event = new PartitionEvent.PrepareFailed("preparing failed: " + e.getMessage());
            }
            PartitionEvent result = event;
            LeaderLogProcedures.Aligned done = aligned;
            executor.execute(() -> guarded(() -> {
                running.remove(tp, p.leaderEpoch());
                if (done != null) {
                    restoreLineage(tp, done);
                }
                if (result != null && partitions.containsKey(tp)) {
                    handle(tp, result);
                }
            }));
        });
        return Optional.empty();
    }

    /** Runs on the procedure thread: aligns the leader's log with the source's, reading the source's batches. */
    private LeaderLogProcedures.Aligned alignWithSource(MirrorConfig config, TopicPartition tp, MirrorPartition p, LogAlignment.Plan plan)
            throws Exception {
        try (ClusterLogReader source = new ClusterLogReader(config.sourceClientProperties(),
                "cluster-mirror-" + p.mirror() + "-" + broker.nodeId() + "-compare", Duration.ofSeconds(30))) {
            return procedures.alignWithSource(p.mirror(), tp, p.leaderEpoch(), plan,
                (from, to) -> source.batches(tp, from, to), truncationRecorder(tp));
        }
    }

    /**
     * A log found identical to the source's up to its end by batch comparison gets its lineage back from the source's
     * batch there (a lost or degraded state record must not leave the fetcher without its last fetched epoch).
     */
    private void restoreLineage(TopicPartition tp, LeaderLogProcedures.Aligned aligned) {
        Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
        if (aligned.lastIdenticalEnd() > 0 && aligned.lastIdenticalEnd() == aligned.logEnd()
                && pr.lastMirroredOffset < aligned.logEnd() - 1) {
            pr.lastMirroredOffset = aligned.logEnd() - 1;
            pr.lastMirroredEpoch = aligned.sourceEpoch();
            pr.everMirrored = true;
        }
    }

    private Optional<PartitionEvent> startFetching(TopicPartition tp, MirrorPartition p) {
        Optional<MirrorRecord> mirror = image.mirror(p.mirror());
        Optional<MirrorTopicRecord> topic = image.topic(tp.topic());
        Optional<LeaderLogState> logState = broker.leaderLogState(tp);
        if (mirror.isEmpty() || topic.isEmpty()) {
            return Optional.of(new PartitionEvent.FetchFailed("mirror '" + p.mirror() + "' or its topic is no longer defined"));
        }
        if (logState.isEmpty() || logState.get().leaderEpoch() != p.leaderEpoch()) {
            return Optional.empty(); // leadership moved on; the coming leadership event restarts the machine
        }
        MirrorFetcherManager f;
        try {
            f = fetchers.computeIfAbsent(p.mirror(), name -> new MirrorFetcherManager(
                MirrorConfig.validate(name, mirror.get().configs()), broker.nodeId(), new LocalLeaderAppender(broker), new Listener(), broker.metrics()));
        } catch (RuntimeException e) {
            return Optional.of(new PartitionEvent.FetchFailed("cannot start fetching: " + e.getMessage()));
        }
        Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
        pr.everMirrored = true;
        long fetchOffset = logState.get().logEndOffset();
        log.info("Mirror '{}' partition {}: fetching from source offset {} at destination leader epoch {}",
            p.mirror(), tp, fetchOffset, p.leaderEpoch());
        f.addPartition(tp, Uuid.fromString(topic.get().sourceTopicId()), fetchOffset, p.leaderEpoch(), pr.lastMirroredEpoch);
        return Optional.empty();
    }

    private void persist(TopicPartition tp, MirrorPartition p) {
        MirrorTopicRecord topic = image.topic(tp.topic()).orElse(null);
        if (topic == null || !p.leader()) {
            return;
        }
        Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
        long destEnd = broker.leaderLogState(tp).map(LeaderLogState::logEndOffset).orElse(-1L);
        PartitionStateRecord record = new PartitionStateRecord(p.mirror(), tp.topic(), tp.partition(), p.state(), p.leaderEpoch(),
            broker.nodeId(), topic.sourceTopicId(), pr.lastMirroredOffset, pr.lastMirroredEpoch, pr.sourceEpochs, pr.sourceEndOffset,
            destEnd, p.lastError(), pr.barrierOffset, pr.truncatedFromOffset, pr.truncatedToOffset, System.currentTimeMillis());
        stateWriter.write(record, image.stateLogKeysSupersededBy(record));
        dirty.remove(tp);
    }

    /** Periodic lag snapshot of mirroring partitions whose progress changed. */
    private void persistProgress() {
        for (TopicPartition tp : new ArrayList<>(dirty)) {
            MirrorPartition p = partitions.get(tp);
            if (p != null && p.state() == PartitionState.MIRRORING) {
                persist(tp, p);
            }
        }
        dirty.clear();
    }

    private void closeFetchersOfDeletedMirrors() {
        fetchers.entrySet().removeIf(e -> {
            if (image.mirror(e.getKey()).isPresent()) {
                return false;
            }
            e.getValue().close();
            return true;
        });
    }

    /**
     * Mirroring goes on after a divergence of the source. The fetcher's last fetched epoch is the source's diverging epoch
     * when the cut was confirmed there, the source's epoch of the last identical batch when the batch comparison decided,
     * and unknown when unproven batches remain at the log end.
     */
    private void resumeAfterDivergence(TopicPartition tp, int leaderEpoch, int sourceEpoch, LeaderLogProcedures.Aligned aligned,
                                       String failure) {
        running.remove(tp, leaderEpoch);
        MirrorPartition p = partitions.get(tp);
        if (p == null || !p.leader() || p.leaderEpoch() != leaderEpoch || p.state() != PartitionState.MIRRORING) {
            return;
        }
        if (failure != null) {
            handle(tp, new PartitionEvent.FetchFailed("cannot align with the diverged source: " + failure));
            return;
        }
        if (aligned == null) {
            return; // leadership moved: the new leader fetches, and the source reports the divergence to it
        }
        long end = aligned.logEnd();
        Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
        pr.sourceEpochs.removeIf(e -> e.startOffset() >= end);
        pr.lastMirroredEpoch = aligned.lastIdenticalEnd() < 0 ? sourceEpoch
            : aligned.lastIdenticalEnd() == end ? aligned.sourceEpoch() : -1;
        pr.lastMirroredOffset = Math.min(pr.lastMirroredOffset, end - 1);
        persist(tp, p);
        startFetching(tp, p).ifPresent(event -> handle(tp, event));
    }

    /** Fetcher callbacks arrive on fetcher threads and are handed to the executor. */
    private final class Listener implements FetchListener {
        @Override
        public void onProgress(TopicPartition tp, long lastMirroredOffset, int lastSourceEpoch, long firstSourceEpochStart, long sourceEndOffset) {
            executor.execute(() -> guarded(() -> {
                Progress pr = progress.get(tp);
                MirrorPartition p = partitions.get(tp);
                if (pr == null || p == null) {
                    return;
                }
                pr.lastMirroredOffset = lastMirroredOffset;
                pr.lastMirroredEpoch = lastSourceEpoch;
                pr.sourceEndOffset = sourceEndOffset;
                if (firstSourceEpochStart >= 0 && (pr.sourceEpochs.isEmpty()
                        || pr.sourceEpochs.get(pr.sourceEpochs.size() - 1).epoch() != lastSourceEpoch)) {
                    pr.sourceEpochs.add(new EpochStart(lastSourceEpoch, firstSourceEpochStart));
                }
                dirty.add(tp);
                if (p.failures() > 0 || p.lastError() != null) {
                    handle(tp, new PartitionEvent.MadeProgress());
                }
            }));
        }

        @Override
        public void onSourceEndOffset(TopicPartition tp, long sourceEndOffset) {
            executor.execute(() -> guarded(() -> {
                Progress pr = progress.get(tp);
                if (pr != null && pr.sourceEndOffset != sourceEndOffset) {
                    pr.sourceEndOffset = sourceEndOffset;
                    dirty.add(tp);
                }
            }));
        }

        /**
         * The source's log no longer matches what was mirrored (an unclean leader election on the source): cut
         * the destination where the source says the last mirrored epoch ends, on every in-sync replica, then go on
         * fetching from there. The machine stays MIRRORING; a failure of the cut fails the partition (retried).
         */
        @Override
        public void onDivergence(TopicPartition tp, int sourceEpoch, long sourceEpochEndOffset) {
            executor.execute(() -> guarded(() -> {
                MirrorPartition p = partitions.get(tp);
                if (p == null || p.state() != PartitionState.MIRRORING || running.containsKey(tp)) {
                    return;
                }
                log.warn("Mirror '{}' partition {}: the source diverged from the mirrored data (its epoch {} ends at offset {}); "
                    + "truncating the destination there once the batches confirm it", p.mirror(), tp, sourceEpoch, sourceEpochEndOffset);
                Optional<MirrorConfig> config = image.mirror(p.mirror()).map(m -> MirrorConfig.validate(m.name(), m.configs()));
                if (config.isEmpty()) {
                    return;
                }
                running.put(tp, p.leaderEpoch());
                LogAlignment.Plan plan = new LogAlignment.Propose(new Cut(sourceEpochEndOffset, Cut.Evidence.SOURCE_EPOCH_LINEAGE,
                    "the source's leader epoch " + sourceEpoch + " ends at offset " + sourceEpochEndOffset));
                procedureExecutor.execute(() -> {
                    String error = null;
                    LeaderLogProcedures.Aligned aligned = null;
                    try {
                        aligned = alignWithSource(config.get(), tp, p, plan);
                    } catch (io.clustermirror.broker.bridge.NotLeaderException e) {
                        // No failure: the new leader fetches, and the source reports the divergence to it.
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    } catch (Exception e) {
                        error = e.getMessage();
                    }
                    String failure = error;
                    LeaderLogProcedures.Aligned done = aligned;
                    executor.execute(() -> guarded(() -> resumeAfterDivergence(tp, p.leaderEpoch(), sourceEpoch, done, failure)));
                });
            }));
        }

        @Override
        public void onBarrier(TopicPartition tp, long barrierOffset) {
            executor.execute(() -> guarded(() -> {
                Progress pr = progress.get(tp);
                MirrorPartition p = partitions.get(tp);
                if (pr != null && p != null) {
                    // Recorded at once: the followers' producer-state hygiene learns the barrier from __mirror_state.
                    pr.barrierOffset = Math.max(pr.barrierOffset, barrierOffset);
                    persist(tp, p);
                }
            }));
        }

        @Override
        public void onFailure(TopicPartition tp, MirrorError error, String message) {
            executor.execute(() -> guarded(() -> {
                if (partitions.containsKey(tp)) {
                    handle(tp, new PartitionEvent.FetchFailed(error.format(message)));
                }
            }));
        }
    }

    private void guarded(Runnable work) {
        try {
            work.run();
        } catch (RuntimeException e) {
            log.error("Unexpected error in the mirror partition manager of broker {}", broker.nodeId(), e);
        }
    }

    @Override
    public void close() {
        procedureExecutor.shutdown(); // never interrupt: a procedure may be appending to or truncating a log
        try {
            procedureExecutor.awaitTermination(LeaderLogProcedures.WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        executor.execute(() -> {
            fetchers.values().forEach(MirrorFetcherManager::close);
            fetchers.clear();
        });
        executor.shutdown();
        try {
            executor.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stateWriter.close();
    }
}
