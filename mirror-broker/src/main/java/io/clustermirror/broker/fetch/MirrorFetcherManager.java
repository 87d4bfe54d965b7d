package io.clustermirror.broker.fetch;

import io.clustermirror.broker.ThreadHealth;
import io.clustermirror.common.ListenerProbe;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The data plane of one mirror on one destination broker: discovers the source leaders of the
 * partitions this broker leads, runs one fetcher thread per source broker that sends consumer Fetch
 * requests (replica id -1, fetch sessions, many partitions per request), and hands the raw batches to
 * the {@link PartitionAppender}.
 *
 * <p>Threads: a coordinator thread ({@code cluster-mirror-coordinator-<mirror>}) does everything that
 * needs source metadata through an {@link Admin} client (leaders, topic ids, log start/end after
 * OFFSET_OUT_OF_RANGE), with backoff when the source is unreachable; fetcher threads
 * ({@code cluster-mirror-fetcher-<mirror>-<sourceBrokerId>}) fetch and append. A partition is owned by
 * exactly one of them at a time.
 */
public final class MirrorFetcherManager implements AutoCloseable {
    private static final long MAX_SOURCE_BACKOFF_MS = 30_000L;
    private static final int ONE_OVERSIZED_BATCH_BYTES = 16 * 1024 * 1024;

    private final MirrorConfig config;
    private final Properties sourceClientProperties;
    private final int localNodeId;
    private final PartitionAppender appender;
    private final FetchListener listener;
    private final LogContext logContext;
    private final Logger log;
    private final Time time = Time.SYSTEM;
    private final FetcherMetrics metrics;
    private final Metrics networkMetrics = new Metrics();
    /** The broker's metrics registry, where each thread's {@link ThreadHealth} shows. */
    private final Metrics registry;
    private final ThreadHealth coordinatorHealth;
    /** The health of the link to each source broker, kept across fetcher replacements (coordinator creates, close closes). */
    private final Map<Integer, ThreadHealth> fetcherHealth = new ConcurrentHashMap<>();
    private final String clientId;

    private final Map<TopicPartition, PartitionFetchState> partitions = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Pending> pending = new ConcurrentHashMap<>();
    private final Map<Integer, SourceFetcher> fetchers = new HashMap<>(); // guarded by fetchers
    private final Object coordinatorSignal = new Object();
    private final Thread coordinator;
    private volatile boolean running = true;
    private Admin admin; // coordinator thread only

    /** A partition waiting for the coordinator: leader discovery, topic check, offset check. */
    private record Pending(PartitionFetchState state, boolean checkOffsets, long notBeforeMs, int attempt) {
    }

    /**
     * @param sourceClientProperties the mirror's client configs as this broker resolved them
     *                               ({@link io.clustermirror.common.secrets.BrokerClientConfigs#clientProperties}); they
     *                               may hold secrets: never logged
     */
    public MirrorFetcherManager(MirrorConfig config, Properties sourceClientProperties, int localNodeId, PartitionAppender appender,
                                FetchListener listener, Metrics metrics) {
        this.config = config;
        this.sourceClientProperties = sourceClientProperties;
        this.localNodeId = localNodeId;
        this.appender = appender;
        this.listener = listener;
        this.logContext = new LogContext("[ClusterMirror mirror=" + config.name() + " node=" + localNodeId + "] ");
        this.log = logContext.logger(MirrorFetcherManager.class);
        String configuredId = sourceClientProperties.getProperty(CommonClientConfigs.CLIENT_ID_CONFIG);
        this.clientId = (configuredId == null || configuredId.isBlank() ? "cluster-mirror-" + config.name() : configuredId)
            + "-" + localNodeId;
        this.metrics = new FetcherMetrics(metrics, config.name(), localNodeId, partitions::values);
        this.registry = metrics;
        this.coordinatorHealth = new ThreadHealth(metrics, log, "fetch-coordinator-" + config.name());
        this.coordinator = new Thread(this::coordinatorLoop, "cluster-mirror-coordinator-" + config.name());
        this.coordinator.setDaemon(true);
        this.coordinator.start();
    }

    /**
     * Starts mirroring a partition from {@code fetchOffset} (the destination log end).
     *
     * @param expectedSourceTopicId the source topic id recorded at start; any other id fails the partition
     * @param destLeaderEpoch       the destination leader epoch to stamp and append with
     * @param lastFetchedEpoch      source epoch of the last mirrored batch, or -1
     */
    public void addPartition(TopicPartition partition, Uuid expectedSourceTopicId, long fetchOffset,
                             int destLeaderEpoch, int lastFetchedEpoch) {
        if (!running) {
            throw new IllegalStateException("mirror fetcher manager of " + config.name() + " is closed");
        }
        removePartition(partition);
        PartitionFetchState st = new PartitionFetchState(partition, expectedSourceTopicId, fetchOffset,
            destLeaderEpoch, lastFetchedEpoch);
        partitions.put(partition, st);
        metrics.addPartition(st);
        log.info("Mirroring {} from source offset {} (source topic id {}, destination leader epoch {}, last source epoch {})",
            partition, fetchOffset, expectedSourceTopicId, destLeaderEpoch, lastFetchedEpoch);
        rediscover(st, false, 0L);
    }

    /** Stops mirroring a partition; returns once no append for it is in flight or will start. */
    public void removePartition(TopicPartition partition) {
        PartitionFetchState st = partitions.remove(partition);
        if (st == null) {
            return;
        }
        retire(st);
        log.info("Stopped mirroring {} at source offset {}", partition, st.fetchOffset);
    }

    /** The partitions being mirrored and their next fetch offsets (a snapshot). */
    public Map<TopicPartition, Long> fetchOffsets() {
        Map<TopicPartition, Long> out = new HashMap<>();
        partitions.forEach((tp, st) -> out.put(tp, st.fetchOffset));
        return out;
    }

    /** Fetch session id per source broker (0 while none): for tests and diagnostics. */
    Map<Integer, Integer> fetchSessionIds() {
        Map<Integer, Integer> out = new HashMap<>();
        synchronized (fetchers) {
            fetchers.forEach((id, f) -> out.put(id, f.sessionId()));
        }
        return out;
    }

    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        synchronized (coordinatorSignal) {
            coordinatorSignal.notifyAll();
        }
        for (PartitionFetchState st : new ArrayList<>(partitions.values())) {
            partitions.remove(st.tp, st);
            retire(st);
        }
        List<SourceFetcher> all;
        synchronized (fetchers) {
            all = new ArrayList<>(fetchers.values());
            fetchers.clear();
        }
        // Never interrupt a fetcher thread: it may be inside a log append, and an interrupt during
        // FileChannel I/O closes the channel (ClosedByInterruptException), which Kafka treats as a log
        // dir failure. Fetchers stop via a flag and NetworkClient.wakeup(). The coordinator does no log
        // I/O, so interrupting it (to cut a pending admin call short) is safe.
        all.forEach(SourceFetcher::initiateShutdown);
        coordinator.interrupt();
        join(coordinator);
        all.forEach(this::join);
        if (admin != null) {
            admin.close(Duration.ZERO); // abort pending metadata calls: we are stopping
        }
        Utils.closeQuietly(metrics, "cluster mirror metrics");
        Utils.closeQuietly(networkMetrics, "cluster mirror network metrics");
        coordinatorHealth.close();
        fetcherHealth.values().forEach(ThreadHealth::close);
        log.info("Closed");
    }

    // ------------------------------------------------------------------ called by fetchers

    /** The health of the fetching from one source broker ({@code thread=fetcher-<mirror>-<source broker id>}). */
    ThreadHealth fetcherHealth(int sourceBrokerId) {
        return fetcherHealth.computeIfAbsent(sourceBrokerId,
            id -> new ThreadHealth(registry, log, "fetcher-" + config.name() + "-" + id));
    }

    String mirrorName() {
        return config.name();
    }

    PartitionAppender appender() {
        return appender;
    }

    FetchListener listener() {
        return listener;
    }

    boolean readCommitted() {
        return config.readCommitted();
    }

    int maxWaitMs() {
        return config.getInt(MirrorConfig.FETCH_MAX_WAIT_MS);
    }

    int minBytes() {
        return config.getInt(MirrorConfig.FETCH_MIN_BYTES);
    }

    int maxBytes() {
        return config.getInt(MirrorConfig.FETCH_MAX_BYTES);
    }

    int partitionMaxBytes() {
        return config.getInt(MirrorConfig.FETCH_PARTITION_MAX_BYTES);
    }

    long fetchBackoffMs() {
        return Math.max(1L, config.getLong(MirrorConfig.FETCH_BACKOFF_MS));
    }

    /** Exponential backoff from mirror.fetch.backoff.ms for the n-th consecutive failure. */
    long partitionBackoffMs(int attempt) {
        long cap = Math.min(MAX_SOURCE_BACKOFF_MS, Math.max(fetchBackoffMs(),
            config.getLong(MirrorConfig.PARTITION_RETRY_BACKOFF_MAX_MS)));
        int shift = Math.min(Math.max(attempt - 1, 0), 20);
        return Math.min(cap, fetchBackoffMs() << shift);
    }

    /**
     * The largest fetch response the fetchers read: {@code mirror.fetch.max.bytes} plus room for one batch above the
     * limit, which Kafka returns first when it is larger. Anything larger closes the connection rather than being allocated.
     */
    int maxResponseBytes() {
        return (int) Math.min(Integer.MAX_VALUE, (long) maxBytes() + ONE_OVERSIZED_BATCH_BYTES);
    }

    /** Timeout of a fetch request: the source's request.timeout.ms, but always above the long-poll wait. */
    int requestTimeoutMs() {
        return Math.max(adminTimeoutMs(), maxWaitMs() + 1_000);
    }

    /** Timeout of metadata and list-offsets calls: the source's request.timeout.ms (default 30 s). */
    int adminTimeoutMs() {
        String v = sourceClientProperties.getProperty(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG);
        return v == null ? 30_000 : Integer.parseInt(v.trim());
    }

    long connectTimeoutMs() {
        String v = sourceClientProperties.getProperty(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG);
        return v == null ? 30_000L : Long.parseLong(v.trim());
    }

    void recordAppend(int batches, long records) {
        metrics.batchesAppended.record(batches);
        metrics.recordsAppended.record(records);
    }

    /** Hands a partition back to the coordinator (leader discovery, topic check, optional offset check). */
    void rediscover(PartitionFetchState st, boolean checkOffsets, long delayMs) {
        if (st.removed || partitions.get(st.tp) != st) {
            return;
        }
        st.sourceBroker = -1;
        Pending prev = pending.get(st.tp);
        int attempt = prev != null && prev.state() == st ? prev.attempt() : 0;
        pending.put(st.tp, new Pending(st, checkOffsets || (prev != null && prev.state() == st && prev.checkOffsets()),
            time.milliseconds() + delayMs, attempt));
        synchronized (coordinatorSignal) {
            coordinatorSignal.notifyAll();
        }
    }

    /** Fails a partition: removes it and tells the listener. */
    void fail(PartitionFetchState st, MirrorError error, String message, Throwable cause) {
        st.lock.lock();
        try {
            if (st.removed || !partitions.remove(st.tp, st)) {
                return;
            }
            retire(st);
            metrics.failedPartitions.record();
            if (cause != null) {
                log.warn("Mirror partition {} failed with {}: {}", st.tp, error, message, cause);
            } else {
                log.warn("Mirror partition {} failed with {}: {}", st.tp, error, message);
            }
            listener.onFailure(st.tp, error, message);
        } finally {
            st.lock.unlock();
        }
    }

    /**
     * The source refused the mirror's credentials: fails the partition, so that describe shows why it does not progress
     * (retrying in silence would look like a stall); the partition is retried like any failed one.
     */
    void failAuthentication(PartitionFetchState st, AuthenticationException e) {
        fail(st, MirrorError.SOURCE_CLUSTER_UNREACHABLE, "authentication to the source cluster failed (" + e.getMessage()
            + "); check the mirror's credentials (its sasl.* and ssl.* configs) and its principal on the source", null);
    }

    /** The source diverged from the mirrored data: removes the partition and tells the listener. */
    void diverged(PartitionFetchState st, int sourceEpoch, long endOffset) {
        st.lock.lock();
        try {
            if (st.removed || !partitions.remove(st.tp, st)) {
                return;
            }
            retire(st);
            metrics.failedPartitions.record();
            log.warn("Source log of {} diverged from the mirrored data: source epoch {} ends at offset {}, "
                + "mirrored up to offset {} with last source epoch {}", st.tp, sourceEpoch, endOffset,
                st.fetchOffset - 1, st.lastFetchedEpoch);
            listener.onDivergence(st.tp, sourceEpoch, endOffset);
        } finally {
            st.lock.unlock();
        }
    }

    /** This broker no longer leads the partition at the expected epoch: drop it silently. */
    void drop(PartitionFetchState st, String why) {
        st.lock.lock();
        try {
            if (st.removed || !partitions.remove(st.tp, st)) {
                return;
            }
            retire(st);
            log.info("Dropped {} at source offset {}: {}", st.tp, st.fetchOffset, why);
        } finally {
            st.lock.unlock();
        }
    }

    /** Marks the partition removed under its lock (waits for an in-flight append) and detaches it. */
    private void retire(PartitionFetchState st) {
        st.lock.lock();
        try {
            st.removed = true;
        } finally {
            st.lock.unlock();
        }
        Pending p = pending.get(st.tp);
        if (p != null && p.state() == st) {
            pending.remove(st.tp, p);
        }
        synchronized (fetchers) {
            SourceFetcher f = fetchers.get(st.sourceBroker);
            if (f != null) {
                f.unassign(st);
            }
        }
        if (partitions.get(st.tp) == null) {
            metrics.removePartition(st.tp);
        }
    }

    // ------------------------------------------------------------------ coordinator

    private void coordinatorLoop() {
        long refreshInterval = Math.max(100L, config.getLong(MirrorConfig.METADATA_REFRESH_INTERVAL_MS));
        long nextRefresh = time.milliseconds() + refreshInterval;
        while (running) {
            try {
                List<Pending> due = takeDue(nextRefresh);
                if (!due.isEmpty()) {
                    resolve(due);
                }
                if (time.milliseconds() >= nextRefresh) {
                    refreshLeaders();
                    nextRefresh = time.milliseconds() + refreshInterval;
                }
                coordinatorHealth.working();
            } catch (InterruptedException e) {
                break;
            } catch (Throwable t) {
                if (!running) {
                    break;
                }
                sleepQuietly(coordinatorHealth.failed("finding the source leaders of the mirror's partitions", t));
            }
        }
    }

    /** Pending partitions that are due; empty when {@code deadline} passes first. */
    private List<Pending> takeDue(long deadline) throws InterruptedException {
        synchronized (coordinatorSignal) {
            while (running) {
                long now = time.milliseconds();
                if (now >= deadline) {
                    return List.of();
                }
                long next = deadline;
                List<Pending> due = new ArrayList<>();
                for (Pending p : pending.values()) {
                    if (p.notBeforeMs() <= now) {
                        if (pending.remove(p.state().tp, p) && !p.state().removed) {
                            due.add(p);
                        }
                    } else {
                        next = Math.min(next, p.notBeforeMs());
                    }
                }
                if (!due.isEmpty()) {
                    return due;
                }
                coordinatorSignal.wait(Math.max(1L, Math.min(1000L, next - now)));
            }
            return List.of();
        }
    }

    private void retry(Pending p, String why) {
        int attempt = p.attempt() + 1;
        long delay = partitionBackoffMs(attempt);
        PartitionFetchState st = p.state();
        if (st.removed || partitions.get(st.tp) != st) {
            return;
        }
        if (attempt == 1 || attempt % 10 == 0) {
            log.warn("Cannot start fetching {} yet ({}); retrying in {} ms (attempt {})", st.tp, why, delay, attempt);
        }
        pending.put(st.tp, new Pending(st, p.checkOffsets(), time.milliseconds() + delay, attempt));
    }

    private void resolve(List<Pending> due) throws InterruptedException {
        Admin a;
        try {
            a = admin();
        } catch (ListenerProbe.TlsListenerException e) {
            due.forEach(p -> fail(p.state(), MirrorError.INVALID_CONFIG, "the source of mirror '" + config.name() + "': "
                + e.getMessage(), null));
            return;
        } catch (RuntimeException e) {
            String why = "cannot create the source admin client: " + e.getMessage();
            due.forEach(p -> retry(p, why));
            return;
        }
        Set<String> topics = new HashSet<>();
        due.forEach(p -> topics.add(p.state().tp.topic()));
        Map<String, KafkaFuture<TopicDescription>> described = a.describeTopics(topics,
            new DescribeTopicsOptions().timeoutMs(adminTimeoutMs())).topicNameValues();

        Map<Pending, Node> leaders = new HashMap<>();
        boolean refused = false;
        for (Pending p : due) {
            PartitionFetchState st = p.state();
            TopicDescription desc;
            try {
                desc = described.get(st.tp.topic()).get();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                    fail(st, MirrorError.SOURCE_TOPIC_CHANGED, "source topic " + st.tp.topic() + " was deleted or "
                        + "recreated (not found on the source, expected id " + st.sourceTopicId + "); the mirror "
                        + "partition stops here at offset " + (st.fetchOffset - 1), null);
                } else if (e.getCause() instanceof AuthenticationException auth) {
                    failAuthentication(st, auth);
                    refused = true;
                } else {
                    retry(p, "describe of source topic " + st.tp.topic() + " failed: " + e.getCause());
                }
                continue;
            }
            if (!st.sourceTopicId.equals(desc.topicId())) {
                fail(st, MirrorError.SOURCE_TOPIC_CHANGED, "source topic " + st.tp.topic() + " was deleted or "
                    + "recreated (id " + desc.topicId() + ", expected " + st.sourceTopicId + "); the mirror "
                    + "partition stops here at offset " + (st.fetchOffset - 1), null);
                continue;
            }
            TopicPartitionInfo info = desc.partitions().size() > st.tp.partition()
                ? desc.partitions().get(st.tp.partition()) : null;
            if (info == null || info.partition() != st.tp.partition()) {
                fail(st, MirrorError.SOURCE_TOPIC_CHANGED, "source topic " + st.tp.topic() + " has no partition "
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
            checkOffsets(a, toCheck, leaders);
        }
        leaders.forEach((p, leader) -> assign(p.state(), leader));
        if (refused) {
            // Kafka's Admin client fails every later call with that error, even once the source takes the credentials
            // again: the next attempt gets a new one.
            admin.close(Duration.ZERO);
            admin = null;
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
        stopIdleFetchers();
        Map<String, List<PartitionFetchState>> byTopic = new HashMap<>();
        for (PartitionFetchState st : partitions.values()) {
            if (!st.removed && st.sourceBroker >= 0) {
                byTopic.computeIfAbsent(st.tp.topic(), t -> new ArrayList<>()).add(st);
            }
        }
        if (byTopic.isEmpty()) {
            return;
        }
        Admin a;
        try {
            a = admin();
        } catch (RuntimeException e) {
            return;
        }
        Map<String, KafkaFuture<TopicDescription>> described = a.describeTopics(byTopic.keySet(),
            new DescribeTopicsOptions().timeoutMs(adminTimeoutMs())).topicNameValues();
        for (Map.Entry<String, List<PartitionFetchState>> e : byTopic.entrySet()) {
            TopicDescription desc;
            try {
                desc = described.get(e.getKey()).get();
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
     * Stops fetchers without partitions (their source broker lost all our leaders). Race-free: only this
     * (coordinator) thread assigns partitions to fetchers.
     */
    private void stopIdleFetchers() {
        List<SourceFetcher> idle = new ArrayList<>();
        synchronized (fetchers) {
            fetchers.values().removeIf(f -> {
                if (f.assignedCount() == 0) {
                    idle.add(f);
                    return true;
                }
                return false;
            });
        }
        for (SourceFetcher f : idle) {
            log.info("Stopping the idle fetcher for source broker {}", f.node().id());
            f.initiateShutdown();
        }
    }

    /** After OFFSET_OUT_OF_RANGE: moves to the source log start, or fails if the source end is behind. */
    private void checkOffsets(Admin a, List<Pending> toCheck, Map<Pending, Node> leaders) throws InterruptedException {
        Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (Pending p : toCheck) {
            earliest.put(p.state().tp, OffsetSpec.earliest());
            latest.put(p.state().tp, OffsetSpec.latest());
        }
        ListOffsetsOptions opts = new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED);
        opts.timeoutMs(adminTimeoutMs());
        ListOffsetsResult start = a.listOffsets(earliest, opts);
        ListOffsetsResult end = a.listOffsets(latest, opts);
        for (Pending p : toCheck) {
            PartitionFetchState st = p.state();
            long logStart;
            long logEnd;
            try {
                logStart = start.partitionResult(st.tp).get().offset();
                logEnd = end.partitionResult(st.tp).get().offset();
            } catch (ExecutionException e) {
                leaders.remove(p);
                retry(p, "list offsets of source partition " + st.tp + " failed: " + e.getCause());
                continue;
            }
            long offset = st.fetchOffset;
            if (offset < logStart) {
                log.info("Source log start of {} moved to {} (retention or deleteRecords) past the mirror's offset {}; "
                    + "continuing from the source log start", st.tp, logStart, offset);
                st.fetchOffset = logStart;
                st.lastFetchedEpoch = -1;
            } else if (offset > logEnd) {
                leaders.remove(p);
                fail(st, MirrorError.UNKNOWN_SERVER_ERROR, "the mirror of " + st.tp + " is at source offset " + offset
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

    private void assign(PartitionFetchState st, Node leader) {
        st.lock.lock();
        try {
            if (st.removed || partitions.get(st.tp) != st) {
                return;
            }
            SourceFetcher f = fetcherFor(leader);
            if (f != null) {
                f.assign(st);
            }
        } finally {
            st.lock.unlock();
        }
    }

    private SourceFetcher fetcherFor(Node leader) {
        List<SourceFetcher> stale = new ArrayList<>();
        SourceFetcher f;
        synchronized (fetchers) {
            if (!running) {
                return null;
            }
            f = fetchers.get(leader.id());
            if (f != null && (!f.node().host().equals(leader.host()) || f.node().port() != leader.port()
                || !f.isAlive())) {
                fetchers.remove(leader.id());
                stale.add(f);
                f = null;
            }
            if (f == null) {
                Node node = new Node(leader.id(), leader.host(), leader.port(), leader.rack());
                f = new SourceFetcher(this, node, networkClient(node), logContext,
                    metrics.brokerBytesSensor(leader.id()));
                fetchers.put(leader.id(), f);
                f.start();
            }
        }
        for (SourceFetcher old : stale) {
            log.info("Source broker {} moved to {}:{}; replacing its fetcher", leader.id(), leader.host(), leader.port());
            old.initiateShutdown();
            for (PartitionFetchState st : old.drain()) {
                rediscover(st, false, 0L);
            }
        }
        return f;
    }

    private NetworkClient networkClient(Node node) {
        Map<String, String> tags = new HashMap<>();
        tags.put("mirror", config.name());
        tags.put("source-broker", String.valueOf(node.id()));
        return NetworkClients.to(node, sourceClientProperties, clientId, requestTimeoutMs(), maxResponseBytes(),
            networkMetrics, "cluster-mirror-fetcher", tags, logContext);
    }

    private Admin admin() {
        if (admin == null) {
            Properties props = new Properties();
            props.putAll(sourceClientProperties);
            ListenerProbe.check(props);
            props.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId + "-admin");
            admin = Admin.create(props);
        }
        return admin;
    }

    private void join(Thread t) {
        try {
            t.join(TimeUnit.SECONDS.toMillis(30));
            if (t.isAlive()) {
                log.warn("Thread {} did not stop within 30 s", t.getName());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
