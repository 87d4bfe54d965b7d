package io.clustermirror.broker.partition;

import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.broker.node.ThreadHealth;
import io.clustermirror.broker.bridge.BrokerHandle;
import io.clustermirror.broker.bridge.LeaderChange;
import io.clustermirror.broker.bridge.LeaderLogState;
import io.clustermirror.broker.bridge.LeaderLogs;
import io.clustermirror.broker.fetch.ClusterLogReader;
import io.clustermirror.broker.fetch.DestinationLogStart;
import io.clustermirror.broker.fetch.FetchListener;
import io.clustermirror.broker.fetch.LocalLeaderAppender;
import io.clustermirror.broker.fetch.MirrorFetcherManager;
import io.clustermirror.broker.fetch.PartitionFetcher;
import io.clustermirror.broker.fetch.UnmirroredRecords;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.image.MirrorImageReader;
import io.clustermirror.common.records.EpochStart;
import io.clustermirror.common.records.FailureRetries;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.HeldDecision;
import io.clustermirror.common.records.HeldLogStarts;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.StopCut;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.CumulativeCount;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;

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
    /** How often the source is probed for the records that arrive while a partition is paused. */
    static final long PROBE_INTERVAL_MS = 5_000;
    private static final String REFUSED_CUTS_SENSOR = "cluster-mirror-stop-cuts-refused-";

    private final LeaderLogs broker;
    private final String clusterId;
    private final Time time;
    private final ScheduledExecutorService executor;
    /** The health of the executor's thread, which runs every event and action of the partitions this broker leads. */
    private final ThreadHealth health;
    private final PartitionStateMachine machine;
    private final StateRecords stateWriter;
    private final LeaderLogProcedures procedures;
    private final LeaderLogProcedures.LeadershipMover handover;
    private final CommittedOffsets committedOffsets;
    private final ProducerStateHygiene hygiene;
    private final java.util.function.Supplier<java.util.concurrent.CompletableFuture<Void>> imageCatchUp;
    private final FetcherFactory fetcherFactory;
    private final SourceCluster source;
    /** The source images the preparations share ({@link SourceCluster#image} through it only). */
    private final SharedSourceImages sourceImages;
    /** Runs alignments and divergence repairs, which read the source and may take tens of seconds. */
    private final ExecutorService alignmentExecutor;
    /** Runs stops, on a thread of their own so that a stop never waits behind an alignment. */
    private final ExecutorService stopExecutor;
    /** Runs the probes of the source for paused partitions, so that they never wait behind an alignment or a stop. */
    private final ExecutorService probeExecutor;
    private final LagMetrics lagMetrics;
    private final Metrics metrics;
    /**
     * Counts the cuts a stop refused ({@code stop-cuts-refused-total}, group {@code cluster-mirror}): a leader whose log ends
     * below the cut its stop decided, which would lose records the stop keeps. Each is logged at ERROR with the range.
     */
    private final Sensor refusedCuts;

    // Owned by the executor thread.
    private final Map<TopicPartition, LeaderChange> localLeaders = new HashMap<>();
    /** Leaderships waiting for the image to catch up before they act. */
    private final Map<TopicPartition, LeaderChange> pendingLeaders = new HashMap<>();
    private final Map<TopicPartition, MirrorPartition> partitions = new HashMap<>();
    private final Map<TopicPartition, Progress> progress = new HashMap<>();
    /** Each mirror's retry policy, read from the current image's configs when first needed. */
    private final Map<String, RetryPolicy> retryPolicies = new HashMap<>();
    private final Map<String, MirrorFetchers> fetchers = new HashMap<>();
    private final Set<TopicPartition> dirty = new HashSet<>();
    /**
     * The log fence of every partition this broker has had a machine for. Never removed: a partition that leaves its
     * mirror and comes back continues from its fence's generation, so that no earlier procedure passes for a current one.
     */
    private final Map<TopicPartition, LogFence> fences = new HashMap<>();
    private MirrorImage image = MirrorImage.EMPTY;
    /** The latest image not yet applied, null when none waits ({@link #onImage}). */
    private final AtomicReference<MirrorImage> waitingImage = new AtomicReference<>();
    /** True while a probe round runs: rounds never pile up behind a slow source. */
    private boolean probing;
    /** The last probe failure logged per mirror, so that an unreachable source is logged once, not every round. */
    private final Map<String, String> probeFailures = new HashMap<>();

    /** What the data plane reported for one partition since this broker became its leader. */
    private static final class Progress {
        long lastMirroredOffset = -1;
        int lastMirroredEpoch = -1;
        List<EpochStart> sourceEpochs = new ArrayList<>();
        long sourceEndOffset = -1;
        long barrierOffset = -1;
        long truncatedFromOffset = -1;
        long truncatedToOffset = -1;
        /** The source timestamp of the oldest record the destination lacks, or {@link PartitionStateRecord#NOTHING_UNMIRRORED}. */
        long oldestUnmirroredTimestamp = PartitionStateRecord.NOTHING_UNMIRRORED;
        /** The cut of the stop under way, as its first attempt decided it; null while no stop has decided one. */
        StopCut stopCut;
        /** The moves of the source's log start the destination holds back, as the fetcher last reported them. */
        HeldLogStarts heldLogStarts = HeldLogStarts.NONE;

        /**
         * Reports the removal of {@code [from, to)}. A cut at the same offset again (a later attempt of a stop, on a replica
         * that had not followed the first) removes part of the same range: the report keeps the whole of it.
         */
        void truncated(long from, long to) {
            truncatedToOffset = truncatedFromOffset == from ? Math.max(truncatedToOffset, to) : to;
            truncatedFromOffset = from;
        }
    }

    /**
     * The fetchers of one mirror, the configs they were built with (a mirror whose configs change gets new ones) and the
     * listener they report to.
     */
    private record MirrorFetchers(PartitionFetcher fetcher, Map<String, String> configs, Listener listener) {
    }

    /** Writes partition states to {@code __mirror_state} ({@link StateWriter} on a broker). */
    interface StateRecords extends AutoCloseable {
        /**
         * @param superseded log keys of the partition's older records, tombstoned once the record landed
         * @return completes once the record, or a later one of the partition, landed in {@code __mirror_state}
         */
        CompletableFuture<Void> write(PartitionStateRecord record, List<String> superseded);

        @Override
        void close();
    }

    /**
     * Moves committed consumer group offsets of a partition that lie past a truncation back to it ({@link GroupOffsetRewinder}
     * on a broker). Called on the procedure's thread right after the truncation; never throws.
     */
    interface CommittedOffsets {
        void rewind(String mirror, TopicPartition tp, long offset);
    }

    /** Creates the fetchers of one mirror ({@link MirrorFetcherManager} on a broker). */
    interface FetcherFactory {
        PartitionFetcher create(MirrorConfig config, FetchListener listener);
    }

    /** What the preparations and repairs read from a mirror's source cluster. */
    interface SourceCluster {
        /** The source's own mirror image: whether it copies a topic from this cluster, and what it mirrored from it. */
        MirrorImage image(MirrorConfig config);

        /**
         * A reader of the source's log of {@code tp}, of the topic with id {@code topicId} only: it refuses to read
         * another with {@link MirrorError#SOURCE_TOPIC_ID_CHANGED}, so that no alignment compares the mirrored data with a
         * re-created topic's and cuts it. Closing it releases its clients.
         */
        SourceLog log(MirrorConfig config, String clientId, TopicPartition tp, Uuid topicId);

        /**
         * The source's end and first batch at or past each given offset (the destinations' ends of paused partitions).
         *
         * @throws RuntimeException when the source cannot be read
         */
        Map<TopicPartition, ClusterLogReader.Head> heads(MirrorConfig config, String clientId, Map<TopicPartition, Long> offsets);
    }

    /** The batches of one source partition. */
    interface SourceLog extends LogComparison.BatchReader, AutoCloseable {
        @Override
        void close();
    }

    /**
     * The threads the manager runs on and its clock: on a broker, a single event thread, one thread for alignments and
     * repairs (they read the source and may take tens of seconds) and one for stops (so that a stop never waits behind an
     * alignment) and one for the probes of paused partitions' sources; in tests, executors the test steps on mock time.
     *
     * @param events single-threaded: every event and action of the partitions runs on it, in order
     */
    record Threads(Time time, ScheduledExecutorService events, ExecutorService alignments, ExecutorService stops,
                   ExecutorService probes) {
        static Threads of(int nodeId) {
            ScheduledThreadPoolExecutor events = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "cluster-mirror-partitions-" + nodeId);
                t.setDaemon(true);
                return t;
            });
            // Pending retries are dropped at close: they would act on a closed state writer and fetchers.
            events.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
            return new Threads(Time.SYSTEM, events, procedureThread("cluster-mirror-alignments-" + nodeId),
                procedureThread("cluster-mirror-stops-" + nodeId), procedureThread("cluster-mirror-lag-probes-" + nodeId));
        }

        private static ExecutorService procedureThread(String name) {
            return Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, name);
                t.setDaemon(true);
                return t;
            });
        }
    }

    /**
     * What the manager acts on besides the local logs; it closes the state records and the handover.
     *
     * @param imageCatchUp a read barrier on the mirror image: completes once the image holds everything committed to
     *                     the internal topics when it was called
     */
    record Collaborators(ProducerStateHygiene hygiene, StateRecords stateRecords, FetcherFactory fetchers, SourceCluster source,
                         LeaderLogProcedures.LeadershipMover handover, CommittedOffsets committedOffsets,
                         java.util.function.Supplier<java.util.concurrent.CompletableFuture<Void>> imageCatchUp) {
    }

    /**
     * @param imageCatchUp  a read barrier on the mirror image: completes once the image holds everything committed to
     *                      the internal topics when it was called
     * @param clientConfigs how this broker builds clients of a mirror's source
     */
    public PartitionMirrorManager(BrokerHandle broker, LocalClients clients, ProducerStateHygiene hygiene,
                                  java.util.function.Supplier<java.util.concurrent.CompletableFuture<Void>> imageCatchUp,
                                  BrokerClientConfigs clientConfigs) {
        this(broker, broker.clusterId(), broker.metrics(), new Collaborators(hygiene, new StateWriter(clients, broker.nodeId()),
                (config, listener) -> new MirrorFetcherManager(config, clientConfigs.clientProperties(config),
                    clientConfigs.sourceResponseBound(config.name()), broker.nodeId(),
                    new LocalLeaderAppender(broker), listener, broker.metrics()),
                sourceCluster(clientConfigs), new LeadershipHandover(clients, broker.nodeId()),
                new GroupOffsetRewinder(clients, broker.nodeId()), imageCatchUp),
            () -> ThreadLocalRandom.current().nextDouble(), Threads.of(broker.nodeId()));
    }

    /**
     * @param clusterId   the id of this (the destination) cluster
     * @param retryJitter where each retry of a FAILED partition falls in its backoff range ({@link RetryPolicy#delayMs})
     */
    PartitionMirrorManager(LeaderLogs broker, String clusterId, Metrics metrics, Collaborators parts, DoubleSupplier retryJitter,
                           Threads threads) {
        this.broker = broker;
        this.clusterId = clusterId;
        this.time = threads.time();
        this.hygiene = parts.hygiene();
        this.imageCatchUp = parts.imageCatchUp();
        this.fetcherFactory = parts.fetchers();
        this.source = parts.source();
        this.sourceImages = new SharedSourceImages(source::image);
        this.handover = parts.handover();
        this.committedOffsets = parts.committedOffsets();
        this.procedures = new LeaderLogProcedures(broker, handover, time);
        this.alignmentExecutor = threads.alignments();
        this.stopExecutor = threads.stops();
        this.probeExecutor = threads.probes();
        this.lagMetrics = new LagMetrics(metrics, time);
        this.metrics = metrics;
        this.refusedCuts = metrics.sensor(REFUSED_CUTS_SENSOR + broker.nodeId());
        refusedCuts.add(metrics.metricName("stop-cuts-refused-total", "cluster-mirror", "cuts a stop refused because the leader's "
            + "log ended below the cut the stop decided (records it keeps were missing); logged at ERROR"), new CumulativeCount());
        this.machine = new PartitionStateMachine(this::retryPolicy, retryJitter);
        this.stateWriter = parts.stateRecords();
        this.health = new ThreadHealth(metrics, log, "partitions-" + broker.nodeId());
        this.executor = threads.events();
        executor.scheduleWithFixedDelay(() -> guarded(this::persistProgress), PERSIST_INTERVAL_MS, PERSIST_INTERVAL_MS, TimeUnit.MILLISECONDS);
        executor.scheduleWithFixedDelay(() -> guarded(this::probePausedPartitions), PROBE_INTERVAL_MS, PROBE_INTERVAL_MS,
            TimeUnit.MILLISECONDS);
    }

    private static SourceCluster sourceCluster(BrokerClientConfigs clientConfigs) {
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
        long askedMs = time.milliseconds();
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
            long waitedMs = time.milliseconds() - askedMs;
            if (waitedMs > CATCH_UP_WARN_MS) {
                log.warn("New leaderships of {} partition(s) waited {} ms for the mirror state to load", gained.size(), waitedMs);
            }
        })));
    }

    /**
     * A new mirror image (from the tailer thread: only enqueues). Images that arrive while one waits replace it: each is
     * the whole state, and reconciling every partition per image would fall behind a tailer that delivers one per state
     * write (thousands a second when thousands of partitions start), holding every image queued meanwhile. An image
     * delivered before an event is queued is still applied before that event runs (the waiting task takes the latest).
     */
    public void onImage(MirrorImage newImage) {
        if (waitingImage.getAndSet(newImage) == null) {
            executor.execute(() -> guarded(this::applyWaitingImage));
        }
    }

    /**
     * {@code __mirror_state} alone was lost and the image goes on from what this broker knew (the tailer's
     * {@link io.clustermirror.broker.controller.MirrorImageTailer}): each partition this broker leads records its state
     * again in the new topic, after the images queued before.
     */
    public void recordStatesAgain() {
        executor.execute(() -> guarded(() -> new ArrayList<>(partitions.keySet()).forEach(tp -> handle(tp, new PartitionEvent.StateRecordLost()))));
    }

    /** Never finds none: a task is queued only by the image that found none waiting, and each task takes one. */
    private void applyWaitingImage() {
        MirrorImage newImage = waitingImage.getAndSet(null);
        MirrorImage oldImage = image;
        image = newImage;
        sourceImages.retain(newImage.mirrors().keySet());
        retryPolicies.clear();
        Set<TopicPartition> all = new HashSet<>(partitions.keySet());
        all.addAll(localLeaders.keySet());
        all.forEach(this::reconcile);
        closeFetchersOfDeletedMirrors();
        rebuildFetchersOfAlteredMirrors();
        passOnHeldDecisions(oldImage);
        passOnRecoveries(oldImage);
    }

    /** The retry policy of a mirror as its configs in the current image give it (the defaults once it is gone). */
    private RetryPolicy retryPolicy(String mirror) {
        return retryPolicies.computeIfAbsent(mirror, m -> image.mirror(m)
            .map(r -> RetryPolicy.of(MirrorConfig.validate(m, r.configs()))).orElse(RetryPolicy.DEFAULTS));
    }

    /** Hands an operator's new {@code --recover} of a topic to the machines of its partitions that this broker leads. */
    private void passOnRecoveries(MirrorImage oldImage) {
        new ArrayList<>(partitions.values()).stream().filter(MirrorPartition::leader).forEach(p -> {
            TopicPartition tp = p.partition();
            String recovery = image.topic(tp.topic()).map(MirrorTopicRecord::recoveryCommandId).orElse(null);
            if (recovery != null && !recovery.equals(oldImage.topic(tp.topic()).map(MirrorTopicRecord::recoveryCommandId).orElse(null))) {
                handle(tp, new PartitionEvent.RecoverRequested());
            }
        });
    }

    /** Hands an operator's new decision on a topic's held changes to the fetchers of its partitions that fetch here. */
    private void passOnHeldDecisions(MirrorImage oldImage) {
        partitions.values().stream().filter(MirrorPartition::fetching).forEach(p -> {
            TopicPartition tp = p.partition();
            HeldDecision decision = image.topic(tp.topic()).map(MirrorTopicRecord::logStartDecision).orElse(null);
            MirrorFetchers f = fetchers.get(p.mirror());
            if (f != null && decision != null
                    && !decision.equals(oldImage.topic(tp.topic()).map(MirrorTopicRecord::logStartDecision).orElse(null))) {
                f.fetcher().decideHeldLogStarts(tp, decision);
            }
        });
    }

    /** Brings one partition's machine in line with leadership, the recorded state and the desired state. */
    private void reconcile(TopicPartition tp) {
        Optional<MirrorTopicRecord> topic = image.topic(tp.topic());
        MirrorPartition current = partitions.get(tp);
        LeaderChange leadership = localLeaders.get(tp);
        if (current == null) {
            if (topic.isEmpty() || leadership == null) {
                return;
            }
            current = MirrorPartition.unknown(topic.get().mirror(), tp, topic.get().desired(), fence(tp).generation());
            partitions.put(tp, current);
        }
        if (topic.isEmpty() || !topic.get().mirror().equals(current.mirror())) {
            handle(tp, new PartitionEvent.DesiredChanged(null));
            partitions.remove(tp);
            progress.remove(tp);
            publishLag(tp);
            return;
        }
        Optional<PartitionStateRecord> persisted = image.partitionState(current.mirror(), tp.topic(), tp.partition());
        PartitionState recorded = persisted.map(PartitionStateRecord::state).orElse(PartitionState.UNKNOWN);
        if (leadership != null && (!current.leader() || current.leaderEpoch() != leadership.leaderEpoch())) {
            progress.put(tp, restoredProgress(persisted));
            handle(tp, new PartitionEvent.BecameLeader(leadership.leaderEpoch(), recorded,
                persisted.map(r -> r.lastMirroredOffset() >= 0).orElse(false)));
        }
        if (partitions.get(tp).recorded() != recorded) {
            handle(tp, new PartitionEvent.RecordedStateChanged(recorded));
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
            if (r.oldestUnmirroredTimestamp() != null) {
                p.oldestUnmirroredTimestamp = r.oldestUnmirroredTimestamp();
            }
            p.stopCut = r.stopCut();
            p.heldLogStarts = r.heldLogStarts();
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
                break;
            }
            Transition t = machine.handle(before, event, time.milliseconds());
            partitions.put(tp, t.next());
            fence(tp).advanceTo(t.next().generation());
            if (before.state() != t.next().state()) {
                log.info("Mirror '{}' partition {}: {} -> {} on {}{}", before.mirror(), tp, before.state(), t.next().state(),
                    event.getClass().getSimpleName(), t.next().lastError() == null ? "" : " (last error: " + t.next().lastError() + ")");
            }
            for (PartitionAction action : t.actions()) {
                execute(tp, t.next(), action).ifPresent(pending::add);
            }
        }
        publishLag(tp);
    }

    /** The lag gauge shows a partition while this broker leads it and it is not stopped. */
    private void publishLag(TopicPartition tp) {
        MirrorPartition p = partitions.get(tp);
        Progress pr = progress.get(tp);
        if (p == null || pr == null || !p.leader() || p.state() == PartitionState.STOPPED) {
            lagMetrics.untrack(tp);
        } else {
            lagMetrics.track(p.mirror(), tp, pr.oldestUnmirroredTimestamp);
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
        } else if (action instanceof PartitionAction.SkipLostRecords skip) {
            return skipLostRecords(tp, p, skip);
        } else if (action instanceof PartitionAction.StopFetching) {
            MirrorFetchers f = fetchers.get(p.mirror());
            if (f != null) {
                f.fetcher().removePartition(tp);
            }
            return Optional.of(new PartitionEvent.FetcherStopped());
        } else if (action instanceof PartitionAction.RunStop) {
            startStop(tp, p);
        } else if (action instanceof PartitionAction.StopUnmirrored) {
            log.info("Mirror '{}' partition {}: never mirrored into, so it stops without truncation or barrier", p.mirror(), tp);
            fence(tp).awaitChangesInProgress();
            return Optional.of(new PartitionEvent.StopSucceeded(p.generation()));
        } else if (action instanceof PartitionAction.RepairDivergence repair) {
            startRepair(tp, p, repair);
        } else if (action instanceof PartitionAction.ScheduleRetry retry) {
            long delay = Math.max(0, retry.atMs() - time.milliseconds());
            executor.schedule(() -> guarded(() -> {
                if (partitions.containsKey(tp)) {
                    handle(tp, new PartitionEvent.RetryDue());
                }
            }), delay, TimeUnit.MILLISECONDS);
        }
        return Optional.empty();
    }

    private LogFence fence(TopicPartition tp) {
        return fences.computeIfAbsent(tp, k -> new LogFence(0));
    }

    /** True while {@code generation} is the partition's current one: a procedure's outcome is still wanted. */
    private boolean current(TopicPartition tp, long generation) {
        MirrorPartition p = partitions.get(tp);
        return p != null && p.generation() == generation;
    }

    /**
     * Starts the stop on the stop thread; its outcome comes back as an event. The stop's first step decides the cut (or
     * takes the one an earlier attempt recorded); a cut decided now that removes records is recorded in
     * {@code __mirror_state} from the event thread, and the rest of the stop runs on the stop thread only once that record
     * has landed, so that whatever happens to this leader after its truncation, the next attempt cuts at the same offset.
     */
    private void startStop(TopicPartition tp, MirrorPartition p) {
        String sourceClusterId = image.mirror(p.mirror()).map(MirrorRecord::sourceClusterId).orElse("");
        LogFence.Permit permit = fence(tp).permit(p.generation());
        Optional<StopCut> decided = Optional.ofNullable(progress.computeIfAbsent(tp, k -> new Progress()).stopCut);
        stopExecutor.execute(() -> stopStep(tp, p, () -> {
            LeaderLogProcedures.StopStart start = procedures.beginStop(p.mirror(), tp, p.leaderEpoch(), permit, decided);
            if (start instanceof LeaderLogProcedures.AlreadyStopped stopped) {
                return stopped.outcome();
            }
            LeaderLogProcedures.CutAt at = (LeaderLogProcedures.CutAt) start;
            if (!at.mustRecord()) {
                return procedures.completeStop(p.mirror(), tp, p.leaderEpoch(), permit, sourceClusterId, at.cut(),
                    truncationRecorder(p.mirror(), tp));
            }
            executor.execute(() -> guarded(() -> recordCutThenCompleteStop(tp, p, permit, sourceClusterId, at.cut())));
            return null;
        }));
    }

    /** On the event thread: records the cut the stop decided, and completes the stop once the record has landed. */
    private void recordCutThenCompleteStop(TopicPartition tp, MirrorPartition p, LogFence.Permit permit, String sourceClusterId,
                                           StopCut cut) {
        if (!current(tp, p.generation())) {
            return; // superseded: the stop that superseded it decides for itself
        }
        Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
        pr.stopCut = cut;
        pr.truncated(cut.offset(), cut.logEnd()); // describe shows the cut from now on, whichever leader makes it
        persist(tp, partitions.get(tp)).orTimeout(LeaderLogProcedures.WAIT_MS, TimeUnit.MILLISECONDS).whenComplete((landed, error) ->
            stopExecutor.execute(() -> stopStep(tp, p, () -> {
                if (error != null) {
                    throw new LeaderLogProcedures.StepTimeoutException("could not record the cut at offset " + cut.offset() + " of "
                        + tp + " in " + InternalTopics.STATE + " within " + LeaderLogProcedures.WAIT_MS + " ms, so nothing was "
                        + "truncated: " + error);
                }
                return procedures.completeStop(p.mirror(), tp, p.leaderEpoch(), permit, sourceClusterId, cut,
                    truncationRecorder(p.mirror(), tp));
            })));
    }

    /** A step of a stop on the stop thread: its outcome, or null while the stop goes on elsewhere. */
    private interface StopStep {
        LeaderLogProcedures.Outcome run() throws Exception;
    }

    /** Runs a step of the stop issued in {@code p}'s generation and hands its outcome, if it has one, to the machine. */
    private void stopStep(TopicPartition tp, MirrorPartition p, StopStep step) {
        PartitionEvent result;
        LeaderLogProcedures.Outcome outcome = null;
        try {
            outcome = step.run();
            if (outcome == null) {
                return;
            }
            result = new PartitionEvent.StopSucceeded(p.generation());
        } catch (io.clustermirror.broker.bridge.NotLeaderException | LogFence.SupersededException e) {
            result = null; // the new leader, or whatever superseded this stop, goes on from the log as it is
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (LeaderLogProcedures.CutRefusedException e) {
            refusedCuts.record();
            result = new PartitionEvent.StopFailed(p.generation(), "stop failed: " + e.getMessage());
        } catch (Exception e) {
            result = new PartitionEvent.StopFailed(p.generation(), "stop failed: " + e.getMessage());
        }
        LeaderLogProcedures.Outcome done = outcome;
        PartitionEvent event = result;
        executor.execute(() -> guarded(() -> {
            if (event == null || !current(tp, p.generation())) {
                return;
            }
            if (done != null) {
                Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
                pr.barrierOffset = done.barrierOffset();
                if (done.truncatedFromOffset() >= 0) {
                    pr.truncated(done.truncatedFromOffset(), done.truncatedToOffset());
                }
                // Clean before STOPPED is recorded: the authorizer lets clients write once it reads STOPPED.
                hygiene.markClean(tp, p.leaderEpoch());
            }
            handle(tp, event);
        }));
    }

    /** Records a truncation at once (describe shows it; a later failure must not lose it). */
    private LeaderLogProcedures.TruncationListener truncationRecorder(String mirror, TopicPartition tp) {
        return (from, to) -> {
            executor.execute(() -> guarded(() -> {
                progress.computeIfAbsent(tp, k -> new Progress()).truncated(from, to);
                handle(tp, new PartitionEvent.LineageChanged());
            }));
            // Before the procedure goes on: once the stop reports STOPPED, consumers may move here at once.
            committedOffsets.rewind(mirror, tp, from);
        };
    }

    /**
     * PREPARING: a log this mirror was already mirroring into continues from its end; any other log is first cut where
     * it provably stops matching the source ({@link LogAlignment}, {@link LogComparison}), which needs the source's own
     * mirror state and log. Mirroring a topic back to a cluster that copies it from us is refused (a loop). An
     * unreachable source fails the preparation (retried): it never cuts.
     */
    private Optional<PartitionEvent> prepare(TopicPartition tp, MirrorPartition p) {
        Optional<PartitionStateRecord> own = image.partitionState(p.mirror(), tp.topic(), tp.partition());
        Optional<MirrorRecord> mirror = image.mirror(p.mirror());
        Optional<Uuid> sourceTopicId = sourceTopicId(tp);
        if (mirror.isEmpty() || sourceTopicId.isEmpty()) {
            return Optional.empty(); // the mirror or topic is going: the image that removes it takes the partition out
        }
        LogFence.Permit permit = fence(tp).permit(p.generation());
        long imageTicket = sourceImages.ticket();
        progress.computeIfAbsent(tp, k -> new Progress()).stopCut = null; // mirroring again: the next stop decides its own cut
        alignmentExecutor.execute(() -> {
            PartitionEvent event;
            LeaderLogProcedures.Aligned aligned = null;
            try {
                permit.check(); // a preparation a stop superseded while queued does not even read the source
                MirrorConfig config = MirrorConfig.validate(mirror.get().name(), mirror.get().configs());
                MirrorImage sourceImage = sourceImages.image(config, imageTicket);
                Optional<String> loop = sourceImage.mirrorCopyingFrom(clusterId, tp.topic());
                if (loop.isPresent()) {
                    event = new PartitionEvent.PrepareFailed(p.generation(), MirrorError.MIRROR_LOOP.format("the source cluster copies " + tp.topic()
                        + " from this cluster (its mirror '" + loop.get() + "'); stop one direction"));
                } else {
                    Optional<PartitionStateRecord> fromUs = sourceImage.partitionStateMirroredFrom(clusterId, tp.topic(), tp.partition());
                    LeaderLogState log = broker.leaderLogState(tp).orElseThrow(() ->
                        new io.clustermirror.broker.bridge.NotLeaderException("no longer the leader of " + tp));
                    java.util.OptionalLong ourEnd = fromUs.filter(r -> r.lastMirroredEpoch() >= 0)
                        .map(r -> broker.endOffsetForEpoch(tp, r.lastMirroredEpoch())).orElse(java.util.OptionalLong.empty());
                    LogAlignment.Plan plan = LogAlignment.plan(log.logStartOffset(), log.logEndOffset(), own, fromUs, ourEnd);
                    if (!(plan instanceof LogAlignment.Keep)) {
                        aligned = alignWithSource(config, tp, sourceTopicId.get(), p, permit, plan);
                    }
                    event = new PartitionEvent.PrepareSucceeded(p.generation());
                }
            } catch (io.clustermirror.broker.bridge.NotLeaderException | LogFence.SupersededException e) {
                event = null; // the new leader, or whatever superseded this preparation, goes on from the log as it is
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                event = new PartitionEvent.PrepareFailed(p.generation(), failure("preparing failed: ", e), sourceUnreachable(e));
            }
            PartitionEvent result = event;
            LeaderLogProcedures.Aligned done = aligned;
            executor.execute(() -> guarded(() -> {
                if (!current(tp, p.generation())) {
                    return;
                }
                if (done != null) {
                    restoreLineage(tp, done);
                }
                if (result != null) {
                    handle(tp, result);
                }
            }));
        });
        return Optional.empty();
    }

    /** The id of the source topic the partition mirrors, as recorded when it started. */
    private Optional<Uuid> sourceTopicId(TopicPartition tp) {
        return image.topic(tp.topic()).map(t -> Uuid.fromString(t.sourceTopicId()));
    }

    /** A procedure's failure as the last error: a named mirror error as it is, any other after what failed. */
    /** The source did not answer in time or the connection failed: one of Kafka's retriable errors caused {@code e}. */
    static boolean sourceUnreachable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof org.apache.kafka.common.errors.RetriableException) {
                return true;
            }
        }
        return false;
    }

    private static String failure(String what, Exception e) {
        return e instanceof io.clustermirror.common.ClusterMirrorException ? e.getMessage() : what + e.getMessage();
    }

    /** Runs on the procedure thread: aligns the leader's log with the source's, reading the source's batches. */
    private LeaderLogProcedures.Aligned alignWithSource(MirrorConfig config, TopicPartition tp, Uuid sourceTopicId, MirrorPartition p,
                                                        LogFence.Permit permit, LogAlignment.Plan plan) throws Exception {
        try (SourceLog sourceLog = source.log(config, "cluster-mirror-" + p.mirror() + "-" + broker.nodeId() + "-compare", tp,
                sourceTopicId)) {
            return procedures.alignWithSource(p.mirror(), tp, p.leaderEpoch(), permit, plan, sourceLog, truncationRecorder(p.mirror(), tp));
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
        PartitionFetcher f;
        try {
            f = fetchers.computeIfAbsent(p.mirror(), name -> {
                Listener listener = new Listener();
                return new MirrorFetchers(fetcherFactory.create(MirrorConfig.validate(name, mirror.get().configs()), listener),
                    mirror.get().configs(), listener);
            }).fetcher();
        } catch (RuntimeException e) {
            return Optional.of(new PartitionEvent.FetchFailed("cannot start fetching: " + e.getMessage()));
        }
        Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
        pr.stopCut = null; // mirroring again: the next stop decides its own cut
        long fetchOffset = logState.get().logEndOffset();
        log.info("Mirror '{}' partition {}: fetching from source offset {} at destination leader epoch {}",
            p.mirror(), tp, fetchOffset, p.leaderEpoch());
        f.addPartition(tp, Uuid.fromString(topic.get().sourceTopicId()), fetchOffset, p.leaderEpoch(), pr.lastMirroredEpoch,
            new DestinationLogStart(logState.get().logStartOffset(), pr.heldLogStarts, topic.get().logStartDecision()));
        return Optional.of(new PartitionEvent.FetchingStarted());
    }

    /** Hands the partition back to its fetcher past the records the source deleted before they were mirrored. */
    private Optional<PartitionEvent> skipLostRecords(TopicPartition tp, MirrorPartition p, PartitionAction.SkipLostRecords skip) {
        Optional<MirrorTopicRecord> topic = image.topic(tp.topic());
        MirrorFetchers f = fetchers.get(p.mirror());
        if (topic.isEmpty() || f == null) {
            return Optional.of(new PartitionEvent.FetchFailed("mirror '" + p.mirror() + "' or its topic is no longer defined"));
        }
        log.warn("Mirror '{}' partition {}: skipping source offsets [{}, {}), which the source deleted before they were mirrored "
            + "({}=continue)", p.mirror(), tp, skip.fromOffset(), skip.toOffset(), MirrorConfig.SOURCE_DATA_LOSS_POLICY);
        Optional<LeaderLogState> logState = broker.leaderLogState(tp);
        if (logState.isEmpty() || logState.get().leaderEpoch() != p.leaderEpoch()) {
            return Optional.empty(); // leadership moved on; the coming leadership event restarts the machine
        }
        Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
        f.fetcher().addPartitionPastLostRecords(tp, Uuid.fromString(topic.get().sourceTopicId()), skip.fromOffset(), skip.toOffset(),
            p.leaderEpoch(), new DestinationLogStart(logState.get().logStartOffset(), pr.heldLogStarts, topic.get().logStartDecision()));
        return Optional.empty();
    }

    /** Writes the partition's state record; the future completes once it (or a later one) landed. */
    private CompletableFuture<Void> persist(TopicPartition tp, MirrorPartition p) {
        MirrorTopicRecord topic = image.topic(tp.topic()).orElse(null);
        if (topic == null) {
            // The topic left the mirror: the image that removed it takes the partition out.
            return CompletableFuture.failedFuture(new IllegalStateException(tp.topic() + " left its mirror"));
        }
        Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
        long destEnd = broker.leaderLogState(tp).map(LeaderLogState::logEndOffset).orElse(-1L);
        PartitionStateRecord record = new PartitionStateRecord(p.mirror(), tp.topic(), tp.partition(), p.state(), p.leaderEpoch(),
            broker.nodeId(), topic.sourceTopicId(), pr.lastMirroredOffset, pr.lastMirroredEpoch, pr.sourceEpochs, pr.sourceEndOffset,
            destEnd, p.lastError(), pr.barrierOffset, pr.truncatedFromOffset, pr.truncatedToOffset, time.milliseconds(),
            pr.oldestUnmirroredTimestamp, pr.stopCut, pr.heldLogStarts, failureRetries(p));
        dirty.remove(tp);
        return stateWriter.write(record, image.stateLogKeysSupersededBy(record));
    }

    /** How a FAILED partition tries again, as describe shows it; null in any other state. */
    private static FailureRetries failureRetries(MirrorPartition p) {
        return p.state() != PartitionState.FAILED ? null : new FailureRetries(p.failures(),
            p.retryAtMs() == MirrorPartition.NO_RETRY ? FailureRetries.NONE : p.retryAtMs(), p.recoverable());
    }

    /**
     * Periodic lag snapshot of the partitions whose progress changed, and of the mirroring ones that lack source records
     * (their lag grows also when no progress is made: the record shows its age as of its write).
     */
    private void persistProgress() {
        progress.forEach((tp, pr) -> {
            MirrorPartition p = partitions.get(tp);
            if (p != null && p.state() == PartitionState.MIRRORING && pr.oldestUnmirroredTimestamp >= 0) {
                dirty.add(tp);
            }
        });
        for (TopicPartition tp : new ArrayList<>(dirty)) {
            handle(tp, new PartitionEvent.ProgressSnapshotDue());
        }
        dirty.clear();
    }

    /**
     * Starts a probe round for the paused partitions this broker leads: one small read of the source at each destination
     * end finds the records that arrived since the pause, and how old the oldest of them is. Paused partitions are not
     * fetched, so nothing else would notice them.
     */
    private void probePausedPartitions() {
        if (probing) {
            return;
        }
        Map<String, Map<TopicPartition, Long>> ends = new HashMap<>();
        partitions.forEach((tp, p) -> {
            if (p.leader() && p.state() == PartitionState.PAUSED && image.mirror(p.mirror()).isPresent()) {
                broker.leaderLogState(tp).ifPresent(log -> ends.computeIfAbsent(p.mirror(), m -> new HashMap<>()).put(tp, log.logEndOffset()));
            }
        });
        if (ends.isEmpty()) {
            return;
        }
        Map<String, MirrorConfig> configs = new HashMap<>();
        ends.keySet().forEach(name -> configs.put(name, MirrorConfig.validate(name, image.mirror(name).orElseThrow().configs())));
        probing = true;
        probeExecutor.execute(() -> {
            Map<TopicPartition, ClusterLogReader.Head> heads = new HashMap<>();
            Map<String, String> failures = new HashMap<>();
            try {
                ends.forEach((mirror, offsets) -> {
                    try {
                        heads.putAll(source.heads(configs.get(mirror), "cluster-mirror-" + mirror + "-" + broker.nodeId() + "-lag-probe", offsets));
                    } catch (RuntimeException e) {
                        failures.put(mirror, String.valueOf(e.getMessage()));
                    }
                });
            } finally {
                executor.execute(() -> guarded(() -> {
                    probing = false;
                    probed(ends, heads, failures);
                }));
            }
        });
    }

    /** Applies a probe round to the partitions still paused at the destination end it probed at. */
    private void probed(Map<String, Map<TopicPartition, Long>> ends, Map<TopicPartition, ClusterLogReader.Head> heads,
                        Map<String, String> failures) {
        ends.keySet().forEach(mirror -> {
            String failure = failures.get(mirror);
            if (failure != null && !failure.equals(probeFailures.get(mirror))) {
                log.warn("Mirror '{}': cannot read the source for the lag of its paused partitions ({}); their lag keeps "
                    + "growing from the oldest missing record seen so far, and records written to the source since are not "
                    + "counted until it can be read", mirror, failure);
            }
            if (failure == null) {
                probeFailures.remove(mirror);
            } else {
                probeFailures.put(mirror, failure);
            }
        });
        ends.values().forEach(offsets -> offsets.forEach((tp, destEnd) -> {
            ClusterLogReader.Head head = heads.get(tp);
            MirrorPartition p = partitions.get(tp);
            Progress pr = progress.get(tp);
            boolean unchanged = p != null && p.leader() && p.state() == PartitionState.PAUSED && pr != null
                && broker.leaderLogState(tp).map(LeaderLogState::logEndOffset).orElse(-1L).equals(destEnd);
            if (head == null || !unchanged) {
                return;
            }
            long oldest = UnmirroredRecords.atProbe(destEnd, head.highWatermark(), head.firstBatch());
            if (oldest != pr.oldestUnmirroredTimestamp || head.highWatermark() != pr.sourceEndOffset) {
                pr.oldestUnmirroredTimestamp = oldest;
                pr.sourceEndOffset = head.highWatermark();
                dirty.add(tp);
                publishLag(tp);
            }
        }));
    }

    private void closeFetchersOfDeletedMirrors() {
        fetchers.entrySet().removeIf(e -> {
            if (image.mirror(e.getKey()).isPresent()) {
                return false;
            }
            e.getValue().fetcher().close();
            return true;
        });
    }

    /**
     * A mirror whose configs changed (an ALTER, or secrets sealed again for a new key) gets new fetchers, and with them
     * new source clients: each of its fetching partitions leaves the old fetchers (no append of theirs is then in
     * flight) and starts on the new ones at the destination log end, with its leader epoch and last fetched epoch, as a
     * new leader's fetch does. The partitions stay MIRRORING: nothing is prepared again or truncated.
     */
    private void rebuildFetchersOfAlteredMirrors() {
        for (String mirror : List.copyOf(fetchers.keySet())) {
            Optional<MirrorRecord> record = image.mirror(mirror);
            if (record.isEmpty() || record.get().configs().equals(fetchers.get(mirror).configs())) {
                continue;
            }
            List<MirrorPartition> moving = partitions.values().stream().filter(p -> p.mirror().equals(mirror) && p.fetching())
                .toList();
            PartitionFetcher old = fetchers.remove(mirror).fetcher();
            moving.forEach(p -> old.removePartition(p.partition()));
            old.close();
            log.info("Mirror '{}': its configs changed; {} fetching partition(s) continue on new source clients", mirror,
                moving.size());
            // Queued behind the progress the old fetchers reported before they let go, so that each partition continues
            // with its last fetched epoch as of its log end.
            executor.execute(() -> guarded(() -> moving.forEach(before -> {
                TopicPartition tp = before.partition();
                MirrorPartition now = partitions.get(tp);
                if (now != null && now.fetching() && now.leaderEpoch() == before.leaderEpoch()) {
                    startFetching(tp, now).ifPresent(event -> handle(tp, event));
                }
            })));
        }
    }

    /** True if a fetcher callback comes from the current fetchers of the mirror; a replaced one's reports are stale. */
    private boolean current(Listener listener, TopicPartition tp) {
        MirrorPartition p = partitions.get(tp);
        MirrorFetchers f = p == null ? null : fetchers.get(p.mirror());
        return f != null && f.listener() == listener;
    }

    /**
     * The source's log no longer matches what was mirrored (an unclean leader election on the source): cuts the destination
     * where the source says the last mirrored epoch ends, once the batches confirm it, on every in-sync replica; the
     * outcome comes back as an event (mirroring goes on from the new log end, or the partition fails and is retried).
     */
    private void startRepair(TopicPartition tp, MirrorPartition p, PartitionAction.RepairDivergence repair) {
        Optional<MirrorConfig> config = image.mirror(p.mirror()).map(m -> MirrorConfig.validate(m.name(), m.configs()));
        Optional<Uuid> sourceTopicId = sourceTopicId(tp);
        if (config.isEmpty() || sourceTopicId.isEmpty()) {
            return; // the mirror or topic is going: the image that removes it takes the partition out
        }
        log.warn("Mirror '{}' partition {}: the source diverged from the mirrored data (its epoch {} ends at offset {}); "
            + "truncating the destination there once the batches confirm it", p.mirror(), tp, repair.sourceEpoch(),
            repair.sourceEpochEndOffset());
        LogAlignment.Plan plan = new LogAlignment.Propose(new Cut(repair.sourceEpochEndOffset(), Cut.Evidence.SOURCE_EPOCH_LINEAGE,
            "the source's leader epoch " + repair.sourceEpoch() + " ends at offset " + repair.sourceEpochEndOffset()));
        LogFence.Permit permit = fence(tp).permit(p.generation());
        alignmentExecutor.execute(() -> {
            PartitionEvent event;
            LeaderLogProcedures.Aligned aligned = null;
            try {
                aligned = alignWithSource(config.get(), tp, sourceTopicId.get(), p, permit, plan);
                event = new PartitionEvent.RepairSucceeded(p.generation());
            } catch (io.clustermirror.broker.bridge.NotLeaderException | LogFence.SupersededException e) {
                event = null; // a new leader fetches (the source reports the divergence to it), or a stop took over
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                event = new PartitionEvent.RepairFailed(p.generation(), failure("cannot align with the diverged source: ", e));
            }
            PartitionEvent result = event;
            LeaderLogProcedures.Aligned done = aligned;
            executor.execute(() -> guarded(() -> {
                if (result == null || !current(tp, p.generation())) {
                    return;
                }
                if (done != null) {
                    restoreLineageAfterDivergence(tp, repair.sourceEpoch(), done);
                }
                handle(tp, result);
            }));
        });
    }

    /**
     * The fetcher's last fetched epoch after a repair: the source's diverging epoch when the cut was confirmed there, the
     * source's epoch of the last identical batch when the batch comparison decided, and unknown when unproven batches
     * remain at the log end.
     */
    private void restoreLineageAfterDivergence(TopicPartition tp, int sourceEpoch, LeaderLogProcedures.Aligned aligned) {
        long end = aligned.logEnd();
        Progress pr = progress.computeIfAbsent(tp, k -> new Progress());
        pr.sourceEpochs.removeIf(e -> e.startOffset() >= end);
        pr.lastMirroredEpoch = aligned.lastIdenticalEnd() < 0 ? sourceEpoch
            : aligned.lastIdenticalEnd() == end ? aligned.sourceEpoch() : -1;
        pr.lastMirroredOffset = Math.min(pr.lastMirroredOffset, end - 1);
    }

    /** Fetcher callbacks arrive on fetcher threads and are handed to the executor. */
    private final class Listener implements FetchListener {
        @Override
        public void onProgress(TopicPartition tp, long lastMirroredOffset, int lastSourceEpoch, long firstSourceEpochStart, long sourceEndOffset) {
            executor.execute(() -> guarded(() -> {
                Progress pr = progress.get(tp);
                if (pr == null || !partitions.containsKey(tp)) {
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
                handle(tp, new PartitionEvent.MadeProgress());
            }));
        }

        @Override
        public void onOldestUnmirrored(TopicPartition tp, long oldestUnmirroredTimestamp) {
            executor.execute(() -> guarded(() -> {
                Progress pr = progress.get(tp);
                if (pr != null && partitions.containsKey(tp) && pr.oldestUnmirroredTimestamp != oldestUnmirroredTimestamp) {
                    pr.oldestUnmirroredTimestamp = oldestUnmirroredTimestamp;
                    dirty.add(tp);
                    publishLag(tp);
                }
            }));
        }

        @Override
        public void onLogStartHeld(TopicPartition tp, HeldLogStarts held) {
            executor.execute(() -> guarded(() -> {
                Progress pr = progress.get(tp);
                if (pr != null && partitions.containsKey(tp) && !pr.heldLogStarts.equals(held)) {
                    pr.heldLogStarts = held;
                    dirty.add(tp);
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
         * The fetcher dropped the partition: the machine has the log repaired ({@link #startRepair}). Not from replaced
         * fetchers: the new ones fetch from the log end with the last fetched epoch and see any divergence themselves.
         */
        @Override
        public void onDivergence(TopicPartition tp, int sourceEpoch, long sourceEpochEndOffset) {
            post(tp, new PartitionEvent.SourceDiverged(sourceEpoch, sourceEpochEndOffset));
        }

        @Override
        public void onBarrier(TopicPartition tp, long barrierOffset) {
            executor.execute(() -> guarded(() -> {
                Progress pr = progress.get(tp);
                if (pr != null) {
                    pr.barrierOffset = Math.max(pr.barrierOffset, barrierOffset);
                    handle(tp, new PartitionEvent.LineageChanged());
                }
            }));
        }

        /** The machine decides, by the mirror's {@code mirror.source.data.loss.policy}, whether mirroring goes on past them. */
        @Override
        public void onSourceRecordsLost(TopicPartition tp, long fromOffset, long toOffset) {
            executor.execute(() -> guarded(() -> {
                MirrorPartition p = partitions.get(tp);
                if (p != null && current(this, tp)) {
                    boolean failOnLoss = image.mirror(p.mirror())
                        .map(m -> MirrorConfig.validate(m.name(), m.configs()).failOnSourceDataLoss()).orElse(false);
                    handle(tp, new PartitionEvent.SourceRecordsLost(fromOffset, toOffset, failOnLoss));
                }
            }));
        }

        @Override
        public void onSourceTopicGone(TopicPartition tp, MirrorError error, String message) {
            post(tp, new PartitionEvent.SourceTopicGone(error.format(message)));
        }

        @Override
        public void onSourceUnavailable(TopicPartition tp, String report) {
            post(tp, new PartitionEvent.SourceUnavailable(MirrorError.SOURCE_UNAVAILABLE.format(report)));
        }

        @Override
        public void onSourceAvailable(TopicPartition tp) {
            post(tp, new PartitionEvent.SourceAvailable());
        }

        /**
         * Hands {@code event} to the partition's machine on the executor thread, if it still has one and this listener's
         * fetchers are the mirror's current ones: a replaced fetcher's reports (an old source client's failure) are stale.
         */
        private void post(TopicPartition tp, PartitionEvent event) {
            executor.execute(() -> guarded(() -> {
                if (current(this, tp)) {
                    handle(tp, event);
                }
            }));
        }

        @Override
        public void onFailure(TopicPartition tp, MirrorError error, String message) {
            post(tp, new PartitionEvent.FetchFailed(error.format(message)));
        }
    }

    /** Runs one task of the executor: a failure ends that task only (the next event acts again), and shows in the health. */
    private void guarded(Runnable work) {
        try {
            work.run();
            health.working();
        } catch (RuntimeException e) {
            health.failed("with the next event of the mirror partitions of broker " + broker.nodeId(), e);
        }
    }

    @Override
    public void close() {
        // Never interrupt: a procedure may be appending to or truncating a log.
        procedures.closing();
        alignmentExecutor.shutdown();
        stopExecutor.shutdown();
        probeExecutor.shutdownNow(); // a probe only reads the source
        try {
            long deadline = time.milliseconds() + LeaderLogProcedures.WAIT_MS;
            alignmentExecutor.awaitTermination(LeaderLogProcedures.WAIT_MS, TimeUnit.MILLISECONDS);
            stopExecutor.awaitTermination(Math.max(0, deadline - time.milliseconds()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        executor.execute(() -> {
            fetchers.values().forEach(f -> f.fetcher().close());
            fetchers.clear();
        });
        executor.shutdown();
        try {
            executor.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stateWriter.close();
        handover.close();
        lagMetrics.close();
        metrics.removeSensor(REFUSED_CUTS_SENSOR + broker.nodeId());
        health.close();
    }
}
