package io.clustermirror.admin.internals;

import io.clustermirror.admin.SplitTransaction;
import io.clustermirror.common.compat.SourceTransaction;
import io.clustermirror.common.records.SourceOffsetCommitRecord;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which committed transactions a stop would split across partitions, and where a consistent stop cuts instead (pure).
 *
 * <p>A plain stop cuts each partition at its own last stable offset. A transaction of the source that wrote to several
 * partitions is then visible to {@code read_committed} consumers of the destination on a partition where its records
 * lie below the cut, and gone where they do not: a partition whose mirror had not fetched the commit marker yet has
 * the transaction open, above its last stable offset. A transaction is <em>kept</em> on a partition when its first
 * record there lies below the cut, and <em>whole</em> there when its last record does; it is split when it is kept
 * somewhere and not whole somewhere. (Its marker may lie above the cut: the records below it stay committed.)
 *
 * <p>The consistent cut is the greatest cut, partition by partition at most the last stable offset, that splits no
 * committed transaction. It is found by lowering: while a transaction is kept somewhere and not whole somewhere, every
 * partition that keeps it is cut at its first record there. Lowering is forced (a partition's cut only goes down, so a
 * transaction not whole under the current cuts is not whole under any lower ones), which is why the result is the
 * greatest such cut; and since the cuts only go down, it ends. Aborted transactions need nothing: none of their records
 * is visible wherever the abort is, and the stop writes again an abort it cuts.
 *
 * <p>A transaction is known by its producer id and the producer epoch of its records: with Kafka's transaction protocol
 * version 2 (Kafka 4.0 and later) the epoch changes with every transaction. Under version 1 one producer's transactions
 * share an epoch; all of them are then taken as one, which can cut more than needed but never splits one
 * ({@link Analysis#epochsReused}).
 *
 * <p>What the tails do not hold cannot be seen: a transaction whose records on some partition were never mirrored, and
 * what began before a tail's window. The latter is asked for ({@link Analysis#needEarlierWindow}): read those partitions
 * from further back and analyse again.
 *
 * <p>Groups that commit their offsets inside transactions ({@code sendOffsetsToTransaction}: read-process-write loops,
 * Kafka Streams with exactly-once) join the cut. Each such group's commits of one input partition form a log of their own,
 * in the order of their commit markers, and each commit belongs to its transaction like a record: a transaction kept on
 * its output partitions must keep its commit, and a kept commit needs its transaction whole and the input it read up to
 * below the input partition's cut (else the application resumed there would skip input the destination does not hold).
 * The commit log is cut like a partition, by the same forced lowering, and the group's offset is the last commit kept
 * ({@link Analysis#groupOffsets}): resumed there, the application reads again exactly the input whose output was cut.
 */
public final class TransactionCuts {
    private TransactionCuts() {
    }

    /**
     * What the tails show.
     *
     * @param consistentCuts    the consistent cut of each partition (at most its last stable offset)
     * @param splitByPlainStop  the committed transactions a plain stop would split, by producer id and epoch
     * @param extraRecords      by partition, the data records the consistent cut removes that a plain stop keeps
     * @param needEarlierWindow partitions where a transaction to be cut began before the window: the result is not final
     * @param epochsReused      a producer wrote several transactions with one epoch (transaction protocol version 1)
     */
    public record Analysis(Map<TopicPartition, Long> consistentCuts, List<SplitTransaction> splitByPlainStop,
                           Map<TopicPartition, Long> extraRecords, Set<TopicPartition> needEarlierWindow, boolean epochsReused,
                           List<GroupOffset> groupOffsets) {
        /** An analysis of transactions without groups that commit in them. */
        public Analysis(Map<TopicPartition, Long> consistentCuts, List<SplitTransaction> splitByPlainStop,
                        Map<TopicPartition, Long> extraRecords, Set<TopicPartition> needEarlierWindow, boolean epochsReused) {
            this(consistentCuts, splitByPlainStop, extraRecords, needEarlierWindow, epochsReused, List.of());
        }
    }

    /**
     * Where a consistent stop puts the offset of a group that committed {@code tp} inside transactions.
     *
     * @param offset     the offset the last commit kept made, or -1 when the cut keeps none of the commits known (the
     *                   offset before them is not known: the group keeps the offset the sync copied, at most the cut)
     * @param commitsCut the group's known commits of {@code tp} the cut removes
     */
    public record GroupOffset(String group, TopicPartition tp, long offset, int commitsCut) {
    }

    /**
     * How much a record's time may precede its transaction's start by the coordinator's clock (producers' and brokers'
     * clocks differ): a transaction known to have written a partition, whose records the partition's window does not hold
     * although the window holds everything since this much before the transaction began, was not mirrored there.
     */
    static final long CLOCK_MARGIN_MS = 60_000;

    /** Analyses the tails of the partitions a stop would cut together, from their data alone. */
    public static Analysis analyse(List<PartitionTail> tails) {
        return analyse(tails, List.of());
    }

    /**
     * Analyses the tails of the partitions a stop would cut together, knowing from the source's coordinator log which
     * partitions some transactions wrote to ({@code known}): a committed one kept on a partition and absent from another
     * it wrote to, whose window would hold its records there, is split (its records there were never mirrored).
     */
    public static Analysis analyse(List<PartitionTail> tails, List<SourceTransaction> known) {
        return analyse(tails, known, List.of());
    }

    /**
     * As {@link #analyse(List, List)}, with the offsets groups committed inside transactions that committed on the source
     * ({@code commits}, in any order, repeats allowed): a commit of a partition the tails do not hold is left out.
     */
    public static Analysis analyse(List<PartitionTail> tails, List<SourceTransaction> known, List<SourceOffsetCommitRecord> commits) {
        return analyse(tails, known, commits, Long.MAX_VALUE);
    }

    /**
     * As {@link #analyse(List, List, List)}, where a commit whose transaction the tails and the source's log do not show
     * is kept only if it committed before {@code unshownCommitsBeforeMs} (by the source's clock): the tails end where the
     * destination's offsets were read, so a transaction committed later may have written output beyond them, which the
     * stop cuts. Before that time, such a transaction wrote nothing the tails would show (it committed offsets only, or
     * wrote before the windows or outside the analysed partitions).
     */
    public static Analysis analyse(List<PartitionTail> tails, List<SourceTransaction> known, List<SourceOffsetCommitRecord> commits,
                                   long unshownCommitsBeforeMs) {
        List<Occurrence> occurrences = new ArrayList<>();
        Map<TopicPartition, PartitionTail> byPartition = new LinkedHashMap<>();
        boolean reused = false;
        for (PartitionTail tail : tails) {
            byPartition.put(tail.tp(), tail);
            List<Occurrence> here = occurrences(tail);
            reused |= here.stream().filter(o -> o.dataEpoch >= 0).map(o -> o.producerId + "/" + o.dataEpoch).distinct().count()
                < here.stream().filter(o -> o.dataEpoch >= 0).count();
            occurrences.addAll(here);
        }
        Map<String, List<Occurrence>> families = new HashMap<>();
        List<List<Occurrence>> committed = committedTransactions(occurrences, families);
        Set<TopicPartition> needEarlier = new TreeSet<>(Comparator.comparing(TopicPartition::topic).thenComparing(TopicPartition::partition));
        addUnmirrored(committed, families, known, byPartition, needEarlier);
        List<CommitLog> groupLogs = CommitLog.of(commits, byPartition.keySet(), families, unshownCommitsBeforeMs);

        Map<TopicPartition, Long> plain = new LinkedHashMap<>();
        byPartition.values().forEach(t -> plain.put(t.tp(), t.lastStableOffset()));
        List<SplitTransaction> splits = new ArrayList<>();
        for (List<Occurrence> transaction : committed) {
            if (split(transaction, plain)) {
                splits.add(describe(transaction, plain));
            }
        }

        Map<TopicPartition, Long> cuts = new LinkedHashMap<>(plain);
        boolean lowered = true;
        while (lowered) {
            lowered = false;
            for (List<Occurrence> transaction : committed) {
                if (split(transaction, cuts)) {
                    lowered |= cutAway(transaction, cuts, byPartition, needEarlier);
                }
            }
            for (CommitLog log : groupLogs) {
                lowered |= log.lower(cuts);
                for (List<Occurrence> transaction : log.transactionsCut()) {
                    if (transaction.stream().anyMatch(o -> o.keptBelow(cuts.get(o.tp)))) {
                        lowered |= cutAway(transaction, cuts, byPartition, needEarlier);
                    }
                }
            }
        }
        Map<TopicPartition, Long> extra = new LinkedHashMap<>();
        for (PartitionTail tail : byPartition.values()) {
            long cut = cuts.get(tail.tp());
            extra.put(tail.tp(), tail.batches().stream().filter(b -> b.baseOffset() >= cut && b.baseOffset() < tail.lastStableOffset())
                .mapToLong(PartitionTail.Batch::dataRecords).sum());
        }
        splits.sort(Comparator.comparingLong(SplitTransaction::producerId).thenComparingInt(SplitTransaction::producerEpoch));
        return new Analysis(cuts, splits, extra, needEarlier, reused, groupLogs.stream().map(CommitLog::offset).toList());
    }

    /**
     * Lowers the cut of every partition that keeps some of {@code transaction} to its first record there (forced: the
     * transaction cannot be kept whole). Returns true if a cut went down.
     */
    private static boolean cutAway(List<Occurrence> transaction, Map<TopicPartition, Long> cuts, Map<TopicPartition, PartitionTail> tails,
                                   Set<TopicPartition> needEarlier) {
        boolean lowered = false;
        for (Occurrence o : transaction) {
            if (!o.keptBelow(cuts.get(o.tp))) {
                continue;
            }
            if (o.firstOffset < 0) {
                needEarlier.add(o.tp); // it began before the window: cutting at the window start would still keep part
            }
            long to = o.firstOffset < 0 ? tails.get(o.tp).windowStart() : o.firstOffset;
            if (to < cuts.get(o.tp)) {
                cuts.put(o.tp, to);
                lowered = true;
            }
        }
        return lowered;
    }

    /**
     * One group's transactional commits of one analysed partition, in the order of their commit markers, cut like a
     * partition: the first {@code kept} stay.
     */
    private static final class CommitLog {
        final String group;
        final TopicPartition tp;
        final List<SourceOffsetCommitRecord> commits;
        /** The transaction of each commit as the tails show it, or null when they show none of it (nothing to keep whole). */
        final List<List<Occurrence>> transactions;
        /** A commit whose transaction nothing shows is kept only if it committed before this time. */
        final long unshownBeforeMs;
        int kept;

        private CommitLog(String group, TopicPartition tp, List<SourceOffsetCommitRecord> commits, List<List<Occurrence>> transactions,
                          long unshownBeforeMs) {
            this.group = group;
            this.tp = tp;
            this.commits = commits;
            this.transactions = transactions;
            this.unshownBeforeMs = unshownBeforeMs;
            this.kept = commits.size();
        }

        /** The commit logs of the analysed partitions, each commit joined to its transaction by producer id and epoch. */
        static List<CommitLog> of(List<SourceOffsetCommitRecord> commits, Set<TopicPartition> analysed,
                                  Map<String, List<Occurrence>> families, long unshownBeforeMs) {
            Map<String, Map<TopicPartition, java.util.TreeMap<Long, SourceOffsetCommitRecord>>> ordered = new java.util.TreeMap<>();
            for (SourceOffsetCommitRecord c : commits) {
                if (analysed.contains(c.topicPartition())) {
                    ordered.computeIfAbsent(c.group(), g -> new LinkedHashMap<>())
                        .computeIfAbsent(c.topicPartition(), tp -> new java.util.TreeMap<>()).put(c.commitOffset(), c);
                }
            }
            List<CommitLog> logs = new ArrayList<>();
            ordered.forEach((group, byPartition) -> byPartition.forEach((tp, log) -> {
                List<SourceOffsetCommitRecord> inOrder = List.copyOf(log.values());
                logs.add(new CommitLog(group, tp, inOrder,
                    inOrder.stream().map(c -> families.get(c.producerId() + "/" + c.producerEpoch())).toList(), unshownBeforeMs));
            }));
            logs.sort(Comparator.comparing((CommitLog l) -> l.group).thenComparing(l -> l.tp.topic()).thenComparingInt(l -> l.tp.partition()));
            return logs;
        }

        /**
         * Cuts the log at its first kept commit whose transaction is not whole under {@code cuts} (or, shown nowhere,
         * committed too late to tell), or whose offset lies past its partition's cut. Returns true if it was cut lower.
         */
        boolean lower(Map<TopicPartition, Long> cuts) {
            for (int i = 0; i < kept; i++) {
                List<Occurrence> transaction = transactions.get(i);
                boolean whole = transaction == null ? commits.get(i).committedMs() < unshownBeforeMs
                    : transaction.stream().allMatch(o -> o.wholeBelow(cuts.get(o.tp)));
                if (!whole || commits.get(i).offset() > cuts.get(tp)) {
                    kept = i;
                    return true;
                }
            }
            return false;
        }

        /** The transactions, as the tails show them, of the commits the log's cut removes. */
        List<List<Occurrence>> transactionsCut() {
            return transactions.subList(kept, transactions.size()).stream().filter(java.util.Objects::nonNull).toList();
        }

        GroupOffset offset() {
            return new GroupOffset(group, tp, kept == 0 ? -1 : commits.get(kept - 1).offset(), commits.size() - kept);
        }
    }

    /**
     * Adds to each committed transaction the partitions the source's log says it wrote to and whose windows do not hold
     * any of its records: never kept there, never whole. A window that may begin after the transaction did is read from
     * further back first ({@code needEarlier}). A transaction none of whose records any window holds joins
     * {@code committed} and {@code families} with those partitions alone.
     */
    private static void addUnmirrored(List<List<Occurrence>> committed, Map<String, List<Occurrence>> families,
                                      List<SourceTransaction> known, Map<TopicPartition, PartitionTail> tails, Set<TopicPartition> needEarlier) {
        for (SourceTransaction k : known) {
            if (!k.commit()) {
                continue;
            }
            String key = k.producerId() + "/" + k.dataEpoch();
            List<Occurrence> transaction = families.get(key);
            if (transaction == null) {
                // None of its records is in any window: never kept, so never split; what a commit of it needs to know.
                transaction = new ArrayList<>();
                families.put(key, transaction);
                committed.add(transaction);
            }
            for (TopicPartition tp : k.partitions()) {
                PartitionTail tail = tails.get(tp);
                if (tail == null || transaction.stream().anyMatch(o -> o.tp.equals(tp))) {
                    continue;
                }
                if (tail.atLogStart() || tail.windowFromMs() >= 0 && tail.windowFromMs() <= k.startMs() - CLOCK_MARGIN_MS) {
                    transaction.add(Occurrence.unmirrored(tp, k.producerId(), k.dataEpoch()));
                } else {
                    needEarlier.add(tp);
                }
            }
        }
    }

    /** True if the transaction is kept on some partition and not whole on some partition under {@code cuts}. */
    private static boolean split(List<Occurrence> transaction, Map<TopicPartition, Long> cuts) {
        boolean kept = transaction.stream().anyMatch(o -> o.keptBelow(cuts.get(o.tp)));
        return kept && transaction.stream().anyMatch(o -> !o.wholeBelow(cuts.get(o.tp)));
    }

    private static SplitTransaction describe(List<Occurrence> transaction, Map<TopicPartition, Long> cuts) {
        Occurrence first = transaction.stream().filter(o -> o.dataEpoch >= 0).findFirst().orElse(transaction.get(0));
        List<SplitTransaction.Part> parts = transaction.stream()
            .sorted(Comparator.comparing((Occurrence o) -> o.tp.topic()).thenComparingInt(o -> o.tp.partition()).thenComparingLong(o -> o.lastDataOffset))
            .map(o -> {
                if (o.unmirrored()) {
                    return new SplitTransaction.Part(o.tp.topic(), o.tp.partition(), -1, -1, -1, 0, 0);
                }
                long cut = cuts.get(o.tp);
                long kept = o.records.stream().filter(r -> r[0] < cut).mapToLong(r -> r[1]).sum();
                long removed = o.records.stream().filter(r -> r[0] >= cut).mapToLong(r -> r[1]).sum();
                return new SplitTransaction.Part(o.tp.topic(), o.tp.partition(), o.firstOffset, o.lastDataOffset, o.markerOffset, kept,
                    removed);
            }).toList();
        return new SplitTransaction(first.producerId, first.dataEpoch >= 0 ? first.dataEpoch : first.markerEpoch, parts);
    }

    /**
     * The committed transactions, each as its occurrences on the partitions: grouped by producer id and the epoch of
     * their records. An occurrence seen only by its marker (its records lie before the window) joins the transaction of
     * its producer whose records have the marker's epoch less the producer's bump: 1 under version 2 (the marker
     * carries the next epoch), 0 under version 1, as the producer's other transactions show; both candidates, taken as
     * one, when none shows it. {@code byKey} receives every transaction, open and aborted ones too, by producer id and
     * epoch of its records.
     */
    private static List<List<Occurrence>> committedTransactions(List<Occurrence> occurrences, Map<String, List<Occurrence>> byKey) {
        Map<Long, Integer> bumps = new HashMap<>();
        for (Occurrence o : occurrences) {
            if (o.dataEpoch >= 0) {
                byKey.computeIfAbsent(o.producerId + "/" + o.dataEpoch, k -> new ArrayList<>()).add(o);
                if (o.markerEpoch >= 0 && o.markerEpoch - o.dataEpoch <= 1) {
                    bumps.putIfAbsent(o.producerId, o.markerEpoch - o.dataEpoch);
                }
            }
        }
        occurrences.stream().filter(o -> o.dataEpoch < 0).forEach(o -> joinByMarker(o, byKey, bumps.get(o.producerId)));
        Set<List<Occurrence>> distinct = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        distinct.addAll(byKey.values()); // a merge leaves one list under two keys
        return new ArrayList<>(distinct.stream().filter(t -> t.stream().anyMatch(o -> Boolean.TRUE.equals(o.commit))).toList());
    }

    /** Adds an occurrence seen only by its marker to its transaction, given its producer's epoch bump (null: unknown). */
    private static void joinByMarker(Occurrence o, Map<String, List<Occurrence>> byKey, Integer bump) {
        List<Occurrence> same = bump == null || bump == 0 ? byKey.get(o.producerId + "/" + o.markerEpoch) : null;
        List<Occurrence> previous = bump == null || bump == 1 ? byKey.get(o.producerId + "/" + (o.markerEpoch - 1)) : null;
        if (same != null && previous != null && same != previous) {
            same.addAll(previous);
            byKey.put(o.producerId + "/" + (o.markerEpoch - 1), same);
        }
        List<Occurrence> into = same != null ? same : previous;
        if (into != null) {
            into.add(o);
        }
    }

    /** The transactions of one partition's tail, in log order. */
    private static List<Occurrence> occurrences(PartitionTail tail) {
        List<Occurrence> out = new ArrayList<>();
        Map<Long, Occurrence> open = new HashMap<>();
        Set<Long> seen = new java.util.HashSet<>();
        for (PartitionTail.Batch b : tail.batches()) {
            if (b.producerId() < 0) {
                continue;
            }
            if (b.marker() != null) {
                Occurrence o = open.remove(b.producerId());
                if (o == null) {
                    // Its records lie before the window (or before the log start, deleted: then it begins there).
                    o = new Occurrence(tail.tp(), b.producerId(), -1, tail.atLogStart() ? tail.windowStart() : -1);
                    o.lastDataOffset = tail.windowStart() - 1;
                    out.add(o);
                }
                o.markerOffset = b.baseOffset();
                o.markerEpoch = b.producerEpoch();
                o.commit = b.marker();
            } else if (b.isTransactionData()) {
                Occurrence o = open.get(b.producerId());
                if (o == null) {
                    boolean begunHere = seen.contains(b.producerId()) || tail.atLogStart() || b.baseOffset() >= tail.lastStableOffset();
                    o = new Occurrence(tail.tp(), b.producerId(), b.producerEpoch(), begunHere ? b.baseOffset() : -1);
                    open.put(b.producerId(), o);
                    out.add(o);
                }
                o.lastDataOffset = b.lastOffset();
                o.records.add(new long[] {b.baseOffset(), b.dataRecords()});
            }
            seen.add(b.producerId());
        }
        return out;
    }

    /** One transaction's records (and marker) on one partition. */
    private static final class Occurrence {
        final TopicPartition tp;
        final long producerId;
        final short dataEpoch;
        /** Its first record, or -1 when it began before the window. */
        final long firstOffset;
        long lastDataOffset;
        long markerOffset = -1;
        short markerEpoch = -1;
        Boolean commit;
        /** Its batches in the window: base offset and data records. */
        final List<long[]> records = new ArrayList<>();

        Occurrence(TopicPartition tp, long producerId, int dataEpoch, long firstOffset) {
            this.tp = tp;
            this.producerId = producerId;
            this.dataEpoch = (short) dataEpoch;
            this.firstOffset = firstOffset;
        }

        /** A partition the transaction wrote to on the source that holds none of its records: never kept, never whole. */
        static Occurrence unmirrored(TopicPartition tp, long producerId, int dataEpoch) {
            Occurrence o = new Occurrence(tp, producerId, dataEpoch, Long.MAX_VALUE);
            o.lastDataOffset = Long.MAX_VALUE;
            return o;
        }

        boolean unmirrored() {
            return firstOffset == Long.MAX_VALUE;
        }

        /** Some of its records lie below {@code cut} (always, when it began before the window). */
        boolean keptBelow(long cut) {
            return firstOffset < 0 || firstOffset < cut;
        }

        /** All of its records lie below {@code cut}. */
        boolean wholeBelow(long cut) {
            return lastDataOffset < cut;
        }
    }
}
