package io.clustermirror.broker.bridge;

import io.clustermirror.broker.node.InjectedProductBug;
import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredBatches;

import kafka.cluster.Partition;
import kafka.server.BrokerServer;
import kafka.server.ReplicaManager;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.image.loader.MetadataLoader;
import org.apache.kafka.server.purgatory.TopicPartitionOperationKey;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The extension's only way into a running stock Kafka broker ({@code kafka.server.BrokerServer}).
 * Everything here that touches Kafka's Scala classes or uses reflection stays in this package, so a
 * Kafka upgrade is a change in one place.
 *
 * <p>Thread-safety: every method may be called from any thread. The handle keeps no state of its own
 * apart from the wrapped broker; after a broker restart on the same {@code BrokerServer} object the
 * handle still works, but leadership listeners must be installed again (a restart builds a new
 * metadata loader).
 */
public final class BrokerHandle implements LocalReplicas {
    private static final Logger log = LoggerFactory.getLogger(BrokerHandle.class);

    /** Leader-only semantics: never wait for followers, never fail on a shrunk ISR. */
    private static final int LEADER_ONLY_ACKS = 1;
    /** Test-only: a chaos run's product-bug agent leaves mirrored producers in place ({@link InjectedProductBug}); never in production. */
    private static final boolean SKIP_PRODUCER_STATE_RESET =
        InjectedProductBug.injected().map(InjectedProductBug::skipsProducerStateReset).orElse(false);

    private final BrokerServer broker;

    private BrokerHandle(BrokerServer broker) {
        this.broker = broker;
    }

    /** Wraps a {@code kafka.server.BrokerServer} (typed Object so callers need no Scala types). */
    public static BrokerHandle of(Object brokerServer) {
        Objects.requireNonNull(brokerServer, "brokerServer");
        if (!(brokerServer instanceof BrokerServer)) {
            throw new IllegalArgumentException("not a kafka.server.BrokerServer: " + brokerServer.getClass().getName());
        }
        return new BrokerHandle((BrokerServer) brokerServer);
    }

    /**
     * The broker inside a {@code kafka.server.KafkaRaftServer} (empty for a controller-only node). The
     * broker is a private field of that Scala class, so this uses reflection.
     */
    public static Optional<BrokerHandle> fromRaftServer(Object kafkaRaftServer) {
        Objects.requireNonNull(kafkaRaftServer, "kafkaRaftServer");
        try {
            Class<?> c = kafkaRaftServer instanceof kafka.server.KafkaRaftServer
                ? kafka.server.KafkaRaftServer.class : kafkaRaftServer.getClass();
            Field f = c.getDeclaredField("broker"); // private final scala.Option<BrokerServer> (javap-checked)
            f.setAccessible(true);
            Object opt = f.get(kafkaRaftServer);
            if (!(opt instanceof scala.Option<?> o)) {
                throw new IllegalStateException("unexpected type of KafkaRaftServer.broker: "
                    + (opt == null ? "null" : opt.getClass().getName()));
            }
            return o.isDefined() ? Optional.of(of(o.get())) : Optional.empty();
        } catch (NoSuchFieldException | IllegalAccessException e) {
            throw new IllegalStateException("cannot reach the broker of " + kafkaRaftServer.getClass().getName()
                + " (Kafka internals changed?)", e);
        }
    }

    /** The wrapped {@code kafka.server.BrokerServer}. */
    public Object brokerServer() {
        return broker;
    }

    @Override
    public int nodeId() {
        return broker.config().nodeId();
    }

    public String clusterId() {
        return broker.clusterId();
    }

    /** {@code host:port} of this broker's inter-broker listener, for the extension's clients to its own cluster. */
    public String localBootstrapServers() {
        ListenerName name = broker.config().interBrokerListenerName();
        int port = broker.boundPort(name);
        String host = ServerShapes.advertisedHost(broker.config(), name).orElse(null);
        if (host == null || host.isBlank() || host.equals("0.0.0.0") || host.equals("::")) {
            host = "localhost";
        }
        return host + ":" + port;
    }

    /** The broker's original configs (for {@code cluster.mirror.*} settings). Contains secrets: never log it. */
    public Map<String, Object> brokerConfigs() {
        return broker.config().originals();
    }

    /** The directory of this node's metadata log (with its identity, {@code meta.properties}): it lives as long as the node. */
    public java.nio.file.Path metadataLogDir() {
        return java.nio.file.Path.of(broker.config().metadataLogDir());
    }

    /** Kafka's metrics registry of this broker (reported through JMX). */
    public Metrics metrics() {
        return broker.metrics();
    }

    /**
     * Installs a metadata publisher that reports this broker's leadership changes. The first call to the
     * listener lists every local partition; later calls list changes (leader, follower, deleted).
     * Uninstall with {@link #removeLeadershipListener(String)} (or just let a broker shutdown close it).
     *
     * @return completes when the publisher is installed (its first call may come a little later)
     */
    public CompletableFuture<Void> installLeadershipListener(String name, LeadershipListener listener) {
        MetadataLoader loader = broker.sharedServer().loader();
        if (loader == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("broker " + nodeId() + " is not running"));
        }
        LeadershipPublisher p = new LeadershipPublisher(name, nodeId(), listener);
        if (!LeadershipPublisher.reserve(loader, p)) {
            return CompletableFuture.failedFuture(new IllegalStateException("a leadership listener named '" + name
                + "' is already installed on broker " + nodeId()));
        }
        return loader.installPublishers(java.util.List.of(p)).whenComplete((v, t) -> {
            if (t != null) {
                LeadershipPublisher.unregister(loader, p.name());
            }
        });
    }

    /**
     * Removes a listener installed with {@link #installLeadershipListener}; completes when it is removed.
     * A no-op if it is not installed on the broker's current metadata loader (e.g. after a restart,
     * which drops all publishers).
     */
    public CompletableFuture<Void> removeLeadershipListener(String name) {
        MetadataLoader loader = broker.sharedServer().loader();
        if (loader == null) {
            return CompletableFuture.completedFuture(null);
        }
        LeadershipPublisher p = LeadershipPublisher.unregister(loader, LeadershipPublisher.loaderName(name));
        if (p == null) {
            return CompletableFuture.completedFuture(null);
        }
        return loader.removeAndClosePublisher(p);
    }

    /** The destination topic id, if the topic exists. */
    public Optional<Uuid> topicId(String topic) {
        return ServerShapes.topicId(broker, topic);
    }

    /** The local log's state if this broker is the partition's leader. */
    @Override
    public Optional<LeaderLogState> leaderLogState(TopicPartition partition) {
        Optional<Partition> p = onlinePartition(partition);
        if (p.isEmpty()) {
            return Optional.empty();
        }
        Optional<LocalLog> leaderLog = LocalLog.leaderOf(p.get());
        if (leaderLog.isEmpty()) {
            return Optional.empty();
        }
        LocalLog l = leaderLog.get();
        return Optional.of(new LeaderLogState(p.get().getLeaderEpoch(), l.logStartOffset(), l.logEndOffset(),
            l.highWatermark(), l.lastStableOffset()));
    }

    /** Log end offset of the local replica (leader or follower), if this broker hosts one. */
    @Override
    public java.util.OptionalLong localLogEndOffset(TopicPartition partition) {
        return localLog(partition).map(l -> java.util.OptionalLong.of(l.logEndOffset())).orElse(java.util.OptionalLong.empty());
    }

    /**
     * A copy of the local replica's batches (leader or follower) from the batch containing
     * {@code startOffset}, up to the log end and about {@code maxBytes}; for verification and tests.
     * Empty records if the broker hosts no replica.
     */
    @Override
    public List<StoredBatch> localRecords(TopicPartition partition, long startOffset, int maxBytes) {
        Optional<LocalLog> log = localLog(partition);
        if (log.isEmpty()) {
            return List.of();
        }
        try {
            return StoredBatches.of(ServerShapes.bytesOf(log.get().read(startOffset, maxBytes,
                org.apache.kafka.server.storage.log.FetchIsolation.LOG_END, true)));
        } catch (java.io.UncheckedIOException e) {
            throw new org.apache.kafka.common.KafkaException("cannot read " + partition + " on broker " + nodeId(), e);
        }
    }

    /**
     * Appends source batches as-is at their own offsets on the local leader: stamps each batch's
     * partitionLeaderEpoch with {@code leaderEpoch} (outside the CRC), appends with the RAFT_LEADER origin
     * (no re-validation, offsets, compression and producer fields kept) and wakes waiting followers.
     * Leader-only: it does not wait for followers. The caller must pass whole, CRC-checked batches,
     * since RAFT_LEADER skips Kafka's own validation. The batches are modified in place (epoch).
     *
     * @throws NotLeaderException if this broker is not the leader at {@code leaderEpoch}
     */
    @Override
    public AppendResult appendAsLeader(TopicPartition partition, int leaderEpoch, ByteBuffer batches)
            throws NotLeaderException {
        Partition p = onlinePartition(partition).orElseThrow(() -> new NotLeaderException(
            "partition " + partition + " is not online on broker " + nodeId()));
        if (p.leaderLogIfLocal().isEmpty()) {
            throw new NotLeaderException("broker " + nodeId() + " is not the leader of " + partition);
        }
        int current = p.getLeaderEpoch();
        if (current != leaderEpoch) {
            throw new NotLeaderException("leader epoch of " + partition + " on broker " + nodeId() + " is " + current
                + ", not " + leaderEpoch);
        }
        if (!batches.hasRemaining()) {
            return new AppendResult(-1L, -1L, LocalLog.orException(p).logEndOffset());
        }
        for (StoredBatch b : StoredBatches.of(batches)) {
            b.setPartitionLeaderEpoch(leaderEpoch);
        }
        LogAppendInfo info;
        try {
            // Partition.appendRecordsToLeader re-checks leadership and the epoch under the partition's
            // leader/ISR lock, and RAFT_LEADER rejects any batch whose epoch is not the current one, so a
            // stale leader (or an epoch bump racing with us) is fenced here.
            info = ServerShapes.appendToLeader(p, batches.slice(), LEADER_ONLY_ACKS);
        } catch (NotLeaderOrFollowerException e) {
            throw new NotLeaderException("broker " + nodeId() + " is no longer the leader of " + partition + ": "
                + e.getMessage());
        } catch (InvalidRecordException e) {
            int now = p.getLeaderEpoch();
            if (now != leaderEpoch || p.leaderLogIfLocal().isEmpty()) {
                throw new NotLeaderException("leader epoch of " + partition + " changed from " + leaderEpoch + " to "
                    + now + " during the append");
            }
            throw e;
        }
        wakeDelayedOperations(partition, info);
        return new AppendResult(info.firstOffset(), info.lastOffset(), LocalLog.leaderOf(p)
            .map(LocalLog::logEndOffset).orElse(info.lastOffset() + 1));
    }

    /**
     * Moves the local leader's log start offset up to {@code offset}, as a DeleteRecords would, so that the
     * destination follows the source's log start (retention, deleteRecords); followers take it from the
     * leader's fetch responses. Kafka allows this only up to the high watermark (an empty log whose source starts past
     * its end: {@link #startEmptyLeaderLogAt}).
     *
     * @return true if the log start is now at least {@code offset}; false if the high watermark is still below
     *         it (call again once more was replicated)
     * @throws NotLeaderException if this broker is not the leader at {@code leaderEpoch}
     */
    public boolean advanceLogStartOffset(TopicPartition partition, int leaderEpoch, long offset) throws NotLeaderException {
        Partition p = onlinePartition(partition).orElseThrow(() -> new NotLeaderException(
            "partition " + partition + " is not online on broker " + nodeId()));
        Optional<LocalLog> leaderLog = LocalLog.leaderOf(p);
        if (leaderLog.isEmpty() || p.getLeaderEpoch() != leaderEpoch) {
            throw new NotLeaderException("broker " + nodeId() + " is not the leader of " + partition + " at epoch " + leaderEpoch);
        }
        LocalLog log = leaderLog.get();
        if (log.logStartOffset() >= offset) {
            return true;
        }
        if (log.highWatermark() < offset) {
            return false;
        }
        log.incrementLogStartOffset(offset, LogStartOffsetIncrementReason.ClientRecordDeletion);
        return true;
    }

    /**
     * Starts the local leader's log at {@code offset} if it holds no record and ends below it, as Kafka's follower starts
     * its log when its leader's starts past its end: for a source that holds no record at or past {@code offset} either
     * (all its records deleted), so that the destination's offsets are the source's before any record arrives. The
     * followers do the same when they next fetch: the leader answers their offset as out of range, below its log start.
     * Under the partition's leader/ISR write lock, re-checked, so that no append or leadership change interleaves.
     *
     * @return true if the log now starts at or past {@code offset}; false if it holds records below it
     * @throws NotLeaderException if this broker is not the leader at {@code leaderEpoch}
     */
    public boolean startEmptyLeaderLogAt(TopicPartition partition, int leaderEpoch, long offset) throws NotLeaderException {
        Partition p = onlinePartition(partition).orElseThrow(() -> new NotLeaderException(
            "partition " + partition + " is not online on broker " + nodeId()));
        java.util.concurrent.locks.ReentrantReadWriteLock leaderIsr = ServerShapes.leaderIsrUpdateLock(p);
        leaderIsr.writeLock().lock();
        try {
            Optional<LocalLog> leaderLog = LocalLog.leaderOf(p);
            if (leaderLog.isEmpty() || p.getLeaderEpoch() != leaderEpoch) {
                throw new NotLeaderException("broker " + nodeId() + " is not the leader of " + partition + " at epoch " + leaderEpoch);
            }
            LocalLog log = leaderLog.get();
            if (log.logStartOffset() != log.logEndOffset() || log.logEndOffset() >= offset) {
                return log.logStartOffset() >= offset;
            }
            log.startEmptyAt(offset, leaderEpoch);
            return true;
        } finally {
            leaderIsr.writeLock().unlock();
        }
    }

    /**
     * Truncates the local leader's log to {@code offset} (the first offset removed). Followers with data beyond
     * it truncate too when they next fetch: the leader then reports their fetch position as diverging from
     * its current epoch, which now ends at {@code offset}. See {@link #inSyncFollowerLogEndOffsets}.
     *
     * @throws NotLeaderException if this broker is not the leader at {@code leaderEpoch}
     */
    @Override
    public void truncateLeaderTo(TopicPartition partition, int leaderEpoch, long offset) throws NotLeaderException {
        Partition p = leaderAt(partition, leaderEpoch);
        java.util.concurrent.locks.ReentrantReadWriteLock leaderIsr = ServerShapes.leaderIsrUpdateLock(p);
        // Under the partition's leader/ISR write lock, as Kafka's makeLeader sets the epoch's start: no leadership change
        // interleaves (truncateTo takes the read lock, which the write holder may).
        leaderIsr.writeLock().lock();
        try {
            if (p.leaderLogIfLocal().isEmpty() || p.getLeaderEpoch() != leaderEpoch) {
                throw new NotLeaderException("broker " + nodeId() + " is not the leader of " + partition + " at epoch " + leaderEpoch);
            }
            p.truncateTo(offset, false);
            // The leader remembers where its epoch began (its log end when it was elected) and answers clients' ListOffsets
            // with OFFSET_NOT_AVAILABLE, and keeps followers out of the ISR, until the high watermark reaches it. A cut
            // below that start would hold both until new records filled the gap: the epoch now begins at the cut.
            scala.Option<Object> epochStart = p.leaderEpochStartOffsetOpt();
            if (epochStart.isDefined() && (Long) epochStart.get() > offset) {
                p.leaderEpochStartOffsetOpt_$eq(scala.Option.apply((Object) offset));
            }
        } finally {
            leaderIsr.writeLock().unlock();
        }
    }

    /**
     * Where the local replica's epoch {@code epoch} ends: the start offset of the next higher epoch in its
     * leader-epoch cache, or its log end if {@code epoch} is its latest. Empty if the cache does not know
     * the epoch or anything below it. Failback uses it to find where this log and a mirror of it diverge.
     */
    @Override
    public java.util.OptionalLong endOffsetForEpoch(TopicPartition partition, int epoch) {
        return localLog(partition).map(l -> l.endOffsetForEpoch(epoch)).orElse(java.util.OptionalLong.empty());
    }

    /**
     * Whether the local replica holds a MIRROR_PID_RESET barrier at {@code offset}; empty if its log does not
     * reach that offset (yet).
     */
    @Override
    public Optional<Boolean> holdsBarrierAt(TopicPartition partition, long offset) {
        Optional<LocalLog> log = localLog(partition);
        if (log.isEmpty() || log.get().logEndOffset() <= offset || log.get().logStartOffset() > offset) {
            return Optional.empty();
        }
        for (StoredBatch b : localRecords(partition, offset, 64 * 1024)) {
            if (b.baseOffset() <= offset && offset <= b.lastOffset()) {
                return Optional.of(BarrierBatch.isBarrier(b));
            }
        }
        return Optional.of(false);
    }

    /**
     * Truncates a local follower replica to {@code offset} and restarts its replica fetcher from there, as Kafka
     * does when a replica becomes a follower. For a replica that missed a truncation of its leader (it was out of
     * the ISR during a stop): Kafka's own divergence check cannot see it, because the leader epoch did not change.
     * Holds the replica manager's state-change lock, so no leadership change interleaves.
     *
     * @return false if this broker leads the partition or its leader is not known or not alive
     */
    @Override
    public boolean truncateFollowerTo(TopicPartition partition, long offset) {
        ReplicaManager rm = broker.replicaManager();
        synchronized (ServerShapes.replicaStateChangeLock(rm)) {
            Optional<Partition> p = onlinePartition(partition);
            if (p.isEmpty() || p.get().leaderLogIfLocal().isDefined() || p.get().leaderReplicaIdOpt().isEmpty()) {
                return false;
            }
            int leaderId = (Integer) p.get().leaderReplicaIdOpt().get();
            Optional<org.apache.kafka.common.Node> leader = ServerShapes.aliveBrokerNode(broker, leaderId,
                broker.config().interBrokerListenerName());
            if (leader.isEmpty()) {
                return false;
            }
            scala.collection.immutable.Set<TopicPartition> partitions =
                scala.jdk.javaapi.CollectionConverters.asScala(java.util.Set.of(partition)).toSet();
            rm.replicaFetcherManager().removeFetcherForPartitions(partitions);
            p.get().truncateTo(offset, false);
            LocalLog log = LocalLog.orException(p.get());
            kafka.server.InitialFetchState start = new kafka.server.InitialFetchState(
                scala.Option.apply(log.topicId().orElse(null)), new org.apache.kafka.server.network.BrokerEndPoint(leader.get().id(),
                leader.get().host(), leader.get().port()), p.get().getLeaderEpoch(), log.logEndOffset());
            rm.replicaFetcherManager().addFetcherForPartitions(
                scala.collection.immutable.Map$.MODULE$.<TopicPartition, kafka.server.InitialFetchState>empty().updated(partition, start));
            return true;
        }
    }

    /**
     * The log end offsets of the in-sync followers as the leader last saw them in their fetches (the leader's
     * own replica excluded).
     *
     * @throws NotLeaderException if this broker is not the leader at {@code leaderEpoch}
     */
    @Override
    public Map<Integer, Long> inSyncFollowerLogEndOffsets(TopicPartition partition, int leaderEpoch) throws NotLeaderException {
        Partition p = leaderAt(partition, leaderEpoch);
        scala.collection.immutable.Set<Object> isr = p.inSyncReplicaIds();
        Map<Integer, Long> ends = ServerShapes.remoteLogEndOffsets(p);
        ends.keySet().removeIf(id -> !isr.contains(id));
        return ends;
    }

    /**
     * The partition's replica assignment as its leader at {@code leaderEpoch} knows it.
     *
     * @throws NotLeaderException if this broker is not the leader at {@code leaderEpoch}
     */
    @Override
    public ReplicaAssignment replicaAssignment(TopicPartition partition, int leaderEpoch) throws NotLeaderException {
        Partition p = leaderAt(partition, leaderEpoch);
        return new ReplicaAssignment(ServerShapes.assignedReplicas(p), p.isReassigning());
    }

    /**
     * Removes from the local replica's producer state (leader or follower) every producer whose last write
     * precedes {@code barrierOffset}: after a MIRROR_PID_RESET barrier those entries are mirrored state that
     * must not fence or reorder local producers. Producers that wrote after the barrier are kept, with their
     * open transactions. Runs under the log's lock, then snapshots the state at the log end so that a restart
     * loads the cleaned state. Idempotent: returns the number of producers removed, 0 if none was stale.
     */
    @Override
    public int removeProducersBefore(TopicPartition partition, long barrierOffset) {
        if (SKIP_PRODUCER_STATE_RESET) {
            return 0; // test-only: the bug a chaos run must detect
        }
        Optional<LocalLog> local = localLog(partition);
        if (local.isEmpty()) {
            return 0;
        }
        LocalLog log = local.get();
        synchronized (log.lock()) {
            ProducerStateManager psm = log.producerStateManager();
            java.util.List<ProducerStateEntry> kept = new java.util.ArrayList<>();
            int stale = 0;
            for (ProducerStateEntry e : psm.activeProducers().values()) {
                if (e.lastDataOffset() < barrierOffset) {
                    stale++;
                } else {
                    kept.add(e);
                }
            }
            if (stale == 0) {
                return 0;
            }
            try {
                // No "remove these producers" exists: reset the whole map at the log end, then load back the
                // producers that wrote after the barrier (loadProducerEntry restores their open transactions).
                psm.truncateFullyAndStartAt(log.logEndOffset());
                kept.forEach(psm::loadProducerEntry);
                psm.takeSnapshot();
                log.updateFirstUnstableOffset();
            } catch (java.io.IOException | java.io.UncheckedIOException e) {
                throw new org.apache.kafka.common.KafkaException("cannot reset the producer state of " + partition
                    + " on broker " + nodeId(), e);
            }
            return stale;
        }
    }

    @Override
    public Map<Long, Long> openTransactionStarts(TopicPartition partition, int leaderEpoch) throws NotLeaderException {
        LocalLog log = LocalLog.orException(leaderAt(partition, leaderEpoch));
        Map<Long, Long> starts = new java.util.TreeMap<>();
        synchronized (log.lock()) {
            log.producerStateManager().activeProducers().forEach((id, e) ->
                e.currentTxnFirstOffset().ifPresent(first -> starts.put(id, first)));
        }
        return starts;
    }

    /**
     * The producer epoch of every producer in the local replica's producer state (leader or follower), by producer
     * id; empty if the broker hosts no replica. Read-only, for verification and tests.
     */
    public Map<Long, Short> producerEpochs(TopicPartition partition) {
        Optional<LocalLog> local = localLog(partition);
        if (local.isEmpty()) {
            return Map.of();
        }
        LocalLog log = local.get();
        Map<Long, Short> epochs = new java.util.TreeMap<>();
        synchronized (log.lock()) {
            log.producerStateManager().activeProducers().forEach((id, e) -> epochs.put(id, e.producerEpoch()));
        }
        return epochs;
    }

    private Partition leaderAt(TopicPartition partition, int leaderEpoch) throws NotLeaderException {
        Partition p = onlinePartition(partition).orElseThrow(() -> new NotLeaderException(
            "partition " + partition + " is not online on broker " + nodeId()));
        if (p.leaderLogIfLocal().isEmpty() || p.getLeaderEpoch() != leaderEpoch) {
            throw new NotLeaderException("broker " + nodeId() + " is not the leader of " + partition + " at epoch " + leaderEpoch);
        }
        return p;
    }

    /** The local replica's log (leader or follower), if this broker hosts one. */
    private Optional<LocalLog> localLog(TopicPartition partition) {
        return onlinePartition(partition).flatMap(LocalLog::of);
    }

    /**
     * Does what {@code ReplicaManager.appendRecordsToLeader} queues after a produce: completes delayed
     * operations for the partition, so followers in their long poll get the new data at once and
     * consumers waiting for the HW are answered. Without this they wait for their fetch timeout.
     * Runs on the caller's thread, holding no locks.
     */
    private void wakeDelayedOperations(TopicPartition partition, LogAppendInfo info) {
        ReplicaManager rm = broker.replicaManager();
        TopicPartitionOperationKey key = new TopicPartitionOperationKey(partition);
        try {
            switch (info.leaderHwChange()) {
                case INCREASED -> {
                    rm.delayedProducePurgatory().checkAndComplete(key);
                    rm.delayedFetchPurgatory().checkAndComplete(key);
                    rm.delayedDeleteRecordsPurgatory().checkAndComplete(key);
                }
                case SAME -> rm.delayedFetchPurgatory().checkAndComplete(key);
                default -> {
                }
            }
        } catch (RuntimeException e) {
            log.warn("Could not complete delayed operations after a mirror append to {}", partition, e);
        }
    }

    public boolean isShutdown() {
        return broker.isShutdown();
    }

    /** Starts the wrapped broker (after a {@link #shutdown()}: Kafka allows a restart on the same object). */
    public void startup() {
        broker.startup();
    }

    /** Shuts the wrapped broker down (controlled shutdown first). */
    public void shutdown() {
        broker.shutdown();
    }

    public void awaitShutdown() {
        broker.awaitShutdown();
    }

    private Optional<Partition> onlinePartition(TopicPartition tp) {
        ReplicaManager rm = broker.replicaManager();
        if (rm == null) {
            return Optional.empty();
        }
        scala.Option<Partition> p = rm.onlinePartition(tp);
        return p.isDefined() ? Optional.of(p.get()) : Optional.empty();
    }
}
