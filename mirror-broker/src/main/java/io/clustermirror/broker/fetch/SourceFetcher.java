package io.clustermirror.broker.fetch;

import io.clustermirror.broker.node.ThreadHealth;
import io.clustermirror.broker.bridge.AppendResult;
import io.clustermirror.broker.bridge.NotLeaderException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.compat.FetchPosition;
import io.clustermirror.common.compat.FetchedPartition;
import io.clustermirror.common.compat.SourceEndpoint;
import io.clustermirror.common.records.HeldDecision;
import io.clustermirror.common.records.HeldLogStarts;
import io.clustermirror.common.records.PartitionStateRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One thread per (mirror, source broker): fetches its assigned partitions from that broker through a
 * {@link SourceEndpoint} (consumer Fetch, topic ids, an incremental fetch session, many partitions per request) and
 * appends what comes back, batch by batch as the source wrote it. Everything that needs source metadata goes back to
 * the coordinator ({@link FetchContext#rediscovery}).
 *
 * <p>Invariant: only this thread changes the fetch offset of an assigned partition, and it appends only data fetched
 * at the partition's current offset, under the partition's lock, while the partition is still assigned here.
 */
final class SourceFetcher extends Thread {
    private final FetchContext context;
    private final FetchSettings settings;
    private final FetchedPartitions partitions;
    private final SourceEndpoint endpoint;
    private final Node node;
    private final ThreadHealth health;
    private final Sensor bytesSensor;
    private final Logger log;
    private final Time time;
    private final Map<TopicPartition, PartitionFetchState> assigned = new ConcurrentHashMap<>();
    private final Object idle = new Object();
    private volatile boolean running = true;
    private int connectFailures;
    /** Since when the link throttle holds this fetcher back, -1 while it does not. */
    private long throttledSinceMs = -1L;

    SourceFetcher(FetchContext context, SourceEndpoint endpoint, ThreadHealth health, Sensor bytesSensor) {
        super("cluster-mirror-fetcher-" + context.mirrorName() + "-" + endpoint.node().id());
        setDaemon(true);
        this.context = context;
        this.settings = context.settings();
        this.partitions = context.partitions();
        this.endpoint = endpoint;
        this.node = endpoint.node();
        this.health = health;
        this.bytesSensor = bytesSensor;
        this.log = context.logPrefix().logger(SourceFetcher.class);
        this.time = context.time();
    }

    Node node() {
        return node;
    }

    void assign(PartitionFetchState st) {
        st.sourceBroker = node.id();
        assigned.put(st.tp, st);
        synchronized (idle) {
            idle.notifyAll();
        }
    }

    /** Stops fetching the partition (the next request forgets it). */
    void unassign(PartitionFetchState st) {
        assigned.remove(st.tp, st);
    }

    /** Unassigns and returns every partition (when this fetcher is replaced). */
    List<PartitionFetchState> drain() {
        List<PartitionFetchState> out = new ArrayList<>(assigned.values());
        out.forEach(this::unassign);
        return out;
    }

    /** Current fetch session id with the source broker (0: none yet / sessionless). */
    int sessionId() {
        return endpoint.sessionId();
    }

    int assignedCount() {
        return assigned.size();
    }

    void initiateShutdown() {
        running = false;
        endpoint.initiateClose();
        synchronized (idle) {
            idle.notifyAll();
        }
    }

    @Override
    public void run() {
        log.info("Fetcher started for source broker {} ({}:{})", node.id(), node.host(), node.port());
        try {
            while (running) {
                try {
                    runOnce();
                    health.working();
                } catch (Throwable t) {
                    if (!running) {
                        break;
                    }
                    endpoint.resetSession(t);
                    pause(health.failed("fetching from source broker " + node.id(), t));
                }
            }
        } finally {
            endpoint.close();
            log.info("Fetcher stopped for source broker {}", node.id());
        }
    }

    /** One round: one fetch of every assigned partition that is due, and the handling of its response. */
    void runOnce() {
        long now = time.milliseconds();
        long throttledUntil = now + throttleDelayMs(now);
        Map<TopicPartition, PartitionFetchState> requested = new LinkedHashMap<>();
        Map<TopicPartition, FetchPosition> request = new LinkedHashMap<>();
        long nextDue = Long.MAX_VALUE;
        for (PartitionFetchState st : assigned.values()) {
            if (st.removed) {
                assigned.remove(st.tp, st);
                continue;
            }
            // An idle partition is left out of incremental fetch responses: retry a pending log start move here.
            if (!followSourceLogStart(st)) {
                continue;
            }
            if (st.leaderMoved) {
                // The coordinator saw another source leader: only the owner (this thread) lets go.
                st.leaderMoved = false;
                release(st, false);
                continue;
            }
            if (throttledUntil > now) {
                // Held back as after a backoff, so that the wait is not taken for an unavailable source.
                st.notBeforeMs = Math.max(st.notBeforeMs, throttledUntil);
            }
            if (st.notBeforeMs > now) {
                nextDue = Math.min(nextDue, st.notBeforeMs);
                continue;
            }
            int lastEpoch = st.lastFetchedEpoch;
            request.put(st.tp, new FetchPosition(st.sourceTopicId, st.fetchOffset, settings.partitionMaxBytes(),
                lastEpoch >= 0 ? Optional.of(lastEpoch) : Optional.empty()));
            requested.put(st.tp, st);
        }
        if (requested.isEmpty()) {
            long wait = nextDue == Long.MAX_VALUE ? 1000L : Math.max(1L, nextDue - now);
            synchronized (idle) {
                if (running && (assigned.isEmpty() || nextDue != Long.MAX_VALUE)) {
                    try {
                        idle.wait(Math.min(wait, 1000L));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        running = false;
                    }
                }
            }
            return;
        }
        SourceEndpoint.Outcome outcome = endpoint.fetch(request);
        if (outcome instanceof SourceEndpoint.Fetched fetched) {
            connectFailures = 0;
            context.throttle().record(fetched.partitions().values().stream()
                .mapToLong(pd -> pd.records().remaining()).sum());
            long fetchedMs = time.milliseconds();
            requested.values().forEach(st -> partitions.fetched(st, fetchedMs));
            handleResponse(fetched.partitions(), requested, request);
        } else if (outcome instanceof SourceEndpoint.SessionError sessionError) {
            handleSessionError(sessionError.error());
        } else if (outcome instanceof SourceEndpoint.Unreachable unreachable) {
            log.warn("Cannot fetch from source broker {} at {}:{} ({}); rediscovering the leaders of its {} partitions",
                node.id(), node.host(), node.port(), unreachable.why(), assigned.size());
            String problem = "cannot fetch from source broker " + node.id() + " at " + node.host() + ":" + node.port() + " ("
                + unreachable.why() + ")";
            assigned.values().forEach(st -> st.sourceProblem = problem);
            releaseAll(true);
        } else if (outcome instanceof SourceEndpoint.AuthenticationFailed failed) {
            log.warn("Cannot connect to source broker {} at {}:{} (authentication failed: {}); failing its {} partitions",
                node.id(), node.host(), node.port(), failed.cause().getMessage(), assigned.size());
            new ArrayList<>(assigned.values()).forEach(st -> partitions.failAuthentication(st, failed.cause()));
        }
        // Closed: shutting down.
    }

    /** How long the link throttle holds this fetcher back from now; counts the time held back once it ends. */
    private long throttleDelayMs(long now) {
        long delay = context.throttle().delayMs();
        if (delay > 0 && throttledSinceMs < 0) {
            throttledSinceMs = now;
        } else if (delay == 0 && throttledSinceMs >= 0) {
            partitions.metrics().fetchThrottleTime.record(now - throttledSinceMs);
            throttledSinceMs = -1L;
        }
        return delay;
    }

    private void handleSessionError(Errors top) {
        if (top == Errors.FETCH_SESSION_TOPIC_ID_ERROR || top == Errors.UNKNOWN_TOPIC_ID
            || top == Errors.INCONSISTENT_TOPIC_ID) {
            log.info("Fetch session with source broker {} failed with {}; re-checking source topics", node.id(), top);
            releaseAll(false);
        } else if (top != Errors.NONE && top != Errors.FETCH_SESSION_ID_NOT_FOUND
            && top != Errors.INVALID_FETCH_SESSION_EPOCH) {
            log.warn("Fetch from source broker {} failed with {}; retrying after {} ms", node.id(), top,
                settings.fetchBackoffMs());
            pause(settings.fetchBackoffMs());
        }
    }

    private void handleResponse(Map<TopicPartition, FetchedPartition> parts,
                                Map<TopicPartition, PartitionFetchState> requested,
                                Map<TopicPartition, FetchPosition> request) {
        for (Map.Entry<TopicPartition, FetchedPartition> e : parts.entrySet()) {
            PartitionFetchState st = requested.get(e.getKey());
            if (st == null || st.removed || assigned.get(st.tp) != st) {
                continue; // removed or moved while the request was in flight
            }
            try {
                handlePartition(st, e.getValue(), request.get(st.tp).fetchOffset());
            } catch (RuntimeException ex) {
                partitions.fail(st, MirrorError.UNKNOWN_SERVER_ERROR, "mirroring " + st.tp + " at source offset "
                    + st.fetchOffset + " failed: " + ex, ex);
            }
        }
    }

    private void handlePartition(PartitionFetchState st, FetchedPartition pd, long requestedOffset) {
        Errors error = pd.error();
        switch (error) {
            case NONE -> {
                st.lock.lock();
                try {
                    // Only the owner appends, and only data fetched at the partition's current offset.
                    if (!st.removed && assigned.get(st.tp) == st && st.fetchOffset == requestedOffset) {
                        handleData(st, pd);
                    }
                } finally {
                    st.lock.unlock();
                }
            }
            case OFFSET_OUT_OF_RANGE -> {
                log.info("Source offset {} of {} is out of range; checking the source log start and end",
                    st.fetchOffset, st.tp);
                release(st, true);
            }
            case NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
                 REPLICA_NOT_AVAILABLE, KAFKA_STORAGE_ERROR, OFFSET_NOT_AVAILABLE -> {
                log.info("Source broker {} answered {} for {}; rediscovering its leader", node.id(), error, st.tp);
                release(st, false);
            }
            default -> handleOtherError(st, error);
        }
    }

    private void handleOtherError(PartitionFetchState st, Errors error) {
        switch (error) {
            case UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, INCONSISTENT_TOPIC_ID -> {
                // Deleted or recreated, or only this broker's metadata lags: the coordinator checks the topic id.
                log.info("Source broker {} answered {} for {}; checking the source topic", node.id(), error, st.tp);
                release(st, false);
            }
            case TOPIC_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED -> partitions.fail(st,
                MirrorError.UNKNOWN_SERVER_ERROR, error.name() + ": the mirror's source principal may not read "
                    + st.tp.topic() + " on the source cluster (grant it READ and DESCRIBE)", null);
            case CORRUPT_MESSAGE -> partitions.fail(st, MirrorError.UNKNOWN_SERVER_ERROR,
                "the source reported a corrupt batch in " + st.tp + " at offset " + st.fetchOffset, null);
            default -> {
                long backoff = settings.partitionBackoffMs(++st.errorCount);
                log.warn("Fetch of {} at source offset {} from source broker {} failed with {}; retrying in {} ms",
                    st.tp, st.fetchOffset, node.id(), error, backoff);
                st.notBeforeMs = time.milliseconds() + backoff;
            }
        }
    }

    private void handleData(PartitionFetchState st, FetchedPartition pd) {
        Optional<FetchedPartition.EpochEnd> diverging = pd.divergingEpoch();
        if (diverging.isPresent()) {
            FetchedPartition.EpochEnd d = diverging.get();
            partitions.diverged(st, d.epoch(), d.endOffset());
            return;
        }
        long sourceEnd = settings.readCommitted() && pd.lastStableOffset() >= 0 ? pd.lastStableOffset() : pd.highWatermark();
        st.sourceEndOffset = sourceEnd;
        st.errorCount = 0;
        st.sourceLogStartOffset = Math.max(st.sourceLogStartOffset, pd.logStartOffset());
        st.sourceHighWatermark = pd.highWatermark();
        if (!followSourceLogStart(st)) {
            return; // dropped or failed
        }
        ByteBuffer records = pd.records();
        if (!records.hasRemaining()) {
            context.listener().onSourceEndOffset(st.tp, sourceEnd);
            reportCaughtUp(st, sourceEnd);
            return;
        }
        bytesSensor.record(records.remaining());
        long fetchOffset = st.fetchOffset;
        SourceBatches batches = SourceBatches.split(records, fetchOffset, st.lastFetchedEpoch);
        boolean progressed = false;
        for (SourceBatches.Run run : batches.runs()) {
            if (!append(st, run, sourceEnd)) {
                return; // dropped or failed
            }
            progressed = true;
        }
        if (batches.corruption() != null) {
            failOnSourceData(st, batches.corruptionError(), batches.corruption());
            return;
        }
        if (!progressed) {
            if (batches.partialBytes() > 0 && pd.highWatermark() > fetchOffset) {
                long backoff = settings.partitionBackoffMs(++st.errorCount);
                log.warn("Source batch of {} at offset {} is larger than {} = {} bytes; raise it. Retrying in {} ms",
                    st.tp, fetchOffset, MirrorConfig.FETCH_PARTITION_MAX_BYTES,
                    settings.partitionMaxBytes(), backoff);
                st.notBeforeMs = time.milliseconds() + backoff;
            }
            context.listener().onSourceEndOffset(st.tp, sourceEnd);
            reportCaughtUp(st, sourceEnd);
            return;
        }
        reportOldestUnmirrored(st, UnmirroredRecords.afterAppend(st.fetchOffset, sourceEnd, batches.lastTimestamp()));
    }

    /** Without data appended, only reaching the source's end changes what is unmirrored (the next data says how old it is). */
    private void reportCaughtUp(PartitionFetchState st, long sourceEnd) {
        if (st.fetchOffset >= sourceEnd) {
            reportOldestUnmirrored(st, PartitionStateRecord.NOTHING_UNMIRRORED);
        }
    }

    private void reportOldestUnmirrored(PartitionFetchState st, long timestamp) {
        if (st.reportedOldestUnmirrored != timestamp) {
            st.reportedOldestUnmirrored = timestamp;
            context.listener().onOldestUnmirrored(st.tp, timestamp);
        }
    }

    /**
     * Moves the destination log start up to {@code target} as a DeleteRecords does, which Kafka allows up to the high
     * watermark; or, when the source holds no record at or past {@code target} (its high watermark is there, where this
     * partition fetches) and the destination holds none, starts the empty destination log there: a source whose records
     * were all deleted has the same offsets on the destination before any record arrives. Call holding {@code st.lock}.
     */
    private boolean moveLogStart(PartitionFetchState st, long target) throws NotLeaderException {
        PartitionAppender appender = context.appender();
        if (appender.advanceLogStartOffset(st.tp, st.destLeaderEpoch, target)) {
            return true;
        }
        if (st.sourceHighWatermark == target && st.fetchOffset == target && appender.startEmptyLogAt(st.tp, st.destLeaderEpoch, target)) {
            log.info("{}: the source's log starts at its end, {} (every record deleted); the empty destination log starts there",
                st.tp, target);
            return true;
        }
        return false;
    }

    /**
     * Moves the destination log start up to the source's, as far as {@link HeldLogStarts} lets it: a move of the source's
     * log start (DeleteRecords, retention on the source) is held for the mirror's hold time from when it was first seen,
     * unless it deletes nothing here; a held move is reported to the listener. Where the destination has not replicated
     * that far yet, the move is tried again on the next round. False if the partition is gone (removed, dropped, failed).
     */
    private boolean followSourceLogStart(PartitionFetchState st) {
        long now = time.milliseconds();
        long sourceLogStart = st.sourceLogStartOffset;
        // Nothing is appended below the fetch offset: a log that was empty holds nothing up to it until the first append.
        long free = Math.min(sourceLogStart, Math.min(st.freeLogStartUpTo, st.fetchOffset));
        HeldDecision decision = st.heldDecision;
        HeldLogStarts held = st.heldLogStarts.observe(sourceLogStart, Math.max(st.destLogStartOffset, free), now).decided(decision);
        long target = Math.max(free, held.dueOffset(now, settings.logStartHoldMs(), decision));
        if (target <= st.destLogStartOffset && held == st.heldLogStarts) {
            return true;
        }
        st.lock.lock();
        try {
            if (st.removed || assigned.get(st.tp) != st) {
                return false;
            }
            if (target > st.destLogStartOffset && moveLogStart(st, target)) {
                if (target > free) {
                    log.info("{}: destination log start moved from {} to {}, following the source's (its hold of {} ms passed, "
                        + "or an operator applied it)", st.tp, st.destLogStartOffset, target, settings.logStartHoldMs());
                }
                st.destLogStartOffset = target;
                held = held.followedTo(target);
            }
            if (!held.equals(st.heldLogStarts)) {
                if (held.highestOffset() > st.heldLogStarts.highestOffset()) {
                    log.warn("{}: the source's log start moved to {} (DeleteRecords or retention on the source); the destination "
                        + "keeps offsets from {} readable and follows at {} ({}={} ms); apply it now with kafka-cluster-mirrors.sh "
                        + "--apply-held, or keep the records with --reject-held", st.tp, held.highestOffset(), st.destLogStartOffset,
                        Instant.ofEpochMilli(held.entries().get(held.entries().size() - 1).appliesAtMs(settings.logStartHoldMs())),
                        MirrorConfig.SOURCE_DESTRUCTIVE_HOLD_MS, settings.logStartHoldMs());
                } else if (held.entries().size() > 0 && held.entries().get(0).rejected() && !st.heldLogStarts.entries().isEmpty()
                        && !st.heldLogStarts.entries().get(0).equals(held.entries().get(0))) {
                    log.info("{}: an operator rejected the source's log start moves up to {}; the destination keeps offsets from {}",
                        st.tp, held.entries().get(0).offset(), st.destLogStartOffset);
                }
                st.heldLogStarts = held;
                context.listener().onLogStartHeld(st.tp, held);
            }
            return true;
        } catch (NotLeaderException e) {
            partitions.drop(st, e.getMessage());
            return false;
        } finally {
            st.lock.unlock();
        }
    }

    /** Appends one run (caller holds the partition's lock); false if the partition is gone (removed, dropped, failed). */
    private boolean append(PartitionFetchState st, SourceBatches.Run run, long sourceEnd) {
        st.lock.lock();
        try {
            if (st.removed || assigned.get(st.tp) != st) {
                return false;
            }
            AppendResult result;
            try {
                result = context.appender().append(st.tp, st.destLeaderEpoch, run.records());
                // The first record appended to an empty log: moving the log start up to it deletes nothing, nor up to the
                // source's log start if that lies inside the first batch (Kafka returns batches whole): the records below it
                // were deleted on the source before the destination had any.
                st.freeLogStartUpTo = Math.min(st.freeLogStartUpTo, Math.max(result.firstOffset(), st.sourceLogStartOffset));
                if (run.barrierOffset() >= 0) {
                    // Every barrier clears the producers before it wherever it is appended (failback, chains).
                    context.appender().removeProducersBefore(st.tp, st.destLeaderEpoch, run.barrierOffset());
                }
            } catch (NotLeaderException e) {
                partitions.drop(st, e.getMessage());
                return false;
            } catch (CorruptRecordException e) {
                failCorrupt(st, run, sourceEnd, e);
                return false;
            } catch (RuntimeException e) {
                partitions.fail(st, MirrorError.UNKNOWN_SERVER_ERROR, "append of source offsets " + run.baseOffset()
                    + ".." + run.lastOffset() + " to " + st.tp + " at destination leader epoch " + st.destLeaderEpoch
                    + " failed: " + e, e);
                return false;
            }
            if (result.lastOffset() >= 0 && result.lastOffset() != run.lastOffset()) {
                log.warn("Append to {} reported last offset {} for source batches ending at {}", st.tp,
                    result.lastOffset(), run.lastOffset());
            }
            if (run.barrierOffset() >= 0) {
                context.listener().onBarrier(st.tp, run.barrierOffset());
            }
            st.fetchOffset = run.lastOffset() + 1;
            st.lastFetchedEpoch = run.sourceEpoch();
            partitions.recordAppend(run.batchCount(), run.recordCount());
            context.listener().onProgress(st.tp, run.lastOffset(), run.sourceEpoch(), run.newEpochStart(), sourceEnd);
            return true;
        } finally {
            st.lock.unlock();
        }
    }

    /**
     * Kafka's append refused {@code run} because a batch's CRC does not match (it writes nothing then): appends the
     * batches before that one and fails the partition, naming it, as for any corrupt source data (caller holds the lock).
     */
    private void failCorrupt(PartitionFetchState st, SourceBatches.Run run, long sourceEnd, CorruptRecordException e) {
        SourceBatches.Corruption corruption = SourceBatches.locateCorruption(run);
        if (corruption.validPrefix().isPresent() && !append(st, corruption.validPrefix().get(), sourceEnd)) {
            return; // dropped or failed
        }
        String what = corruption.description() != null ? corruption.description()
            : "corrupt batch in offsets " + run.baseOffset() + ".." + run.lastOffset() + ": " + e.getMessage();
        failOnSourceData(st, MirrorError.CORRUPT_MESSAGE, what);
    }

    /** Fails the partition on bad source data: it stays mirrored up to the batch before it. */
    private void failOnSourceData(PartitionFetchState st, MirrorError error, String what) {
        partitions.fail(st, error, "source " + what + " in " + st.tp + " (mirrored up to offset " + (st.fetchOffset - 1)
            + "); nothing after it was appended", null);
    }

    private void release(PartitionFetchState st, boolean checkOffsets) {
        unassign(st);
        context.rediscovery().rediscover(st, checkOffsets, 0L);
    }

    /** Hands every partition back to the coordinator (after a connection failure: leaders may have moved). */
    private void releaseAll(boolean withBackoff) {
        long delay = withBackoff ? settings.partitionBackoffMs(++connectFailures) : 0L;
        for (PartitionFetchState st : new ArrayList<>(assigned.values())) {
            unassign(st);
            context.rediscovery().rediscover(st, false, delay);
        }
    }

    private void pause(long ms) {
        synchronized (idle) {
            if (!running) {
                return;
            }
            try {
                idle.wait(Math.max(1L, ms));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                running = false;
            }
        }
    }
}
