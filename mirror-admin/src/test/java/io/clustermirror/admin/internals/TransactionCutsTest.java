package io.clustermirror.admin.internals;

import io.clustermirror.admin.SplitTransaction;
import io.clustermirror.common.compat.SourceTransaction;
import io.clustermirror.common.records.SourceOffsetCommitRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TransactionCutsTest {
    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);
    private static final TopicPartition P2 = new TopicPartition("payments", 0);

    /** A partition's log, batch by batch, from offset 0 (or from a window start). */
    private static final class Log {
        final TopicPartition tp;
        final long start;
        final List<PartitionTail.Batch> batches = new ArrayList<>();

        Log(TopicPartition tp, long start) {
            this.tp = tp;
            this.start = start;
        }

        Log(TopicPartition tp) {
            this(tp, 0);
        }

        long end() {
            return batches.isEmpty() ? start : batches.get(batches.size() - 1).lastOffset() + 1;
        }

        Log data(long producerId, int epoch, int records) {
            batches.add(new PartitionTail.Batch(end(), end() + records - 1, producerId, (short) epoch, true, null, records));
            return this;
        }

        Log plain(int records) {
            batches.add(new PartitionTail.Batch(end(), end() + records - 1, -1, (short) -1, false, null, records));
            return this;
        }

        Log marker(long producerId, int epoch, boolean commit) {
            batches.add(new PartitionTail.Batch(end(), end(), producerId, (short) epoch, true, commit, 0));
            return this;
        }

        /** The tail as the destination holds it: its last stable offset is the first record of the oldest open transaction. */
        PartitionTail tail() {
            Map<Long, Long> open = new LinkedHashMap<>();
            for (PartitionTail.Batch b : batches) {
                if (b.marker() != null) {
                    open.remove(b.producerId());
                } else if (b.transactional()) {
                    open.putIfAbsent(b.producerId(), b.baseOffset());
                }
            }
            long lso = open.values().stream().mapToLong(Long::longValue).min().orElse(end());
            return new PartitionTail(tp, start, -1, start == 0, lso, end(), batches);
        }
    }

    @Test
    void aTransactionCommittedOnOnePartitionAndOpenOnAnotherIsSplitAndTheConsistentCutRemovesItFromBoth() {
        Log p0 = new Log(P0).plain(3).data(7, 2, 5).marker(7, 3, true);
        Log p1 = new Log(P1).plain(2).data(7, 2, 5); // its commit marker is not mirrored yet

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail(), p1.tail()));

        assertEquals(List.of(new SplitTransaction(7, (short) 2, List.of(
            new SplitTransaction.Part("orders", 0, 3, 7, 8, 5, 0),
            new SplitTransaction.Part("orders", 1, 2, 6, -1, 0, 5)))), a.splitByPlainStop());
        assertEquals(Map.of(P0, 3L, P1, 2L), a.consistentCuts());
        assertEquals(Map.of(P0, 5L, P1, 0L), a.extraRecords(), "the five committed records of p0, nothing more on p1");
        assertEquals(Set.of(), a.needEarlierWindow());
        assertFalse(a.epochsReused());
    }

    @Test
    void aTransactionWholeOnEveryPartitionIsNotSplitAndNothingMoreIsCut() {
        Log p0 = new Log(P0).data(7, 2, 5).marker(7, 3, true).data(8, 0, 2);
        Log p1 = new Log(P1).data(7, 2, 5).marker(7, 3, true);

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail(), p1.tail()));

        assertEquals(List.of(), a.splitByPlainStop());
        assertEquals(Map.of(P0, 6L, P1, 6L), a.consistentCuts(), "the last stable offsets: producer 8 is open on p0");
        assertEquals(Map.of(P0, 0L, P1, 0L), a.extraRecords());
    }

    @Test
    void aCommittedTransactionWhoseMarkerAloneLiesPastTheCutStaysWhole() {
        // Producer 7's records all lie below producer 8's open transaction; only its marker is past the cut.
        Log p0 = new Log(P0).data(7, 2, 3).data(8, 0, 1).marker(7, 3, true);
        Log p1 = new Log(P1).data(7, 2, 3).marker(7, 3, true);

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail(), p1.tail()));

        assertEquals(List.of(), a.splitByPlainStop());
        assertEquals(Map.of(P0, 3L, P1, 4L), a.consistentCuts());
    }

    @Test
    void aCommittedTransactionWithRecordsOnBothSidesOfOnePartitionsCutIsSplitThere() {
        // 7 begins, 8 begins, 7 writes again and commits; 8 stays open: the cut at 8's first record halves 7's records.
        Log p0 = new Log(P0).data(7, 2, 2).data(8, 0, 1).data(7, 2, 2).marker(7, 3, true);

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail()));

        assertEquals(List.of(new SplitTransaction(7, (short) 2, List.of(new SplitTransaction.Part("orders", 0, 0, 4, 5, 2, 2)))),
            a.splitByPlainStop());
        assertEquals(Map.of(P0, 0L), a.consistentCuts());
        assertEquals(Map.of(P0, 2L), a.extraRecords());
    }

    @Test
    void anAbortedTransactionIsNeverSplit() {
        Log p0 = new Log(P0).data(7, 2, 2).data(8, 0, 1).data(7, 2, 2).marker(7, 3, false);
        Log p1 = new Log(P1).data(7, 2, 2).marker(7, 3, false);

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail(), p1.tail()));

        assertEquals(List.of(), a.splitByPlainStop());
        assertEquals(Map.of(P0, 2L, P1, 3L), a.consistentCuts());
    }

    @Test
    void cuttingOneTransactionCanSplitAnotherWhichIsCutToo() {
        // 9 spans p1 and p2 and is open on p2: p1 is cut at 9's first record, which removes 7's records on p1, so 7 is
        // cut on p0 too, although it is whole on p0 and p1 under the plain cuts.
        Log p0 = new Log(P0).data(7, 2, 1).marker(7, 3, true);
        Log p1 = new Log(P1).plain(1).data(9, 0, 2).data(7, 2, 1).marker(9, 1, true).marker(7, 3, true);
        Log p2 = new Log(P2).data(9, 0, 3);

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail(), p1.tail(), p2.tail()));

        assertEquals(List.of(9L), a.splitByPlainStop().stream().map(SplitTransaction::producerId).toList(), "only 9 is split now");
        assertEquals(Map.of(P0, 0L, P1, 1L, P2, 0L), a.consistentCuts());
        assertEquals(Map.of(P0, 1L, P1, 3L, P2, 0L), a.extraRecords());
    }

    @Test
    void aTransactionThatBeganBeforeTheWindowAsksForAnEarlierOne() {
        Log p0 = new Log(P0, 100).data(7, 2, 2).marker(7, 3, true); // 7 may have begun before 100
        Log p1 = new Log(P1).data(7, 2, 2);

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail(), p1.tail()));

        assertEquals(Set.of(P0), a.needEarlierWindow());
        assertEquals(List.of(-1L, 0L), a.splitByPlainStop().get(0).parts().stream().map(SplitTransaction.Part::firstOffset).toList());

        Log whole = new Log(P0, 98).marker(7, 1, true).data(7, 2, 2).marker(7, 3, true); // an earlier marker: it began at 99
        TransactionCuts.Analysis again = TransactionCuts.analyse(List.of(whole.tail(), p1.tail()));
        assertEquals(Set.of(), again.needEarlierWindow());
        assertEquals(Map.of(P0, 99L, P1, 0L), again.consistentCuts());
    }

    @Test
    void aMarkerWhoseRecordsLieBeforeTheWindowJoinsItsTransactionByTheProducersEpochBump() {
        // Version 2: producer 7's markers carry the next epoch; the one at 50 closes the transaction of epoch 2, open on p1.
        Log p0 = new Log(P0, 50).marker(7, 3, true).data(7, 3, 1).marker(7, 4, true);
        Log p1 = new Log(P1).data(7, 2, 2);

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail(), p1.tail()));

        assertEquals(List.of(2), a.splitByPlainStop().stream().map(t -> (int) t.producerEpoch()).toList());
        assertEquals(Set.of(P0), a.needEarlierWindow(), "its first record on p0 lies before the window");
    }

    @Test
    void transactionsOfOneProducerSharingAnEpochAreCutTogether() {
        // Version 1: two transactions of producer 7 at epoch 2; the second is open on p1. Both are taken as one.
        Log p0 = new Log(P0).data(7, 2, 1).marker(7, 2, true).data(7, 2, 1).marker(7, 2, true);
        Log p1 = new Log(P1).data(7, 2, 1).marker(7, 2, true).data(7, 2, 1);

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail(), p1.tail()));

        assertTrue(a.epochsReused());
        assertEquals(Map.of(P0, 0L, P1, 0L), a.consistentCuts(), "more than needed, never a split");
    }

    @Test
    void aTransactionTheSourcesLogNamesOnAPartitionThatMirroredNoneOfItIsSplit() {
        // Producer 7's transaction (records at epoch 2, markers at 3: version 2) wrote to p0 and p1 on the source; p1's mirror
        // fetched none of it. The data alone shows nothing; the source's log names p1.
        Log p0 = new Log(P0).plain(3).data(7, 2, 5).marker(7, 3, true);
        Log p1 = new Log(P1).plain(2);
        SourceTransaction known = new SourceTransaction(7, (short) 3, true, true, 100_000L, 101_000L, List.of(P0, P1));
        PartitionTail p0Tail = withWindowFrom(p0.tail(), 100_000L - TransactionCuts.CLOCK_MARGIN_MS);
        PartitionTail p1Tail = withWindowFrom(p1.tail(), 100_000L - TransactionCuts.CLOCK_MARGIN_MS);

        assertEquals(List.of(), TransactionCuts.analyse(List.of(p0Tail, p1Tail)).splitByPlainStop(), "not seen from the data");
        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0Tail, p1Tail), List.of(known));

        assertEquals(List.of(new SplitTransaction(7, (short) 2, List.of(new SplitTransaction.Part("orders", 0, 3, 7, 8, 5, 0),
            new SplitTransaction.Part("orders", 1, -1, -1, -1, 0, 0)))), a.splitByPlainStop());
        assertEquals(Map.of(P0, 3L, P1, 2L), a.consistentCuts());
        assertEquals(Map.of(P0, 5L, P1, 0L), a.extraRecords());
    }

    @Test
    void aWindowThatMayBeginAfterAKnownTransactionBeganIsReadFromFurtherBack() {
        Log p0 = new Log(P0).data(7, 2, 5).marker(7, 3, true);
        Log p1 = new Log(P1, 10);
        SourceTransaction known = new SourceTransaction(7, (short) 3, true, true, 100_000L, 101_000L, List.of(P0, P1));

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(withWindowFrom(p0.tail(), 0), withWindowFrom(p1.tail(), 99_000L)),
            List.of(known));

        assertEquals(Set.of(P1), a.needEarlierWindow(), "p1's window holds records from 99 s only: 7's may lie before it");
        assertEquals(List.of(), a.splitByPlainStop(), "nothing is claimed before that is read");
        TransactionCuts.Analysis aborted = TransactionCuts.analyse(List.of(withWindowFrom(p0.tail(), 0), withWindowFrom(p1.tail(), 0)),
            List.of(new SourceTransaction(7, (short) 3, true, false, 100_000L, 101_000L, List.of(P0, P1))));
        assertEquals(List.of(), aborted.splitByPlainStop(), "only what committed counts");
    }

    /** A transactional offset commit of group "app" on the input partition P2, made by producer 7's transaction at {@code epoch}. */
    private static SourceOffsetCommitRecord commit(int epoch, long offset, long markerOffset) {
        return new SourceOffsetCommitRecord("dr", "app", P2.topic(), P2.partition(), offset, 7, (short) epoch, 12, markerOffset, 1_000L);
    }

    @Test
    void aGroupThatCommitsInTransactionsGetsTheOffsetOfTheLastTransactionTheCutKeeps() {
        // A read-process-write step per transaction: T1 (records at epoch 2) read P2 up to 5 and wrote P0; T2 (epoch 3) read
        // up to 10 and wrote P0 and P1, whose mirror has not fetched T2's commit marker.
        Log p0 = new Log(P0).data(7, 2, 5).marker(7, 3, true).data(7, 3, 5).marker(7, 4, true);
        Log p1 = new Log(P1).data(7, 3, 5);
        Log p2 = new Log(P2).plain(20);
        List<SourceOffsetCommitRecord> commits = List.of(commit(3, 10, 40), commit(2, 5, 30), commit(3, 10, 40));

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail(), p1.tail(), p2.tail()), List.of(), commits);

        assertEquals(Map.of(P0, 6L, P1, 0L, P2, 20L), a.consistentCuts(), "T2 removed, the input whole");
        assertEquals(List.of(new TransactionCuts.GroupOffset("app", P2, 5, 1)), a.groupOffsets(),
            "resumed at 5, the application reads again exactly the input whose output T2 wrote");
        TransactionCuts.Analysis whole = TransactionCuts.analyse(List.of(p0.tail(), new Log(P1).data(7, 3, 5).marker(7, 4, true).tail(),
            p2.tail()), List.of(), commits);
        assertEquals(List.of(new TransactionCuts.GroupOffset("app", P2, 10, 0)), whole.groupOffsets(), "T2 kept, its offset too");
    }

    @Test
    void aCommitWhoseTransactionsOutputWasNeverMirroredIsCut() {
        // T2 wrote P0 and committed P2's offset on the source; P0's mirror fetched none of T2. Only the source's
        // transaction log, which names P0 (and the group's offsets partition), shows that T2's output is missing.
        Log p0 = new Log(P0).data(7, 2, 5).marker(7, 3, true);
        Log p2 = new Log(P2).plain(20);
        List<SourceOffsetCommitRecord> commits = List.of(commit(2, 5, 30), commit(3, 10, 40));
        SourceTransaction t2 = new SourceTransaction(7, (short) 4, true, true, 100_000L, 101_000L,
            List.of(P0, new TopicPartition("__consumer_offsets", 12)));
        List<PartitionTail> tails = List.of(withWindowFrom(p0.tail(), 0), withWindowFrom(p2.tail(), 0));

        assertEquals(List.of(new TransactionCuts.GroupOffset("app", P2, 10, 0)), TransactionCuts.analyse(tails, List.of(), commits)
            .groupOffsets(), "without the log nothing shows T2's output is missing");
        TransactionCuts.Analysis a = TransactionCuts.analyse(tails, List.of(t2), commits);
        assertEquals(List.of(new TransactionCuts.GroupOffset("app", P2, 5, 1)), a.groupOffsets());
        assertEquals(Map.of(P0, 6L, P2, 20L), a.consistentCuts(), "T1 stays whole");
    }

    @Test
    void aTransactionThatReadInputTheDestinationDoesNotHoldIsCutWithItsOutput() {
        // T2 is whole on the output partitions, but read P2 up to 15 and the destination holds P2 up to 12 only: resumed
        // at 15 the application would skip input; resumed at 5 it would write T2's output again. So T2 goes.
        Log p0 = new Log(P0).data(7, 2, 5).marker(7, 3, true).data(7, 3, 5).marker(7, 4, true);
        Log p1 = new Log(P1).data(7, 3, 5).marker(7, 4, true);
        Log p2 = new Log(P2).plain(12);

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail(), p1.tail(), p2.tail()), List.of(),
            List.of(commit(2, 5, 30), commit(3, 15, 40)));

        assertEquals(Map.of(P0, 6L, P1, 0L, P2, 12L), a.consistentCuts());
        assertEquals(List.of(new TransactionCuts.GroupOffset("app", P2, 5, 1)), a.groupOffsets());
        assertEquals(List.of(), a.splitByPlainStop(), "no transaction is split: the input is what is missing");
    }

    @Test
    void cuttingACommitCutsTheLaterTransactionsOfTheSameGroupThatWroteElsewhere() {
        // T1 wrote P0, whose mirror lags (T1 open there); T2 wrote P1 and is whole. Keeping T2's offset would skip T1's
        // input, whose output is cut: the commit log is cut at T1, which cuts T2 from P1.
        Log p0 = new Log(P0).data(7, 2, 5);
        Log p1 = new Log(P1).data(7, 3, 5).marker(7, 4, true);
        Log p2 = new Log(P2).plain(20);

        TransactionCuts.Analysis a = TransactionCuts.analyse(List.of(p0.tail(), p1.tail(), p2.tail()), List.of(),
            List.of(commit(2, 5, 30), commit(3, 10, 40)));

        assertEquals(Map.of(P0, 0L, P1, 0L, P2, 20L), a.consistentCuts());
        assertEquals(List.of(new TransactionCuts.GroupOffset("app", P2, -1, 2)), a.groupOffsets(), "no known commit is kept");
    }

    @Test
    void aCommitWhoseTransactionNothingShowsIsKeptOnlyIfItCommittedBeforeTheOffsetsWereRead() {
        // T2 committed P2's offset 10 at 1 000 ms (commit(...) gives that time) and its output shows nowhere: it may have
        // written output beyond the ends read, which the stop cuts, when the ends were read before it committed.
        Log p0 = new Log(P0).data(7, 2, 5).marker(7, 3, true);
        Log p2 = new Log(P2).plain(20);
        List<SourceOffsetCommitRecord> commits = List.of(commit(2, 5, 30), commit(3, 10, 40));
        List<PartitionTail> tails = List.of(p0.tail(), p2.tail());

        assertEquals(List.of(new TransactionCuts.GroupOffset("app", P2, 10, 0)),
            TransactionCuts.analyse(tails, List.of(), commits, 1_001L).groupOffsets(), "committed before: it wrote nothing shown");
        assertEquals(List.of(new TransactionCuts.GroupOffset("app", P2, 5, 1)),
            TransactionCuts.analyse(tails, List.of(), commits, 1_000L).groupOffsets(), "committed since: not kept");
    }

    private static PartitionTail withWindowFrom(PartitionTail t, long fromMs) {
        return new PartitionTail(t.tp(), t.windowStart(), fromMs, t.atLogStart(), t.lastStableOffset(), t.end(), t.batches());
    }

    /**
     * Random histories: producers write transactions over random partitions, interleaved, and commit or abort them (the
     * markers reach the partitions one by one); the destination holds a random prefix of each partition. Under the
     * consistent cuts, every committed transaction that left records in the destination is either visible whole on every
     * partition that holds any of it or on none, and raising any partition's cut to its next batch would break that.
     */
    @Test
    void randomHistoriesCutConsistentlyAndAsLateAsPossible() {
        for (int seed = 1; seed <= 200; seed++) {
            Random random = new Random(seed);
            List<TopicPartition> partitions = List.of(P0, P1, P2);
            Map<TopicPartition, Log> source = new LinkedHashMap<>();
            partitions.forEach(tp -> source.put(tp, new Log(tp)));
            Map<String, Boolean> outcomes = new HashMap<>();
            Map<Long, Integer> epochs = new HashMap<>();
            Map<Long, List<TopicPartition>> openOn = new HashMap<>();
            for (int step = 0; step < 40; step++) {
                long producer = random.nextInt(4);
                int epoch = epochs.computeIfAbsent(producer, p -> 0);
                List<TopicPartition> touched = openOn.get(producer);
                if (touched != null && random.nextInt(3) == 0) {
                    boolean commit = random.nextBoolean();
                    outcomes.put(producer + "/" + epoch, commit);
                    for (TopicPartition tp : touched) {
                        source.get(tp).marker(producer, epoch + 1, commit);
                    }
                    openOn.remove(producer);
                    epochs.put(producer, epoch + 1);
                } else if (random.nextInt(5) == 0) {
                    source.get(partitions.get(random.nextInt(3))).plain(1 + random.nextInt(2));
                } else {
                    TopicPartition tp = partitions.get(random.nextInt(3));
                    source.get(tp).data(producer, epoch, 1 + random.nextInt(3));
                    List<TopicPartition> on = openOn.computeIfAbsent(producer, p -> new ArrayList<>());
                    if (!on.contains(tp)) {
                        on.add(tp);
                    }
                }
            }
            List<PartitionTail> tails = new ArrayList<>();
            for (Log log : source.values()) {
                Log prefix = new Log(log.tp);
                int keep = random.nextInt(log.batches.size() + 1);
                prefix.batches.addAll(log.batches.subList(0, keep));
                tails.add(prefix.tail());
            }
            TransactionCuts.Analysis a = TransactionCuts.analyse(tails);
            String at = "seed " + seed;
            for (PartitionTail t : tails) {
                assertTrue(a.consistentCuts().get(t.tp()) <= t.lastStableOffset(), at);
            }
            assertEquals(List.of(), splits(tails, outcomes, a.consistentCuts()), at);
            for (PartitionTail t : tails) {
                long cut = a.consistentCuts().get(t.tp());
                long next = t.batches().stream().mapToLong(PartitionTail.Batch::baseOffset).filter(o -> o > cut && o <= t.lastStableOffset())
                    .min().orElse(-1);
                if (next >= 0) {
                    Map<TopicPartition, Long> raised = new HashMap<>(a.consistentCuts());
                    raised.put(t.tp(), next);
                    assertFalse(splits(tails, outcomes, raised).isEmpty(), at + ": " + t.tp() + " could be cut at " + next);
                }
            }
            assertEquals(splits(tails, outcomes, Map.copyOf(plainCuts(tails))).size() > 0, !a.splitByPlainStop().isEmpty(), at);
        }
    }

    private static Map<TopicPartition, Long> plainCuts(List<PartitionTail> tails) {
        Map<TopicPartition, Long> cuts = new HashMap<>();
        tails.forEach(t -> cuts.put(t.tp(), t.lastStableOffset()));
        return cuts;
    }

    /**
     * The committed transactions a cut splits, from the history itself: those whose records, on the partitions that hold
     * any, are visible (below the cut) on some and not all.
     */
    private static List<String> splits(List<PartitionTail> tails, Map<String, Boolean> outcomes, Map<TopicPartition, Long> cuts) {
        Map<String, long[]> visibleAndHeld = new LinkedHashMap<>();
        for (PartitionTail t : tails) {
            long cut = cuts.get(t.tp());
            for (PartitionTail.Batch b : t.batches()) {
                if (b.transactional() && b.marker() == null) {
                    long[] counts = visibleAndHeld.computeIfAbsent(b.producerId() + "/" + b.producerEpoch(), k -> new long[2]);
                    counts[1]++;
                    if (b.lastOffset() < cut) {
                        counts[0]++;
                    }
                }
            }
        }
        List<String> split = new ArrayList<>();
        visibleAndHeld.forEach((txn, counts) -> {
            if (Boolean.TRUE.equals(outcomes.get(txn)) && counts[0] > 0 && counts[0] < counts[1]) {
                split.add(txn);
            }
        });
        return split;
    }
}
