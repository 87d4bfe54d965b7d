package io.clustermirror.broker.partition;

import io.clustermirror.broker.bridge.BrokerHandle;
import io.clustermirror.broker.bridge.LeaderChange;
import io.clustermirror.broker.bridge.LeaderLogs;
import io.clustermirror.broker.fetch.LocalLeaderAppender;
import io.clustermirror.broker.fetch.MirrorFetcherManager;
import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.broker.node.ThreadHealth;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.CumulativeCount;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * Runs the mirror partitions one destination broker leads: hands every input (leadership, image, fetcher reports,
 * procedure outcomes, timers) to the {@link PartitionShard} on one event thread, in order, and performs the
 * {@link PartitionEffect}s it returns, as Kafka's coordinator runtime applies what its shards return. It decides nothing
 * about a partition; its own concerns are the threads, the clock, the read barrier a new leadership waits behind, and the
 * procedures on a leader's log, which it runs on their own threads and whose outcomes it hands back to the shard.
 *
 * <p>Invariants: the shard is only ever called on the event thread; effects are performed in the order the shard listed
 * them, each input's before the next input's; a procedure changes the log only through its generation's
 * {@link LogFence} permit, which the shard's {@link PartitionEffect.AdvanceFence} effects keep current.
 */
public final class PartitionRuntime implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PartitionRuntime.class);
    /** How often the progress of the partitions is recorded ({@link PartitionShard#snapshotDue}). */
    static final long SNAPSHOT_INTERVAL_MS = 5_000;
    private static final long CATCH_UP_WARN_MS = 10_000;
    private static final String REFUSED_CUTS_SENSOR = "cluster-mirror-stop-cuts-refused-";

    private final LeaderLogs broker;
    private final String clusterId;
    private final Time time;
    private final Threads threads;
    private final Collaborators parts;
    /** The health of the event thread, which runs every input and effect of the partitions this broker leads. */
    private final ThreadHealth health;
    private final PartitionShard shard;
    private final LeaderLogProcedures procedures;
    private final LogProcedureRunner procedureRunner;
    private final FetcherRegistry fetchers;
    private final PausedPartitionProbe probe;
    private final LagMetrics lagMetrics;
    private final Metrics metrics;
    /**
     * Counts the cuts a stop refused ({@code stop-cuts-refused-total}, group {@code cluster-mirror}): a leader whose log ends
     * below the cut its stop decided, which would lose records the stop keeps. Each is logged at ERROR with the range.
     */
    private final Sensor refusedCuts;

    // Owned by the event thread.
    /** Leaderships waiting for the image to catch up before they act. */
    private final Map<TopicPartition, LeaderChange> pendingLeaders = new HashMap<>();
    /** The log fence of every partition this broker has had a machine for; never removed, as the shard's generations. */
    private final Map<TopicPartition, LogFence> fences = new HashMap<>();
    /** The latest image not yet applied, null when none waits ({@link #onImage}). */
    private final AtomicReference<MirrorImage> waitingImage = new AtomicReference<>();

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

    /** The consumer groups' committed offsets of a stopped or truncated partition ({@link GroupOffsetRewinder} on a broker). */
    interface CommittedOffsets {
        /**
         * Moves the offsets that lie past a truncation back to it. Called on the procedure's thread right after the
         * truncation; never throws.
         */
        void rewind(String mirror, TopicPartition tp, long offset);

        /**
         * Gives each group of {@code offsets} its offset, the one a consistent stop chose. Called on the stop's thread once
         * the log is stopped, before STOPPED is recorded; never throws.
         */
        void set(String mirror, TopicPartition tp, Map<String, Long> offsets);
    }

    /**
     * The threads the runtime runs on and its clock: on a broker, a single event thread, one thread for alignments and
     * repairs (they read the source and may take tens of seconds), one for stops (so that a stop never waits behind an
     * alignment) and one for the probes of paused partitions' sources; in tests, executors the test steps on mock time.
     *
     * @param events single-threaded: every input and effect of the partitions runs on it, in order
     */
    record Threads(Time time, ScheduledExecutorService events, ExecutorService alignments, ExecutorService stops,
                   ExecutorService probes) {
        static Threads of(int nodeId) {
            ScheduledThreadPoolExecutor events = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "cluster-mirror-partitions-" + nodeId));
            // Pending retries are dropped at close: they would act on a closed state writer and fetchers.
            events.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
            return new Threads(Time.SYSTEM, events, procedureThread("cluster-mirror-alignments-" + nodeId),
                procedureThread("cluster-mirror-stops-" + nodeId), procedureThread("cluster-mirror-lag-probes-" + nodeId));
        }

        private static ExecutorService procedureThread(String name) {
            return Executors.newSingleThreadExecutor(r -> daemon(r, name));
        }

        private static Thread daemon(Runnable r, String name) {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        }
    }

    /**
     * What the runtime acts on besides the local logs; it closes the state records and the handover.
     *
     * @param imageCatchUp a read barrier on the mirror image: completes once the image holds everything committed to
     *                     the internal topics when it was called
     */
    record Collaborators(ProducerStateHygiene hygiene, StateRecords stateRecords, FetcherRegistry.FetcherFactory fetchers,
                         SourceCluster source, LeaderLogProcedures.LeadershipMover handover, CommittedOffsets committedOffsets,
                         Supplier<CompletableFuture<Void>> imageCatchUp) {
    }

    /** @param clientConfigs how this broker builds clients of a mirror's source */
    public PartitionRuntime(BrokerHandle broker, LocalClients clients, ProducerStateHygiene hygiene,
                            Supplier<CompletableFuture<Void>> imageCatchUp, BrokerClientConfigs clientConfigs) {
        this(broker, broker.clusterId(), broker.metrics(), new Collaborators(hygiene, new StateWriter(clients, broker.nodeId()),
                (config, listener) -> new MirrorFetcherManager(config, clientConfigs.clientProperties(config),
                    clientConfigs.sourceResponseBound(config.name()), broker.nodeId(),
                    new LocalLeaderAppender(broker), listener, broker.metrics()),
                SourceCluster.of(clientConfigs), new LeadershipHandover(clients, broker.nodeId()),
                new GroupOffsetRewinder(clients, broker.nodeId()), imageCatchUp),
            () -> ThreadLocalRandom.current().nextDouble(), Threads.of(broker.nodeId()));
    }

    /**
     * @param clusterId   the id of this (the destination) cluster
     * @param retryJitter where each retry of a FAILED partition falls in its backoff range ({@link RetryPolicy#delayMs})
     */
    PartitionRuntime(LeaderLogs broker, String clusterId, Metrics metrics, Collaborators parts, DoubleSupplier retryJitter,
                     Threads threads) {
        this.broker = broker;
        this.clusterId = clusterId;
        this.time = threads.time();
        this.threads = threads;
        this.parts = parts;
        this.shard = new PartitionShard(broker.nodeId(), time, broker::leaderLogState, retryJitter);
        this.procedures = new LeaderLogProcedures(broker, parts.handover(), time);
        this.fetchers = new FetcherRegistry(parts.fetchers(), this::submit);
        this.probe = new PausedPartitionProbe(broker.nodeId(), parts.source(), threads.probes(), this::submit);
        this.lagMetrics = new LagMetrics(metrics, time);
        this.metrics = metrics;
        this.refusedCuts = metrics.sensor(REFUSED_CUTS_SENSOR + broker.nodeId());
        refusedCuts.add(metrics.metricName("stop-cuts-refused-total", "cluster-mirror", "cuts a stop refused because the leader's "
            + "log ended below the cut the stop decided (records it keeps were missing); logged at ERROR"), new CumulativeCount());
        this.procedureRunner = new LogProcedureRunner(broker, clusterId, procedures, parts.source(), parts.stateRecords(),
            parts.committedOffsets(), threads.alignments(), threads.stops(), this::submit, this::fence, refusedCuts);
        this.health = new ThreadHealth(metrics, log, "partitions-" + broker.nodeId());
        threads.events().scheduleWithFixedDelay(() -> guarded(() -> perform(shard.snapshotDue())), SNAPSHOT_INTERVAL_MS,
            SNAPSHOT_INTERVAL_MS, TimeUnit.MILLISECONDS);
        threads.events().scheduleWithFixedDelay(() -> guarded(() -> probe.round(shard)), PausedPartitionProbe.INTERVAL_MS,
            PausedPartitionProbe.INTERVAL_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * Leadership changes of local partitions (from the metadata loader thread: only enqueues). A lost leadership acts at
     * once; a new one only after a read barrier on the image ({@code imageCatchUp}), so that the new leader decides on
     * the partition's recorded state as its previous leader left it, never on an image that has not loaded it yet.
     */
    public void onLeadershipChanges(List<LeaderChange> changes) {
        List<LeaderChange> gained = changes.stream().filter(c -> c.leader() && !c.deleted()).toList();
        threads.events().execute(() -> guarded(() -> {
            for (LeaderChange change : changes) {
                if (change.deleted() || !change.leader()) {
                    pendingLeaders.remove(change.partition());
                    perform(shard.leadershipLost(change.partition()));
                } else {
                    pendingLeaders.put(change.partition(), change);
                }
            }
        }));
        if (gained.isEmpty()) {
            return;
        }
        long askedMs = time.milliseconds();
        CompletableFuture<Void> caughtUp = parts.imageCatchUp().get();
        threads.events().schedule(() -> {
            if (!caughtUp.isDone()) {
                log.warn("New leaderships of {} partition(s) on broker {} wait for the mirror state to load (more than {} ms): their "
                    + "mirror topics stay read-only and are not mirrored until __mirror_metadata and __mirror_state can be read",
                    gained.size(), broker.nodeId(), CATCH_UP_WARN_MS);
            }
        }, CATCH_UP_WARN_MS, TimeUnit.MILLISECONDS);
        caughtUp.whenComplete((ignored, error) -> threads.events().execute(() -> guarded(() -> {
            if (error != null) {
                return; // closing
            }
            for (LeaderChange change : gained) {
                // Only the latest leadership still pending: a later change (lost, or a newer epoch) replaced it.
                if (pendingLeaders.remove(change.partition(), change)) {
                    perform(shard.leadershipGained(change));
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
     * delivered before an input is queued is still applied before that input (the waiting task takes the latest).
     */
    public void onImage(MirrorImage newImage) {
        if (waitingImage.getAndSet(newImage) == null) {
            threads.events().execute(() -> guarded(() -> {
                MirrorImage latest = waitingImage.getAndSet(null); // never null: each task takes the one image that queued it
                procedureRunner.retainMirrors(latest.mirrors().keySet());
                perform(shard.imageLoaded(latest));
            }));
        }
    }

    /**
     * {@code __mirror_state} alone was lost and the image goes on from what this broker knew (the tailer's
     * {@link io.clustermirror.broker.controller.MirrorImageTailer}): each partition this broker leads records its state
     * again in the new topic, after the images queued before.
     */
    public void recordStatesAgain() {
        submit(PartitionShard::stateRecordsLost);
    }

    /** Hands an input to the shard on the event thread, behind those already queued, and performs what it returns. */
    private void submit(FetcherRegistry.ShardInput input) {
        threads.events().execute(() -> guarded(() -> perform(input.applyTo(shard))));
    }

    private void perform(List<PartitionEffect> effects) {
        effects.forEach(this::perform);
    }

    private void perform(PartitionEffect effect) {
        if (effect instanceof PartitionEffect.AdvanceFence advance) {
            fence(advance.tp()).advanceTo(advance.generation());
        } else if (effect instanceof PartitionEffect.WriteState write) {
            parts.stateRecords().write(write.record(), write.superseded());
        } else if (effect instanceof PartitionEffect.FetcherEffect change) {
            changeFetchers(change);
        } else if (effect instanceof PartitionEffect.ProcedureEffect procedure) {
            procedureRunner.perform(procedure);
        } else if (effect instanceof PartitionEffect.AwaitLogChanges await) {
            fence(await.tp()).awaitChangesInProgress();
        } else if (effect instanceof PartitionEffect.MarkProducerStateClean clean) {
            parts.hygiene().markClean(clean.tp(), clean.leaderEpoch());
        } else if (effect instanceof PartitionEffect.ScheduleRetry retry) {
            threads.events().schedule(() -> guarded(() -> perform(shard.retryDue(retry.tp()))),
                Math.max(0, retry.atMs() - time.milliseconds()), TimeUnit.MILLISECONDS);
        } else if (effect instanceof PartitionEffect.TrackLag lag) {
            lagMetrics.track(lag.mirror(), lag.tp(), lag.oldestUnmirroredTimestamp());
        } else if (effect instanceof PartitionEffect.UntrackLag lag) {
            lagMetrics.untrack(lag.tp());
        }
    }

    /**
     * Fetchers that cannot be built (their source clients, say) fail the partition handed to them like any failure of its
     * fetch.
     */
    private void changeFetchers(PartitionEffect.FetcherEffect change) {
        try {
            fetchers.perform(change);
        } catch (RuntimeException e) {
            TopicPartition tp = change instanceof PartitionEffect.AddToFetcher add ? add.tp()
                : change instanceof PartitionEffect.AddPastLostRecords add ? add.tp() : null;
            if (tp == null) {
                throw e;
            }
            submit(s -> s.handle(tp, new PartitionEvent.FetchFailed("cannot start fetching: " + e.getMessage())));
        }
    }

    private LogFence fence(TopicPartition tp) {
        return fences.computeIfAbsent(tp, k -> new LogFence(0));
    }

    /** Runs one task of the event thread: a failure ends that task only (the next input acts again), and shows in the health. */
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
        threads.alignments().shutdown();
        threads.stops().shutdown();
        threads.probes().shutdownNow(); // a probe only reads the source
        try {
            long deadline = time.milliseconds() + LeaderLogProcedures.WAIT_MS;
            threads.alignments().awaitTermination(LeaderLogProcedures.WAIT_MS, TimeUnit.MILLISECONDS);
            threads.stops().awaitTermination(Math.max(0, deadline - time.milliseconds()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        threads.events().execute(fetchers::close);
        threads.events().shutdown();
        try {
            threads.events().awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        parts.stateRecords().close();
        parts.handover().close();
        lagMetrics.close();
        metrics.removeSensor(REFUSED_CUTS_SENSOR + broker.nodeId());
        health.close();
    }
}
