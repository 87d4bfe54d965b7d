package io.clustermirror.broker.fetch;

import io.clustermirror.broker.node.ThreadHealth;
import io.clustermirror.common.ListenerProbe;
import io.clustermirror.common.MirrorError;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The coordinator thread of one mirror ({@code cluster-mirror-coordinator-<mirror>}): everything that needs source
 * metadata, through a {@link SourceMetadata} client it alone uses. It finds the source leader of each pending partition
 * (checking the source topic id, and the fetch offset against the source log after OFFSET_OUT_OF_RANGE) and assigns
 * it to that broker's fetcher, with backoff while the source cannot answer; and it checks periodically
 * ({@code mirror.metadata.refresh.interval.ms}) that fetched partitions still fetch from their source leader.
 *
 * <p>The thread waits until a pending partition falls due, the refresh is due, a partition comes back, or a second
 * passes; then it runs a {@link #runPass pass}. Its times are those of the mirror's clock ({@link FetchContext#time}).
 *
 * <p>Invariant: a partition is either pending here or assigned to exactly one fetcher, never both.
 */
final class SourceLeaderCoordinator extends Thread {
    private final String mirror;
    private final FetchSettings settings;
    private final FetchedPartitions partitions;
    private final FetcherAssignments fetchers;
    private final Supplier<SourceMetadata> metadataFactory;
    private final long refreshIntervalMs;
    private final ThreadHealth health;
    private final Logger log;
    private final Time time;
    /** How often partitions with no successful fetch for a while are looked for, also during a slow source call. */
    private static final long UNAVAILABLE_CHECK_MS = 1_000L;
    private final Map<TopicPartition, Pending> pending = new ConcurrentHashMap<>();
    private final Object signal = new Object();
    private volatile boolean running = true;
    private SourceMetadata metadata; // this thread only
    /** When the next pass checks the leaders; volatile only because a test may run the passes on its own thread. */
    private volatile long nextRefreshMs;

    /** A partition waiting for the coordinator: leader discovery, topic check, offset check. */
    private record Pending(PartitionFetchState state, boolean checkOffsets, long notBeforeMs, int attempt) {
    }

    /**
     * @param metadataFactory a new client to the source; may throw {@link ListenerProbe.TlsListenerException}
     * @param registry        the broker's metrics registry, where this thread's {@link ThreadHealth} shows
     */
    SourceLeaderCoordinator(FetchContext context, FetcherAssignments fetchers, Supplier<SourceMetadata> metadataFactory,
                            long refreshIntervalMs, Metrics registry) {
        super("cluster-mirror-coordinator-" + context.mirrorName());
        setDaemon(true);
        this.mirror = context.mirrorName();
        this.settings = context.settings();
        this.partitions = context.partitions();
        this.fetchers = fetchers;
        this.metadataFactory = metadataFactory;
        this.refreshIntervalMs = Math.max(100L, refreshIntervalMs);
        this.log = context.logPrefix().logger(SourceLeaderCoordinator.class);
        this.health = new ThreadHealth(registry, log, "fetch-coordinator-" + mirror);
        this.time = context.time();
        this.nextRefreshMs = time.milliseconds() + this.refreshIntervalMs;
    }

    /** Hands a partition (back) to the coordinator: leader discovery, topic check, optional offset check. */
    void rediscover(PartitionFetchState st, boolean checkOffsets, long delayMs) {
        if (!partitions.isCurrent(st)) {
            return;
        }
        st.sourceBroker = -1;
        Pending prev = pending.get(st.tp);
        int attempt = prev != null && prev.state() == st ? prev.attempt() : 0;
        pending.put(st.tp, new Pending(st, checkOffsets || (prev != null && prev.state() == st && prev.checkOffsets()),
            time.milliseconds() + delayMs, attempt));
        synchronized (signal) {
            signal.notifyAll();
        }
    }

    /** Forgets a partition that left the fetched set, wherever it is (pending here or assigned to a fetcher). */
    void detach(PartitionFetchState st) {
        Pending p = pending.get(st.tp);
        if (p != null && p.state() == st) {
            pending.remove(st.tp, p);
        }
        fetchers.unassign(st);
    }

    /** Stops the loop (and cuts a pending admin call short: this thread does no log I/O, so an interrupt is safe). */
    void initiateShutdown() {
        running = false;
        synchronized (signal) {
            signal.notifyAll();
        }
        interrupt();
    }

    /** Removes this thread's health metrics; after it stopped. */
    void closeHealth() {
        health.close();
    }

    @Override
    public void run() {
        try {
            loop();
        } finally {
            if (metadata != null) {
                metadata.close(); // abort pending metadata calls: we are stopping
            }
        }
    }

    private void loop() {
        while (running) {
            try {
                awaitWork();
                runPass();
                health.working();
            } catch (InterruptedException e) {
                break;
            } catch (Throwable t) {
                if (!running) {
                    break;
                }
                sleepQuietly(health.failed("finding the source leaders of the mirror's partitions", t));
            }
        }
    }

    /**
     * One pass: resolves the pending partitions that are due (leader, topic id, offsets) and assigns them, reports the
     * partitions with no successful fetch for {@link FetchSettings#SOURCE_UNAVAILABLE_AFTER_MS}, and checks the leaders of
     * the fetched partitions once the refresh interval has passed since the last check. Runs on the coordinator thread,
     * or on a test's thread that never starts it.
     */
    void runPass() throws InterruptedException {
        List<Pending> due = takeDue(time.milliseconds());
        if (!due.isEmpty()) {
            resolve(due);
        }
        reportUnavailable();
        if (time.milliseconds() >= nextRefreshMs) {
            refreshLeaders();
            nextRefreshMs = time.milliseconds() + refreshIntervalMs;
        }
    }

    /** Waits until a pending partition falls due, the refresh or the next unavailability check is due, or shutdown. */
    private void awaitWork() throws InterruptedException {
        long deadline = Math.min(nextRefreshMs, time.milliseconds() + UNAVAILABLE_CHECK_MS);
        synchronized (signal) {
            while (running) {
                long now = time.milliseconds();
                long next = deadline;
                for (Pending p : pending.values()) {
                    next = Math.min(next, p.notBeforeMs());
                }
                if (now >= next) {
                    return;
                }
                signal.wait(Math.max(1L, Math.min(1000L, next - now)));
            }
        }
    }

    /** Takes the pending partitions due by {@code nowMs} out of the pending set, leaving out those removed meanwhile. */
    private List<Pending> takeDue(long nowMs) {
        List<Pending> due = new ArrayList<>();
        for (Pending p : pending.values()) {
            if (p.notBeforeMs() <= nowMs && pending.remove(p.state().tp, p) && !p.state().removed) {
                due.add(p);
            }
        }
        return due;
    }

    private void retry(Pending p, String why) {
        int attempt = p.attempt() + 1;
        long delay = settings.partitionBackoffMs(attempt);
        PartitionFetchState st = p.state();
        if (!partitions.isCurrent(st)) {
            return;
        }
        st.sourceProblem = why;
        if (attempt == 1 || attempt % 10 == 0) {
            log.warn("Cannot start fetching {} yet ({}); retrying in {} ms (attempt {})", st.tp, why, delay, attempt);
        }
        pending.put(st.tp, new Pending(st, p.checkOffsets(), time.milliseconds() + delay, attempt));
    }

    private void resolve(List<Pending> due) throws InterruptedException {
        SourceMetadata source;
        try {
            source = metadata();
        } catch (ListenerProbe.TlsListenerException e) {
            due.forEach(p -> partitions.fail(p.state(), MirrorError.INVALID_CONFIG, "the source of mirror '" + mirror + "': "
                + e.getMessage(), null));
            return;
        } catch (RuntimeException e) {
            String why = "cannot create the source admin client: " + e.getMessage();
            due.forEach(p -> retry(p, why));
            return;
        }
        Set<String> topics = new HashSet<>();
        due.forEach(p -> topics.add(p.state().tp.topic()));
        Map<String, CompletableFuture<TopicDescription>> described = source.describeTopics(topics);

        Map<Pending, Node> leaders = new HashMap<>();
        boolean refused = false;
        for (Pending p : due) {
            PartitionFetchState st = p.state();
            TopicDescription desc;
            try {
                desc = await(described.get(st.tp.topic()));
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                    partitions.sourceTopicGone(st, MirrorError.SOURCE_TOPIC_DELETED, "source topic " + st.tp.topic() + " (id "
                        + st.sourceTopicId + ") was deleted" + keptUntilTheOperatorActs(st));
                } else if (e.getCause() instanceof AuthenticationException auth) {
                    partitions.failAuthentication(st, auth);
                    refused = true;
                } else {
                    retry(p, "describe of source topic " + st.tp.topic() + " failed: " + e.getCause());
                }
                continue;
            }
            if (!st.sourceTopicId.equals(desc.topicId())) {
                partitions.sourceTopicGone(st, MirrorError.SOURCE_TOPIC_ID_CHANGED, "source topic " + st.tp.topic() + " was "
                    + "deleted and re-created (id " + desc.topicId() + ", mirrored " + st.sourceTopicId + "); its data is not "
                    + "copied over the mirrored history" + keptUntilTheOperatorActs(st));
                continue;
            }
            TopicPartitionInfo info = desc.partitions().size() > st.tp.partition()
                ? desc.partitions().get(st.tp.partition()) : null;
            if (info == null || info.partition() != st.tp.partition()) {
                partitions.fail(st, MirrorError.SOURCE_TOPIC_CHANGED, "source topic " + st.tp.topic() + " has no partition "
                    + st.tp.partition() + " (it has " + desc.partitions().size() + ")", null);
                continue;
            }
            Node leader = info.leader();
            if (leader == null || leader.isEmpty() || leader.id() < 0) {
                retry(p, "source partition " + st.tp + " has no leader");
                continue;
            }
            leaders.put(p, leader);
        }

        List<Pending> toCheck = new ArrayList<>();
        leaders.keySet().forEach(p -> {
            if (p.checkOffsets()) {
                toCheck.add(p);
            }
        });
        if (!toCheck.isEmpty()) {
            checkOffsets(source, toCheck, leaders);
        }
        leaders.forEach((p, leader) -> assign(p.state(), leader));
        if (refused) {
            // Kafka's Admin client fails every later call with that error, even once the source takes the credentials
            // again: the next attempt gets a new one.
            metadata.close();
            metadata = null;
        }
    }

    /**
     * Periodic check (mirror.metadata.refresh.interval.ms) of the source leaders of fetched partitions.
     * Needed because a source broker that lost leadership but still hosts a replica keeps answering our
     * fetches (consumer fetches from v11 on may be served by followers, up to their high watermark), so
     * no error would ever move the partition to the new leader. A partition whose leader or topic id
     * changed is flagged; its fetcher hands it back and the normal discovery path takes over.
     */
    private void refreshLeaders() throws InterruptedException {
        fetchers.stopIdle();
        Map<String, List<PartitionFetchState>> byTopic = new HashMap<>();
        for (PartitionFetchState st : partitions.values()) {
            if (!st.removed && st.sourceBroker >= 0) {
                byTopic.computeIfAbsent(st.tp.topic(), t -> new ArrayList<>()).add(st);
            }
        }
        if (byTopic.isEmpty()) {
            return;
        }
        SourceMetadata source;
        try {
            source = metadata();
        } catch (RuntimeException e) {
            return;
        }
        Map<String, CompletableFuture<TopicDescription>> described = source.describeTopics(byTopic.keySet());
        for (Map.Entry<String, List<PartitionFetchState>> e : byTopic.entrySet()) {
            TopicDescription desc;
            try {
                desc = await(described.get(e.getKey()));
            } catch (ExecutionException ex) {
                if (ex.getCause() instanceof UnknownTopicOrPartitionException) {
                    e.getValue().forEach(st -> st.leaderMoved = true); // discovery will fail them properly
                }
                continue; // unreachable: fetch errors will tell
            }
            for (PartitionFetchState st : e.getValue()) {
                TopicPartitionInfo info = desc.partitions().size() > st.tp.partition()
                    ? desc.partitions().get(st.tp.partition()) : null;
                boolean idChanged = !st.sourceTopicId.equals(desc.topicId());
                Node leader = info == null ? null : info.leader();
                boolean moved = leader != null && !leader.isEmpty() && leader.id() != st.sourceBroker
                    && st.sourceBroker >= 0;
                if (idChanged || info == null || moved) {
                    log.info("Source leader of {} is now {} (was {}){}; moving the partition", st.tp,
                        leader == null ? "none" : leader.id(), st.sourceBroker, idChanged ? ", topic id changed" : "");
                    st.leaderMoved = true;
                }
            }
        }
    }

    /**
     * After OFFSET_OUT_OF_RANGE: starts at the source log start when nothing was mirrored yet, reports the records the
     * source deleted before they were mirrored (its log start is past the fetch offset, the destination's end), fails if
     * the source end is behind, or fetches again without the epoch.
     */
    private void checkOffsets(SourceMetadata source, List<Pending> toCheck, Map<Pending, Node> leaders) throws InterruptedException {
        Set<TopicPartition> checked = new HashSet<>();
        toCheck.forEach(p -> checked.add(p.state().tp));
        Map<TopicPartition, CompletableFuture<Long>> start = source.offsets(checked, OffsetSpec.earliest());
        Map<TopicPartition, CompletableFuture<Long>> end = source.offsets(checked, OffsetSpec.latest());
        for (Pending p : toCheck) {
            PartitionFetchState st = p.state();
            long logStart;
            long logEnd;
            try {
                logStart = await(start.get(st.tp));
                logEnd = await(end.get(st.tp));
            } catch (ExecutionException e) {
                leaders.remove(p);
                retry(p, "list offsets of source partition " + st.tp + " failed: " + e.getCause());
                continue;
            }
            long offset = st.fetchOffset;
            if (offset < logStart && offset == 0) {
                // Nothing mirrored yet: mirroring begins where the source's log does, nothing was lost to the mirror.
                log.info("Source log of {} starts at {}; mirroring from there", st.tp, logStart);
                st.fetchOffset = logStart;
                st.lastFetchedEpoch = -1;
            } else if (offset < logStart) {
                leaders.remove(p);
                partitions.sourceRecordsLost(st, offset, logStart);
            } else if (offset > logEnd) {
                leaders.remove(p);
                partitions.fail(st, MirrorError.UNKNOWN_SERVER_ERROR, "the mirror of " + st.tp + " is at source offset " + offset
                    + " but the source log ends at " + logEnd + " (the source log was truncated, e.g. by an unclean "
                    + "leader election, or the topic was recreated)", null);
            } else {
                // In range: the source could not place our last fetched epoch (its epoch cache no longer has it).
                log.info("Source offset {} of {} is within the source log [{}, {}]; fetching again without the last "
                    + "fetched epoch {}", offset, st.tp, logStart, logEnd, st.lastFetchedEpoch);
                st.lastFetchedEpoch = -1;
            }
        }
    }

    private static String keptUntilTheOperatorActs(PartitionFetchState st) {
        return "; the mirror partition stops fetching and keeps its data up to offset " + (st.fetchOffset - 1) + ", read-only, "
            + "until it is stopped (--stop) or restarted (--pause and --resume)";
    }

    /**
     * The result of a source call; while it takes long (the source unreachable), partitions with no successful fetch for a
     * while are still reported.
     */
    private <T> T await(CompletableFuture<T> future) throws ExecutionException, InterruptedException {
        while (true) {
            try {
                return future.get(UNAVAILABLE_CHECK_MS, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                reportUnavailable();
            }
        }
    }

    private void reportUnavailable() {
        partitions.reportUnavailable(time.milliseconds(), FetchSettings.SOURCE_UNAVAILABLE_AFTER_MS);
    }

    private void assign(PartitionFetchState st, Node leader) {
        st.lock.lock();
        try {
            if (partitions.isCurrent(st)) {
                fetchers.assign(st, leader);
            }
        } finally {
            st.lock.unlock();
        }
    }

    private SourceMetadata metadata() {
        if (metadata == null) {
            metadata = metadataFactory.get();
        }
        return metadata;
    }

    private void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
