package io.clustermirror.chaos;

import io.clustermirror.common.batch.StoredRecord;
import io.clustermirror.common.cleaning.CleanedBatches;
import io.clustermirror.testsupport.LaunchedNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeProducersOptions;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The invariants a chaos run checks, over the clusters' logs and the workload's record of acknowledged writes. Every
 * broken invariant becomes a {@link History.Violation} naming the check, the partition (and replica) and the evidence.
 *
 * <ul>
 *   <li>{@value #IDENTITY}: every destination replica of a mirror partition is a byte-identical prefix of the source
 *       partition (batch by batch, every field but the partition leader epoch, no batch missing or added), up to its
 *       end or, once the partition is stopped, up to the barrier; while the failover topic fails back, every source
 *       replica is such a prefix of the destination's log. On the compacted topic, what both logs still hold is the
 *       same record by record, and so is the latest record of each key ({@link #compareCompacted});</li>
 *   <li>{@value #BARRIER}: after a stop, every replica of the side made writable holds the {@code MIRROR_PID_RESET}
 *       barrier at the offset the stop reported;</li>
 *   <li>{@value #PRODUCER_STATE}: after a stop, no replica's producer state holds a producer whose last write precedes
 *       the barrier (the mirrored producers are reset: producer ids are allocated by each cluster on its own, and a
 *       destination producer that gets a mirrored one's id would be refused as out of sequence, or acknowledged as a
 *       duplicate of a mirrored batch); a producer refused that way on the side made writable is named too;</li>
 *   <li>{@value #ACKED_WRITES}: every write acknowledged by the writable side below the other's mirrored end (the
 *       barrier after a stop) is on the other side at its offset with its value; above it, a write is lost only inside
 *       the range the stop reported as truncated or beyond what had been mirrored (the failover's bound); no value is
 *       read twice. Checked at every stop, in either direction, and at the end.
 *       Only on a partition that had an unclean election on the source, writes the source's own log no longer holds
 *       (it lost them) are left out: the mirror follows the source. Writes below the cluster's log start (retention
 *       deleted them) are counted, not violations;</li>
 *   <li>{@value #GROUP_MOVE}: the consumer group that moves at each stop resumes with no skip and no re-read beyond its
 *       last synced commit: its committed offset there is not above any commit it made nor past the barrier, not below
 *       a commit it made on the side left, while mirrored, {@link #GROUP_SYNC_MARGIN} before the stop (unless the
 *       barrier is lower), and its first record read there is the first one at or after that offset;</li>
 *   <li>{@value #TRANSACTIONS_WHOLE}: after a consistent or planned stop, each transaction the workload committed on the
 *       side left over two failover partitions is visible to {@code read_committed} consumers of the side made writable
 *       whole or not at all (a plain stop may split one: counted, not a violation);</li>
 *   <li>{@value #CONVERGENCE}: once the faults stop, every partition reaches the state the operator asked for, and a
 *       mirroring one the source's end, within a bound (checked by the runner);</li>
 *   <li>{@value #CORRUPT_FETCH}: while fetch responses of one partition are corrupted on the wire, that partition, and
 *       no other, fails with an error that names a corrupt batch at an offset that was corrupted; once the corruption
 *       stops it mirrors again and catches up, within a bound (checked by the runner; that nothing corrupt was appended
 *       is {@value #IDENTITY}'s);</li>
 *   <li>{@value #EXTENSION_THREADS}: no thread of the extension died on a destination node (an uncaught exception in a
 *       {@code cluster-mirror-*} thread, printed by the JVM to the node's console output).</li>
 * </ul>
 */
final class HistoryChecker {
    static final String IDENTITY = "identity";
    static final String BARRIER = "barrier";
    static final String ACKED_WRITES = "acked-writes";
    static final String CONVERGENCE = "convergence";
    static final String EXTENSION_THREADS = "extension-threads";
    static final String PRODUCER_STATE = "producer-state";
    static final String CORRUPT_FETCH = "corrupt-fetch";
    static final String GROUP_MOVE = "group-move";
    static final String TRANSACTIONS_WHOLE = "transactions-whole";
    /** Not an invariant: a check or a planned fault could not be carried out (what it needs was unavailable), so nothing was proven. */
    static final String CHECK_FAILED = "check-failed";
    /** Every kind of violation, in report order. */
    static final List<String> CHECKS = List.of(IDENTITY, BARRIER, PRODUCER_STATE, ACKED_WRITES, TRANSACTIONS_WHOLE, GROUP_MOVE,
        CONVERGENCE, CORRUPT_FETCH, EXTENSION_THREADS, CHECK_FAILED);

    private final ChaosClusters clusters;
    private final History history;
    private final AtomicLong identityChecks = new AtomicLong();
    private final AtomicLong batchesCompared = new AtomicLong();

    HistoryChecker(ChaosClusters clusters, History history) {
        this.clusters = clusters;
        this.history = history;
    }

    long identityChecks() {
        return identityChecks.get();
    }

    long batchesCompared() {
        return batchesCompared.get();
    }

    /**
     * Compares a replica with the log it copies ({@code reference}, named {@code referenceName} in the result): from the
     * replica's first batch (the reference holds the same batch at the same offset) every batch equals the reference's
     * next one, for the replica's batches below {@code end}. With {@code complete}, the replica must also hold every
     * reference batch below {@code end}. Batches older than the reference's first (retention deleted them there) are not
     * compared, but a replica that holds some must hold the reference's first. Returns what differs first.
     */
    static Optional<String> compare(List<SegmentBatches.Batch> reference, String referenceName, List<SegmentBatches.Batch> replica,
                                    long end, boolean complete) {
        // Retention may have deleted the reference's oldest segments: only what both logs still hold is compared.
        long referenceStart = reference.isEmpty() ? -1 : reference.get(0).baseOffset();
        List<SegmentBatches.Batch> compared = replica.stream().filter(b -> b.baseOffset() < end && b.baseOffset() >= referenceStart).toList();
        List<SegmentBatches.Batch> expected = reference.stream().filter(b -> b.baseOffset() < end).toList();
        if (compared.isEmpty()) {
            return complete && !expected.isEmpty() ? Optional.of("the replica holds no batch; the " + referenceName + " holds " + expected.size()
                + " below offset " + end + ", from " + expected.get(0)) : Optional.empty();
        }
        int start = 0;
        // A replica that holds batches older than the reference's first must hold that one too; else it starts later.
        boolean olderThanReference = replica.stream().anyMatch(b -> b.baseOffset() < referenceStart);
        while (!olderThanReference && start < expected.size() && expected.get(start).baseOffset() < compared.get(0).baseOffset()) {
            start++;
        }
        for (int i = 0; i < compared.size(); i++) {
            SegmentBatches.Batch mine = compared.get(i);
            if (start + i >= expected.size()) {
                return Optional.of("the replica holds " + mine + " beyond the " + referenceName + "'s last batch"
                    + (expected.isEmpty() ? "" : " " + expected.get(expected.size() - 1).range()) + ": a record the " + referenceName
                    + " never had");
            }
            SegmentBatches.Batch theirs = expected.get(start + i);
            if (mine.baseOffset() != theirs.baseOffset() || mine.lastOffset() != theirs.lastOffset()) {
                return Optional.of("the replica's " + mine + " is where the " + referenceName + " holds " + theirs + " (a batch missing or added)");
            }
            if (!mine.sameAs(theirs)) {
                int at = mine.firstDifference(theirs);
                return Optional.of("the replica's " + mine + " differs from the " + referenceName + "'s " + theirs + " at byte " + at
                    + " of the batch (" + SegmentBatches.fieldAt(at) + ")");
            }
        }
        if (complete && start + compared.size() < expected.size()) {
            return Optional.of("the replica ends before " + expected.get(start + compared.size()) + " of the " + referenceName + " (offset "
                + end + " expected)");
        }
        return Optional.empty();
    }

    /**
     * Compares a replica of a compacted partition with the log it copies: both clusters' cleaners rewrite their copy
     * on their own schedule, so batches may lose records on one side only, or disappear. Below {@code end}, every
     * replica batch that overlaps a reference batch has the same base and last offsets and every record both still
     * hold is the same (key, value, headers, timestamp; {@link CleanedBatches#sameAfterCleaning}); no replica batch lies
     * beyond the reference's last one; and below the end both logs hold ({@code bound}), the latest record of each key
     * is at the same offset on both sides, unless one side cleaned it away for a newer one at or above the bound, or
     * removed a tombstone. Returns what differs first.
     */
    static Optional<String> compareCompacted(List<SegmentBatches.Batch> reference, String referenceName, List<SegmentBatches.Batch> replica,
                                             long end) {
        List<SegmentBatches.Batch> expected = reference.stream().filter(b -> b.baseOffset() < end).toList();
        List<SegmentBatches.Batch> compared = replica.stream().filter(b -> b.baseOffset() < end).toList();
        TreeMap<Long, SegmentBatches.Batch> byBase = new TreeMap<>();
        expected.forEach(b -> byBase.put(b.baseOffset(), b));
        long referenceLast = expected.isEmpty() ? -1 : expected.get(expected.size() - 1).lastOffset();
        for (SegmentBatches.Batch mine : compared) {
            if (mine.baseOffset() > referenceLast) {
                return Optional.of("the replica holds " + mine + " beyond the " + referenceName + "'s last offset " + referenceLast
                    + ": a record the " + referenceName + " never had");
            }
            Map.Entry<Long, SegmentBatches.Batch> before = byBase.floorEntry(mine.baseOffset());
            List<SegmentBatches.Batch> overlapping = new ArrayList<>(byBase.subMap(mine.baseOffset(), true, mine.lastOffset(), true).values());
            if (before != null && before.getKey() < mine.baseOffset() && before.getValue().lastOffset() >= mine.baseOffset()) {
                overlapping.add(0, before.getValue());
            }
            if (overlapping.isEmpty()) {
                continue; // cleaned away on the reference: nothing to compare
            }
            SegmentBatches.Batch theirs = overlapping.get(0);
            if (overlapping.size() > 1 || theirs.baseOffset() != mine.baseOffset() || theirs.lastOffset() != mine.lastOffset()) {
                return Optional.of("the replica's " + mine + " is where the " + referenceName + " holds " + theirs + " (a batch missing or added)");
            }
            if (!CleanedBatches.sameAfterCleaning(mine.recordBatch(), theirs.recordBatch())) {
                return Optional.of("the replica's " + mine + " and the " + referenceName + "'s " + theirs + " hold different records at the "
                    + "same offsets (key, value, headers or timestamp), or different producer fields");
            }
        }
        long bound = Math.min(end, Math.min(referenceLast, compared.isEmpty() ? -1 : compared.get(compared.size() - 1).lastOffset()) + 1);
        Map<ByteBuffer, LatestRecord> mineBelow = latestPerKey(compared, bound, true);
        Map<ByteBuffer, LatestRecord> theirsBelow = latestPerKey(expected, bound, true);
        Map<ByteBuffer, LatestRecord> mineAbove = latestPerKey(compared, bound, false);
        Map<ByteBuffer, LatestRecord> theirsAbove = latestPerKey(expected, bound, false);
        Set<ByteBuffer> keys = new HashSet<>(mineBelow.keySet());
        keys.addAll(theirsBelow.keySet());
        for (ByteBuffer key : keys) {
            LatestRecord mine = mineBelow.get(key);
            LatestRecord theirs = theirsBelow.get(key);
            boolean differ = mine != null && theirs != null ? mine.offset() != theirs.offset()
                : mine == null ? !theirs.tombstone() && !mineAbove.containsKey(key) : !mine.tombstone() && !theirsAbove.containsKey(key);
            if (differ) {
                return Optional.of("below offset " + bound + " the latest record of key '" + StandardCharsets.UTF_8.decode(key.duplicate())
                    + "' is " + describe(mine) + " on the replica but " + describe(theirs) + " on the " + referenceName);
            }
        }
        return Optional.empty();
    }

    /** The latest record of a key in a compacted log: its offset and whether it is a tombstone. */
    private record LatestRecord(long offset, boolean tombstone) {
    }

    private static String describe(LatestRecord latest) {
        return latest == null ? "absent" : (latest.tombstone() ? "a tombstone" : "a value") + " at offset " + latest.offset();
    }

    /** The latest record of each key in the data batches below {@code bound} ({@code below}) or at and above it. */
    private static Map<ByteBuffer, LatestRecord> latestPerKey(List<SegmentBatches.Batch> batches, long bound, boolean below) {
        Map<ByteBuffer, LatestRecord> latest = new HashMap<>();
        for (SegmentBatches.Batch batch : batches) {
            if (batch.control()) {
                continue;
            }
            for (StoredRecord record : batch.recordBatch().records()) {
                if (record.key() != null && (record.offset() < bound) == below) {
                    latest.put(record.key(), new LatestRecord(record.offset(), record.value() == null));
                }
            }
        }
        return latest;
    }

    /**
     * Checks {@value #IDENTITY} on every in-sync destination replica of {@code tp} against the source leader's replica, for
     * batches below {@code end}. The replicas are read before the source, so the source holds at least what they copied
     * from it. A replica out of the ISR (its broker down or catching up) may still hold records its leader truncated while
     * it was away: Kafka truncates it before it rejoins, so it is checked once it is back in sync (at the latest by the
     * final check, when every replica is).
     */
    void checkIdentity(Admin sourceAdmin, Admin destinationAdmin, TopicPartition tp, long end, boolean complete) throws Exception {
        Map<String, List<SegmentBatches.Batch>> replicas = new TreeMap<>();
        for (int broker : ChaosClusters.isr(destinationAdmin, tp)) {
            replicas.put("destination broker " + broker, SegmentBatches.read(clusters.destinationBroker(broker).partitionDir(tp)));
        }
        int leader = ChaosClusters.placement(sourceAdmin, tp).leader()
            .orElseThrow(() -> new IllegalStateException("the source names no leader of " + tp));
        compareReplicas(tp, SegmentBatches.read(clusters.sourceNodes().get(leader).partitionDir(tp)), "source", replicas, end, complete);
    }

    /**
     * Checks {@value #IDENTITY} after failback, the other way round: every in-sync source replica of {@code tp} against the
     * destination leader's replica, which the source now copies.
     */
    void checkFailbackIdentity(Admin sourceAdmin, Admin destinationAdmin, TopicPartition tp, long end, boolean complete) throws Exception {
        Map<String, List<SegmentBatches.Batch>> replicas = new TreeMap<>();
        for (int broker : ChaosClusters.isr(sourceAdmin, tp)) {
            replicas.put("source broker " + broker + " (failback)", SegmentBatches.read(clusters.sourceNodes().get(broker).partitionDir(tp)));
        }
        int leader = clusters.destinationLeader(destinationAdmin, tp);
        compareReplicas(tp, SegmentBatches.read(clusters.destinationBroker(leader).partitionDir(tp)), "destination leader", replicas, end,
            complete);
    }

    private void compareReplicas(TopicPartition tp, List<SegmentBatches.Batch> reference, String referenceName,
                                 Map<String, List<SegmentBatches.Batch>> replicas, long end, boolean complete) {
        identityChecks.incrementAndGet();
        for (Map.Entry<String, List<SegmentBatches.Batch>> replica : replicas.entrySet()) {
            batchesCompared.addAndGet(replica.getValue().size());
            Optional<String> difference = tp.topic().equals(ChaosRun.COMPACTED_TOPIC)
                ? compareCompacted(reference, referenceName, replica.getValue(), end)
                : compare(reference, referenceName, replica.getValue(), end, complete);
            difference.ifPresent(what ->
                history.violation(IDENTITY, tp + " on " + replica.getKey(), what));
        }
    }

    /** The replicas of {@code tp} on {@code side}: each broker's name and partition directory. */
    private Map<String, Path> replicaDirs(Workload.Side side, Admin admin, TopicPartition tp) throws Exception {
        Map<String, Path> dirs = new TreeMap<>();
        for (int broker : ChaosClusters.placement(admin, tp).replicas()) {
            LaunchedNode node = side == Workload.Side.SOURCE ? clusters.sourceNodes().get(broker) : clusters.destinationBroker(broker);
            dirs.put(side.label() + " broker " + broker, node.partitionDir(tp));
        }
        return dirs;
    }

    /**
     * Checks {@value #BARRIER}: every replica of {@code tp} on {@code side} (through its {@code admin}) holds the barrier
     * its stop reported at {@code barrierOffset}.
     */
    void checkBarrier(Workload.Side side, Admin admin, TopicPartition tp, long barrierOffset) throws Exception {
        for (Map.Entry<String, Path> replica : replicaDirs(side, admin, tp).entrySet()) {
            Optional<SegmentBatches.Batch> at = SegmentBatches.read(replica.getValue()).stream()
                .filter(b -> b.baseOffset() <= barrierOffset && barrierOffset <= b.lastOffset()).findFirst();
            if (at.isEmpty() || !at.get().barrier()) {
                history.violation(BARRIER, tp + " on " + replica.getKey(), "the stop reported its barrier at offset " + barrierOffset
                    + ", but the replica holds " + at.map(Object::toString).orElse("nothing") + " there");
            }
        }
    }

    /**
     * How long before the stop a commit of the group must have been synced: several sync intervals
     * ({@code mirror.metadata.refresh.interval.ms} of the run's mirror) plus room for a slow machine.
     */
    static final Duration GROUP_SYNC_MARGIN = Duration.ofSeconds(90);

    /**
     * Checks {@value #GROUP_MOVE} for one partition of the group that moved from {@code left} to the other cluster:
     * {@code commits} are all its commits (every cluster, every partition), {@code synced} its committed offset on the
     * cluster it moved to (-1 if none), {@code resumedAt} the offset of the first record it read there and
     * {@code firstFromSynced} that of the first record at or after {@code synced}; {@code barrier} is where the stop cut
     * that cluster and {@code stopAtMs} when the stop was requested; that cluster had been mirroring the one left (and
     * syncing its group offsets) since {@code mirroringSinceMs}. Returns the violations' details.
     */
    static List<String> groupMoveViolations(TopicPartition tp, List<MovingGroup.Commit> commits, Workload.Side left, long synced,
                                            long resumedAt, long firstFromSynced, long barrier, long mirroringSinceMs, long stopAtMs) {
        List<MovingGroup.Commit> own = commits.stream().filter(c -> c.partition().equals(tp)).toList();
        // The group may resume at a commit it made there itself, in an earlier stint: any commit bounds it.
        long lastCommit = own.stream().mapToLong(MovingGroup.Commit::offset).max().orElse(-1);
        // Only a commit made while the mirror synced, long enough before the stop, must have been synced.
        long syncedBound = own.stream().filter(c -> c.side() == left && c.atMs() >= mirroringSinceMs
                && c.atMs() <= stopAtMs - GROUP_SYNC_MARGIN.toMillis())
            .mapToLong(MovingGroup.Commit::offset).max().orElse(-1);
        String there = " on the " + left.other().label();
        List<String> violations = new ArrayList<>();
        if (synced < 0) {
            if (syncedBound >= 0) {
                violations.add("no committed offset of group " + MovingGroup.GROUP + there + ", though it committed " + syncedBound
                    + " on the " + left.label() + " at least " + GROUP_SYNC_MARGIN.toSeconds() + " s before the stop");
            }
            return violations;
        }
        if (synced > lastCommit || synced > barrier + 1) {
            violations.add("group " + MovingGroup.GROUP + " resumes at offset " + synced + there + ", beyond its last commit "
                + lastCommit + " or the barrier at " + barrier + ": it skips records");
        }
        if (synced < Math.min(syncedBound, barrier)) {
            violations.add("group " + MovingGroup.GROUP + " resumes at offset " + synced + there + ", before offset " + syncedBound
                + " it committed on the " + left.label() + " at least " + GROUP_SYNC_MARGIN.toSeconds() + " s before the stop: it "
                + "reads [" + synced + ", " + syncedBound + ") again");
        }
        if (resumedAt != firstFromSynced) {
            violations.add("the member of group " + MovingGroup.GROUP + there + " read offset " + resumedAt + " first, where "
                + "the first record at or after its committed offset " + synced + " is at " + firstFromSynced);
        }
        return violations;
    }

    /**
     * Checks {@value #PRODUCER_STATE} on every replica of a stopped {@code tp} on {@code side}: each producer in the
     * replica's producer state (DescribeProducers on that broker) wrote after the barrier at {@code barrierOffset}.
     */
    void checkProducerState(Workload.Side side, Admin admin, TopicPartition tp, long barrierOffset) throws Exception {
        for (int broker : ChaosClusters.placement(admin, tp).replicas()) {
            LaunchedNode node = side == Workload.Side.SOURCE ? clusters.sourceNodes().get(broker) : clusters.destinationBroker(broker);
            ProducerStateGrace grace = new ProducerStateGrace();
            List<String> stranded;
            boolean expired;
            do {
                List<ProducerState> active = admin.describeProducers(List.of(tp), new DescribeProducersOptions().brokerId(broker))
                    .partitionResult(tp).get(30, TimeUnit.SECONDS).activeProducers();
                expired = grace.expired(node.pid(), System.nanoTime());
                stranded = strandedProducers(active, SegmentBatches.read(node.partitionDir(tp)), barrierOffset);
                if (!stranded.isEmpty() && !expired) {
                    Thread.sleep(500);
                }
            } while (!stranded.isEmpty() && !expired);
            stranded.forEach(detail -> history.violation(PRODUCER_STATE, tp + " on " + side.label() + " broker " + broker, detail));
        }
    }

    /** How long a replica that holds the barrier may keep mirrored producers in its state (a follower cleans it on its own). */
    static final Duration PRODUCER_STATE_BOUND = Duration.ofSeconds(30);

    /**
     * The time a replica gets to clean mirrored producers from its producer state on its own: a follower that just caught
     * up to the barrier, or whose broker just restarted and rebuilt its producer state from the log. It is
     * {@link #PRODUCER_STATE_BOUND} from the first answer of each incarnation of the broker (its process id): a describe
     * waits while the broker is down, which must not use up the grace, and a broker killed again during the grace
     * rebuilds its state from the log once more when it comes back.
     */
    static final class ProducerStateGrace {
        private long incarnation = -1;
        private long deadlineNanos;

        /** Whether the grace is over at {@code nowNanos}, for an answer of the broker process {@code incarnation}. */
        boolean expired(long incarnation, long nowNanos) {
            if (incarnation != this.incarnation) {
                this.incarnation = incarnation;
                deadlineNanos = nowNanos + PRODUCER_STATE_BOUND.toNanos();
            }
            return nowNanos - deadlineNanos >= 0;
        }
    }

    /**
     * The producers of {@code active} (a replica's producer state) that have no batch after the barrier at
     * {@code barrierOffset} in the replica's {@code log}: mirrored producers the stop left behind, each described with
     * its last batch and what it does to a destination producer that gets its id.
     */
    static List<String> strandedProducers(List<ProducerState> active, List<SegmentBatches.Batch> log, long barrierOffset) {
        List<String> stranded = new ArrayList<>();
        for (ProducerState producer : active) {
            List<SegmentBatches.Batch> own = log.stream().filter(b -> b.producerId() == producer.producerId()).toList();
            if (own.stream().anyMatch(b -> b.baseOffset() > barrierOffset)) {
                continue;
            }
            stranded.add("producer id " + producer.producerId() + " (epoch " + producer.producerEpoch() + ", last sequence "
                + producer.lastSequence() + ") is in the replica's producer state after the stop, but its last write is "
                + (own.isEmpty() ? "not in the log" : "the " + own.get(own.size() - 1)) + ", before the MIRROR_PID_RESET barrier at offset "
                + barrierOffset + ": the stop did not reset the mirrored producers, so a destination producer given this id gets "
                + "OutOfOrderSequence or its batch is acknowledged as a duplicate of a mirrored one");
        }
        return stranded;
    }

    /**
     * Checks {@value #EXTENSION_THREADS} on every destination node, and returns each node's count of ERROR lines in its
     * {@code cluster-mirror.log} files (figures for the report: errors the extension logged and recovered from).
     */
    Map<String, Long> checkExtensionLogs() throws IOException {
        List<LaunchedNode> nodes = new ArrayList<>(clusters.destinationBrokers().values());
        nodes.add(clusters.destinationController());
        Map<String, Long> errors = new TreeMap<>();
        for (LaunchedNode node : nodes) {
            try (Stream<String> lines = Files.lines(node.output(), StandardCharsets.UTF_8)) {
                lines.filter(l -> l.contains("Exception in thread \"cluster-mirror")).distinct().forEach(l ->
                    history.violation(EXTENSION_THREADS, node.toString(), "a thread of the extension died: " + l));
            }
            long count = 0;
            Path logs = node.dir().resolve("logs");
            if (Files.isDirectory(logs)) {
                try (Stream<Path> files = Files.list(logs)) {
                    for (Path file : files.filter(f -> f.getFileName().toString().startsWith("cluster-mirror.log")).toList()) {
                        try (Stream<String> lines = Files.lines(file, StandardCharsets.UTF_8)) {
                            count += lines.filter(l -> l.contains("] ERROR ")).count();
                        }
                    }
                }
            }
            errors.put(node.toString(), count);
        }
        return errors;
    }

    /** What a cluster holds of one partition's writes acknowledged by the other. */
    record WriteFigures(long acked, long aborted, long present, long lostInTruncatedRange, long lostBeyondMirroredEnd,
                        long duplicates, long lostBySource, long deletedByRetention) {
        static final WriteFigures NONE = new WriteFigures(0, 0, 0, 0, 0, 0, 0, 0);

        /** The sum of these figures and {@code other}'s. */
        WriteFigures plus(WriteFigures other) {
            return new WriteFigures(acked + other.acked, aborted + other.aborted, present + other.present,
                lostInTruncatedRange + other.lostInTruncatedRange, lostBeyondMirroredEnd + other.lostBeyondMirroredEnd,
                duplicates + other.duplicates, lostBySource + other.lostBySource, deletedByRetention + other.deletedByRetention);
        }

        /** These figures, with {@code lost} acknowledged writes that the source itself lost (not counted in the others). */
        WriteFigures withLostBySource(long lost) {
            return new WriteFigures(acked + lost, aborted, present, lostInTruncatedRange, lostBeyondMirroredEnd, duplicates, lost,
                deletedByRetention);
        }
    }

    /**
     * The acknowledged {@code writes} to {@code tp} that the source itself no longer holds at their offset, read from its
     * own log below {@code sourceEnd}: lost in an unclean election of the source. The mirror follows the source's log
     * ({@value #IDENTITY}), so the destination must not hold them either; {@value #ACKED_WRITES} leaves them out.
     */
    List<Workload.Write> lostBySource(String sourceBootstrapServers, TopicPartition tp, List<Workload.Write> writes, long sourceEnd) {
        Map<Long, String> source = readCommitted(sourceBootstrapServers, tp + " on the source", tp, 0, sourceEnd);
        return writes.stream().filter(w -> w.partition().equals(tp) && w.outcome() == Workload.Outcome.ACKED
            && !w.value().equals(source.get(w.offset()))).toList();
    }

    /**
     * Checks {@value #ACKED_WRITES} for one partition, on the cluster at {@code bootstrapServers} (named {@code cluster}),
     * for the {@code writes} made to the other one (at {@code writtenTo}): {@code mirroredEnd} is the end of what the cluster holds of the other
     * (the barrier offset after a stop, the other's end once a mirroring partition caught up), and
     * [{@code truncatedFrom}, {@code truncatedTo}) the range a stop reported as cut ({@code -1} if none).
     */
    WriteFigures checkAckedWrites(String cluster, String bootstrapServers, String writtenTo, TopicPartition tp, List<Workload.Write> writes,
                                  long mirroredEnd, long truncatedFrom, long truncatedTo) {
        String where = tp + " on the " + cluster;
        Map<Long, String> held = new HashMap<>();
        Map<String, Long> seen = new HashMap<>();
        long duplicates = 0;
        // Values are unique in the run and a duplicate is a batch appended twice, close to the first: reading from the
        // first write checked is enough.
        long from = writes.stream().filter(w -> w.partition().equals(tp)).mapToLong(Workload.Write::offset).min().orElse(mirroredEnd);
        for (Map.Entry<Long, String> record : readCommitted(bootstrapServers, where, tp, from, mirroredEnd).entrySet()) {
            Long earlier = seen.putIfAbsent(record.getValue(), record.getKey());
            if (earlier != null) {
                duplicates++;
                history.violation(ACKED_WRITES, where, "value '" + record.getValue() + "' is there twice, at offsets "
                    + earlier + " and " + record.getKey());
            }
            held.put(record.getKey(), record.getValue());
        }
        long acked = 0;
        long aborted = 0;
        long present = 0;
        long lostTruncated = 0;
        long lostBeyond = 0;
        long deletedByRetention = 0;
        // Retention deleted what lies below the log start of either cluster: the source's before the mirror copied it.
        long logStart = Math.max(logStartOffset(bootstrapServers, tp), logStartOffset(writtenTo, tp));
        for (Workload.Write w : writes) {
            if (!w.partition().equals(tp)) {
                continue;
            }
            if (w.outcome() == Workload.Outcome.ABORTED) {
                aborted++;
                if (held.containsKey(w.offset())) {
                    history.violation(ACKED_WRITES, where, "the aborted record '" + w.value() + "' at offset " + w.offset()
                        + " is visible to read_committed consumers there");
                }
                continue;
            }
            acked++;
            String there = held.get(w.offset());
            if (w.value().equals(there)) {
                present++;
            } else if (there == null && w.offset() < logStart) {
                deletedByRetention++;
            } else if (w.offset() >= mirroredEnd && truncatedFrom >= 0 && w.offset() >= truncatedFrom && w.offset() < truncatedTo) {
                lostTruncated++;
            } else if (w.offset() >= mirroredEnd) {
                lostBeyond++;
            } else {
                history.violation(ACKED_WRITES, where, "the acknowledged write '" + w.value() + "' at offset " + w.offset()
                    + " is not there (" + (there == null ? "nothing there" : "'" + there + "' there") + "), below its mirrored end "
                    + mirroredEnd);
            }
        }
        return new WriteFigures(acked, aborted, present, lostTruncated, lostBeyond, duplicates, 0, deletedByRetention);
    }

    /**
     * {@value #TRANSACTIONS_WHOLE}: reads each partition of {@code mirroredEnds} on the side made writable, below its mirrored
     * end, and counts the committed transactions of {@code writes} (the side left's) of which it holds some records and not
     * all. A transaction with a record below either side's log start (retention) is left out.
     *
     * @param mustBeWhole a split is a violation (a consistent or planned stop)
     * @return the committed transactions split
     */
    long checkTransactionsWhole(String cluster, String bootstrapServers, String writtenTo, List<Workload.Write> writes,
                                Map<TopicPartition, Long> mirroredEnds, boolean mustBeWhole) {
        Map<String, List<Workload.Write>> byTransaction = new TreeMap<>();
        for (Workload.Write w : writes) {
            if (w.outcome() == Workload.Outcome.ACKED && mirroredEnds.containsKey(w.partition()) && Workload.transactionOf(w.value()).isPresent()) {
                byTransaction.computeIfAbsent(Workload.transactionOf(w.value()).get(), t -> new ArrayList<>()).add(w);
            }
        }
        Map<TopicPartition, Set<String>> held = new HashMap<>();
        Map<TopicPartition, Long> logStarts = new HashMap<>();
        for (Map.Entry<TopicPartition, Long> end : mirroredEnds.entrySet()) {
            TopicPartition tp = end.getKey();
            long from = writes.stream().filter(w -> w.partition().equals(tp)).mapToLong(Workload.Write::offset).min().orElse(end.getValue());
            held.put(tp, new HashSet<>(readCommitted(bootstrapServers, tp + " on the " + cluster, tp, from, end.getValue()).values()));
            logStarts.put(tp, Math.max(logStartOffset(bootstrapServers, tp), logStartOffset(writtenTo, tp)));
        }
        long split = 0;
        for (Map.Entry<String, List<Workload.Write>> t : byTransaction.entrySet()) {
            List<Workload.Write> records = t.getValue();
            if (records.stream().anyMatch(w -> w.offset() < logStarts.get(w.partition()))) {
                continue;
            }
            long there = records.stream().filter(w -> held.get(w.partition()).contains(w.value())).count();
            if (there > 0 && there < records.size()) {
                split++;
                if (mustBeWhole) {
                    history.violation(TRANSACTIONS_WHOLE, "the failover topic on the " + cluster, "the committed transaction " + t.getKey()
                        + " is there in part: " + there + " of its " + records.size() + " records, missing " + records.stream()
                        .filter(w -> !held.get(w.partition()).contains(w.value())).map(w -> w.partition() + "@" + w.offset()).limit(5).toList());
                }
            }
        }
        return split;
    }

    /** The partition's log start offset on the cluster (retention moves it). */
    private static long logStartOffset(String bootstrapServers, TopicPartition tp) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            return consumer.beginningOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
        }
    }

    /** Every committed record of the partition below {@code end}, by offset. */
    private Map<Long, String> readCommitted(String bootstrapServers, String where, TopicPartition tp, long from, long end) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        Map<Long, String> records = new TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            readInto(consumer, where, tp, from, end, records);
        } catch (KafkaException e) {
            // A corrupt batch on the leader, for instance: what was read so far is checked, and the failure named.
            history.violation(ACKED_WRITES, where, "reading up to offset " + end + " failed: " + e);
        }
        return records;
    }

    private void readInto(KafkaConsumer<byte[], byte[]> consumer, String where, TopicPartition tp, long from, long end,
                          Map<Long, String> records) {
        consumer.assign(List.of(tp));
        consumer.seekToBeginning(List.of(tp));
        if (consumer.position(tp) < from) {
            consumer.seek(tp, from);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (consumer.position(tp) < end) {
            if (System.nanoTime() > deadline) {
                history.violation(ACKED_WRITES, where, "could not read up to offset " + end + " within 60 s (position "
                    + consumer.position(tp) + ")");
                break;
            }
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                if (r.offset() < end && r.value() != null) {
                    records.put(r.offset(), new String(r.value(), StandardCharsets.UTF_8));
                }
            }
        }
    }
}
