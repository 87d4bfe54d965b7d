package io.clustermirror.broker.partition;

import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.broker.bridge.BrokerHandle;
import io.clustermirror.broker.bridge.LocalReplicas;
import io.clustermirror.broker.fetch.ClusterLogReader;
import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.broker.bridge.LeaderChange;
import io.clustermirror.broker.bridge.LeaderLogState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Keeps mirrored producer state out of every local replica of a partition whose log holds a MIRROR_PID_RESET
 * barrier: Kafka does not know the barrier, so its producer state can bring mirrored producers
 * back whenever it is rebuilt (a restart, in particular an unclean one; a truncation) and a follower never saw
 * the leader's reset. A pass removes, on each such replica whose log reaches past the barrier, the producers
 * whose last write precedes it; it runs when leadership or the image changes and every second.
 *
 * <p>Invariant offered to the authorizer ({@link #cleanForWrites}): a local leader accepts client writes to such a
 * partition only once it has been cleaned at its current leader epoch (by a pass, by the stop itself
 * ({@link #markClean}), or by the first write that asks).
 */
public final class ProducerStateHygiene implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProducerStateHygiene.class);
    private static final long PASS_INTERVAL_MS = 1_000;

    private final LocalReplicas broker;
    private final LeaderReader leaderReader;
    /** Runs the passes, one at a time: on one thread of its own on a broker, directly in tests. */
    private final PassScheduler scheduler;
    /** The latest image, and the barriers of each topic in it as far as they were asked for. */
    private volatile Barriers barriers = new Barriers(MirrorImage.EMPTY);
    /** Barrier offsets at which the local follower replica was found to hold the barrier (no need to look again). */
    private final Map<TopicPartition, Long> verifiedStopBarrier = new ConcurrentHashMap<>();
    /** True while a pass asked for by an image waits to run: later images need no pass of their own. */
    private final AtomicBoolean passQueued = new AtomicBoolean();
    /** Local replicas (leader or follower) by partition. */
    private final Map<TopicPartition, LeaderChange> replicas = new ConcurrentHashMap<>();
    /** Leader epoch at which each local leader replica was last found clean. */
    private final Map<TopicPartition, Integer> cleanAtEpoch = new ConcurrentHashMap<>();

    /** The batches the partition's leader, wherever it is, holds in {@code [from, to)}, and which broker that leader is. */
    interface LeaderReader {
        LeaderBatches read(TopicPartition tp, long from, long to);
    }

    record LeaderBatches(int leader, List<StoredBatch> batches) {
    }

    public ProducerStateHygiene(BrokerHandle broker, LocalClients clients) {
        this(broker, (tp, from, to) -> {
            try (ClusterLogReader leader = new ClusterLogReader(clients.properties(), "cluster-mirror-" + broker.nodeId() + "-repair",
                    java.time.Duration.ofSeconds(10))) {
                List<StoredBatch> batches = leader.batches(tp, from, to);
                return new LeaderBatches(leader.lastLeader(), batches);
            }
        }, new ThreadPassScheduler("cluster-mirror-producer-state-" + broker.nodeId()));
    }

    /** @param scheduler where the passes run, closed by {@link #close} */
    ProducerStateHygiene(LocalReplicas broker, LeaderReader leaderReader, PassScheduler scheduler) {
        this.broker = broker;
        this.leaderReader = leaderReader;
        this.scheduler = scheduler;
        scheduler.everyPeriod(this::pass, PASS_INTERVAL_MS);
    }

    /**
     * A new image: O(1) on the image tailer's thread, which delivers one per batch of state records (thousands when
     * thousands of partitions start or stop). The barriers are read from it per topic when first asked for.
     */
    public void onImage(MirrorImage image) {
        barriers = new Barriers(image);
        if (passQueued.compareAndSet(false, true)) {
            scheduler.soon(this::queuedPass);
        }
    }

    /**
     * The barriers of one image's topics, each topic's computed when first asked for and kept with the image: a client
     * write asks for its topic's alone ({@link #cleanForWrites}), and repeated writes find them computed. Only the records
     * of a topic's current mirror count: after a failback or a restart of mirroring, barriers recorded by an earlier mirror
     * may sit at offsets that now hold other data.
     */
    private static final class Barriers {
        private final MirrorImage image;
        private final Map<String, Map<TopicPartition, Long>> byTopic = new ConcurrentHashMap<>();

        Barriers(MirrorImage image) {
            this.image = image;
        }

        Map<TopicPartition, Long> of(String topic) {
            return byTopic.computeIfAbsent(topic, t -> image.topic(t).map(this::read).orElse(Map.of()));
        }

        private Map<TopicPartition, Long> read(MirrorTopicRecord topic) {
            Map<TopicPartition, Long> out = new HashMap<>();
            for (PartitionStateRecord r : image.partitionStatesOf(topic.mirror(), topic.topic())) {
                if (r.barrierOffset() >= 0) {
                    out.put(new TopicPartition(r.topic(), r.partition()), r.barrierOffset());
                }
            }
            return Map.copyOf(out);
        }

        /** The barrier of the stop, if the partition's current mirror has stopped it. */
        Optional<Long> ofStop(TopicPartition tp) {
            return image.topic(tp.topic())
                .flatMap(t -> image.partitionState(t.mirror(), tp.topic(), tp.partition()))
                .filter(r -> r.state() == PartitionState.STOPPED && r.barrierOffset() >= 0)
                .map(PartitionStateRecord::barrierOffset);
        }

        Iterable<String> topics() {
            return image.topics().keySet();
        }
    }

    public void onLeadershipChanges(List<LeaderChange> changes) {
        for (LeaderChange c : changes) {
            if (c.deleted()) {
                replicas.remove(c.partition());
                cleanAtEpoch.remove(c.partition());
            } else {
                replicas.put(c.partition(), c);
            }
        }
        scheduler.soon(this::pass);
    }

    /** The stop cleaned the leader itself: writes are safe at this epoch without waiting for a pass. */
    void markClean(TopicPartition tp, int leaderEpoch) {
        cleanAtEpoch.put(tp, leaderEpoch);
    }

    /**
     * Makes this broker's leader replicas of {@code topic} that hold a barrier safe for client writes, on the calling
     * thread: a replica not yet cleaned at its current leader epoch (a new leader, a restart) has its mirrored
     * producers removed now, so that the write that asks is never refused. Idempotent; cheap once clean.
     *
     * @return true once no such replica is left unclean (false only if the removal itself failed)
     */
    public boolean cleanForWrites(String topic) {
        boolean clean = true;
        for (Map.Entry<TopicPartition, Long> e : barriersOf(topic).entrySet()) {
            TopicPartition tp = e.getKey();
            Optional<LeaderLogState> leader = broker.leaderLogState(tp);
            if (leader.isEmpty() || Integer.valueOf(leader.get().leaderEpoch()).equals(cleanAtEpoch.get(tp))) {
                continue;
            }
            try {
                int removed = broker.removeProducersBefore(tp, e.getValue());
                if (removed > 0) {
                    log.info("Removed {} mirrored producer(s) before the barrier at offset {} from the producer state of {} on broker {} "
                        + "(leader, before its first client write at leader epoch {})", removed, e.getValue(), tp, broker.nodeId(),
                        leader.get().leaderEpoch());
                }
                cleanAtEpoch.put(tp, leader.get().leaderEpoch());
            } catch (RuntimeException ex) {
                log.error("Could not remove mirrored producers from {} on broker {}; client writes wait", tp, broker.nodeId(), ex);
                clean = false;
            }
        }
        return clean;
    }

    /** The barriers of the topic's partitions in the latest image: read from it once, then kept with it. */
    Map<TopicPartition, Long> barriersOf(String topic) {
        return barriers.of(topic);
    }

    /**
     * The pass an image asked for: one for every image that arrived before it starts (a tailer delivers one per state write,
     * thousands when thousands of partitions stop, and each pass looks at every partition with a barrier).
     */
    private void queuedPass() {
        passQueued.set(false);
        pass();
    }

    private void pass() {
        try {
            Barriers current = barriers;
            for (String topic : current.topics()) {
                current.of(topic).forEach((tp, barrier) -> passOver(current, tp, barrier));
            }
        } catch (RuntimeException e) {
            log.error("Producer state hygiene pass failed on broker {}; retried in {} ms", broker.nodeId(), PASS_INTERVAL_MS, e);
        }
    }

    /** Removes the mirrored producers before the barrier from the local replica once the barrier has reached it. */
    private void passOver(Barriers current, TopicPartition tp, long barrier) {
        if (!replicas.containsKey(tp) || broker.localLogEndOffset(tp).orElse(-1L) <= barrier) {
            return; // no replica here, or the barrier has not reached it yet
        }
        Optional<LeaderLogState> leader = broker.leaderLogState(tp);
        if (leader.isEmpty() && missedTheStop(current, tp)) {
            return;
        }
        int removed = broker.removeProducersBefore(tp, barrier);
        if (removed > 0) {
            log.info("Removed {} mirrored producer(s) before the barrier at offset {} from the producer state of {} on broker {} ({})",
                removed, barrier, tp, broker.nodeId(), leader.isPresent() ? "leader" : "follower");
        }
        leader.ifPresent(s -> cleanAtEpoch.put(tp, s.leaderEpoch()));
    }

    /**
     * A follower that was out of the ISR when the partition was stopped may still hold the records the stop truncated
     * away, where the leader holds the barrier: Kafka cannot see it (the leader epoch did not change), so such a replica
     * is truncated to the barrier offset here and fetches from there again. Only on proof: the leader's log must hold the
     * barrier at that offset and this replica another batch there; a leader that cannot be read means waiting.
     *
     * @return true if the replica was found stale (and was truncated)
     */
    private boolean missedTheStop(Barriers current, TopicPartition tp) {
        Long stopBarrier = current.ofStop(tp).orElse(null);
        if (stopBarrier == null || stopBarrier.equals(verifiedStopBarrier.get(tp))) {
            return false;
        }
        Optional<Boolean> holdsBarrier = broker.holdsBarrierAt(tp, stopBarrier);
        if (holdsBarrier.isEmpty()) {
            return false;
        }
        if (holdsBarrier.get()) {
            verifiedStopBarrier.put(tp, stopBarrier);
            return false;
        }
        Optional<String> leaderBarrier = leaderHoldsBarrierAt(tp, stopBarrier);
        if (leaderBarrier.isEmpty()) {
            return false;
        }
        log.warn("The replica of {} on broker {} holds other records than the MIRROR_PID_RESET barrier at offset {}: it missed "
            + "the truncation of the stop while out of the ISR. Truncating it to offset {} to fetch the leader's log again; "
            + "evidence: barrier ({})", tp, broker.nodeId(), stopBarrier, stopBarrier, leaderBarrier.get());
        broker.truncateFollowerTo(tp, stopBarrier);
        return true;
    }

    /** What proves the leader holds the barrier at {@code offset}; empty if it does not, or cannot be read now. */
    private Optional<String> leaderHoldsBarrierAt(TopicPartition tp, long offset) {
        try {
            LeaderBatches leader = leaderReader.read(tp, offset, offset + 1);
            if (leader.leader() == broker.nodeId()) {
                return Optional.empty(); // this broker's metadata of the leadership lags: look again later
            }
            for (StoredBatch b : leader.batches()) {
                if (b.baseOffset() == offset && BarrierBatch.isBarrier(b)) {
                    return Optional.of("broker " + leader.leader() + ", the leader, holds the barrier at offset " + offset
                        + " (CRC " + b.checksum() + ")");
                }
            }
            log.warn("The replica of {} on broker {} holds no barrier at offset {}, but neither does the leader: not truncating it",
                tp, broker.nodeId(), offset);
            verifiedStopBarrier.put(tp, offset); // the recorded barrier is not there: nothing to repair, no need to look again
        } catch (RuntimeException e) {
            log.info("Cannot read the leader of {} to check the barrier at offset {} ({}); checking again later", tp, offset, e.getMessage());
        }
        return Optional.empty();
    }

    @Override
    public void close() {
        try {
            scheduler.close(); // never interrupts: a pass may be writing a producer state snapshot
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
