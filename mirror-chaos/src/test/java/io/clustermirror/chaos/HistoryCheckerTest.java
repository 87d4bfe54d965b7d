package io.clustermirror.chaos;

import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The identity comparison on real segment files: a source log of three batches and replicas of it written with another
 * partition leader epoch (as a destination leader stamps them), whole, cut short, corrupted or with a batch missing.
 */
class HistoryCheckerTest {
    /** Batches at offsets [0, 2], [3, 4] and [5, 8]. */
    private static final long[][] BATCHES = {{0, 3}, {3, 2}, {5, 4}};

    @TempDir
    Path dir;

    /** Writes a segment file holding the given batches of the source log (indexes into {@link #BATCHES}), stamped with {@code epoch}. */
    private Path log(String name, int epoch, int... batches) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int b : batches) {
            long base = BATCHES[b][0];
            SimpleRecord[] records = new SimpleRecord[(int) BATCHES[b][1]];
            for (int i = 0; i < records.length; i++) {
                records[i] = new SimpleRecord(1_000L + base + i, null, ("value-" + (base + i)).getBytes(StandardCharsets.UTF_8));
            }
            append(out, MemoryRecords.withRecords(base, Compression.NONE, epoch, records).buffer());
        }
        return segment(name, out);
    }

    private static void append(ByteArrayOutputStream out, ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        out.write(bytes, 0, bytes.length);
    }

    /** A partition directory {@code name} whose one segment holds {@code batches}. */
    private Path segment(String name, ByteArrayOutputStream batches) throws IOException {
        Path partition = Files.createDirectories(dir.resolve(name));
        Files.write(partition.resolve("00000000000000000000.log"), batches.toByteArray());
        return partition;
    }

    private static Optional<String> compare(Path source, Path replica, boolean complete) throws IOException {
        return HistoryChecker.compare(SegmentBatches.read(source), "source", SegmentBatches.read(replica), Long.MAX_VALUE, complete);
    }

    @Test
    void aReplicaStampedWithAnotherLeaderEpochIsAnIdenticalPrefix() throws IOException {
        Path source = log("source", 0, 0, 1, 2);
        assertEquals(Optional.empty(), compare(source, log("whole", 7, 0, 1, 2), true));
        assertEquals(Optional.empty(), compare(source, log("prefix", 7, 0, 1), false));
        assertEquals(Optional.empty(), compare(source, log("empty", 7), false));
    }

    @Test
    void aFlippedByteIsNamedWithItsBatchAndField() throws IOException {
        Path source = log("source", 0, 0, 1, 2);
        Path replica = log("replica", 7, 0, 1, 2);
        List<SegmentBatches.Batch> batches = SegmentBatches.read(replica);
        SegmentBatches.Batch second = batches.get(1);
        byte[] file = Files.readAllBytes(replica.resolve(second.segment()));
        int position = (int) second.position() + second.bytes().length - 1;
        file[position] ^= (byte) 0xFF;
        Files.write(replica.resolve(second.segment()), file);

        String difference = compare(source, replica, true).orElseThrow();
        assertTrue(difference.contains("batch [3, 4]") && difference.contains("at byte " + (second.bytes().length - 1))
            && difference.contains("(records)"), difference);
    }

    @Test
    void aMissingOrExtraBatchIsNamed() throws IOException {
        Path source = log("source", 0, 0, 1);
        String hole = compare(source, log("hole", 7, 0, 2), false).orElseThrow();
        assertTrue(hole.contains("batch [5, 8]") && hole.contains("where the source holds batch [3, 4]"), hole);
        String phantom = compare(source, log("phantom", 7, 0, 1, 2), false).orElseThrow();
        assertTrue(phantom.contains("batch [5, 8]") && phantom.contains("beyond the source's last batch"), phantom);
        String cut = compare(log("source-longer", 0, 0, 1, 2), log("short", 7, 0, 1), true).orElseThrow();
        assertTrue(cut.contains("ends before batch [5, 8]"), cut);
    }

    @Test
    void onlyWhatBothLogsStillHoldIsCompared() throws IOException {
        // Retention deleted the first batch on the source only, or on the replica only.
        assertEquals(Optional.empty(), compare(log("source-retained", 0, 1, 2), log("replica-older", 7, 0, 1, 2), true));
        assertEquals(Optional.empty(), compare(log("source-whole", 0, 0, 1, 2), log("replica-retained", 7, 1, 2), true));
        String hole = compare(log("source-retained-2", 0, 1, 2), log("replica-hole", 7, 0, 2), true).orElseThrow();
        assertTrue(hole.contains("where the source holds batch [3, 4]"), hole);
    }

    @Test
    void batchesAtOrAboveTheEndAreNotCompared() throws IOException {
        Path source = log("source", 0, 0, 1);
        assertEquals(Optional.empty(), HistoryChecker.compare(SegmentBatches.read(source), "source",
            SegmentBatches.read(log("beyond-barrier", 7, 0, 1, 2)), 5, true));
    }

    @Test
    void aProducerWithoutAWriteAfterTheBarrierIsStranded() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (long[] batch : new long[][]{{0, 7}, {2, 8}, {4, 7}}) {
            append(out, MemoryRecords.withIdempotentRecords(batch[0], Compression.NONE, batch[1], (short) 0, (int) batch[0], 0,
                new SimpleRecord(1_000L, null, "v".getBytes(StandardCharsets.UTF_8)),
                new SimpleRecord(1_001L, null, "w".getBytes(StandardCharsets.UTF_8))).buffer());
        }
        List<SegmentBatches.Batch> log = SegmentBatches.read(segment("stopped", out));
        List<ProducerState> active = List.of(new ProducerState(7, 0, 5, 0, OptionalInt.empty(), OptionalLong.empty()),
            new ProducerState(8, 0, 3, 0, OptionalInt.empty(), OptionalLong.empty()),
            new ProducerState(9, 0, 1, 0, OptionalInt.empty(), OptionalLong.empty()));

        List<String> stranded = HistoryChecker.strandedProducers(active, log, 3);

        assertEquals(2, stranded.size(), stranded.toString());
        assertTrue(stranded.get(0).startsWith("producer id 8 ") && stranded.get(0).contains("batch [2, 3]"), stranded.get(0));
        assertTrue(stranded.get(1).startsWith("producer id 9 ") && stranded.get(1).contains("not in the log"), stranded.get(1));
    }

    /**
     * The grace for mirrored producers starts again with each incarnation of the broker (the long run of seed 31 named a
     * follower whose broker was killed 4 s into its grace, answered 25 s later with the state it had rebuilt from its log,
     * and removed the producers 0.7 s after that: with one grace across both incarnations that was a violation).
     */
    @Test
    void theProducerStateGraceStartsAgainWhenTheBrokerRestarts() {
        long bound = HistoryChecker.PRODUCER_STATE_BOUND.toNanos();
        HistoryChecker.ProducerStateGrace grace = new HistoryChecker.ProducerStateGrace();
        assertFalse(grace.expired(100, 0), "the first answer opens the grace");
        assertFalse(grace.expired(100, bound - 1));
        assertTrue(grace.expired(100, bound), "over after the bound for the same process");

        HistoryChecker.ProducerStateGrace restarted = new HistoryChecker.ProducerStateGrace();
        assertFalse(restarted.expired(100, 0));
        assertFalse(restarted.expired(200, bound - 10), "a new process rebuilt its state from the log: a grace of its own");
        assertFalse(restarted.expired(200, 2 * bound - 11));
        assertTrue(restarted.expired(200, 2 * bound - 10));
    }

    @Test
    void aMovedGroupResumesAtItsLastSyncedCommit() {
        org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition("t", 0);
        Workload.Side src = Workload.Side.SOURCE;
        long stopAt = 200_000;
        List<MovingGroup.Commit> commits = List.of(new MovingGroup.Commit(src, tp, 10, 50_000), new MovingGroup.Commit(src, tp, 20, 100_000),
            new MovingGroup.Commit(src, tp, 30, 190_000), new MovingGroup.Commit(src, new org.apache.kafka.common.TopicPartition("t", 1), 99, 10_000));

        assertEquals(List.of(), HistoryChecker.groupMoveViolations(tp, commits, src, 20, 20, 20, 40, 0, stopAt), "the commit synced before the stop");
        assertEquals(List.of(), HistoryChecker.groupMoveViolations(tp, commits, src, 30, 31, 31, 40, 0, stopAt), "the last commit");
        assertEquals(List.of(), HistoryChecker.groupMoveViolations(tp, commits, src, 15, 15, 15, 15, 0, stopAt), "clamped to the barrier");
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, src, 31, 31, 31, 40, 0, stopAt).get(0).contains("skips"));
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, src, 30, 30, 30, 20, 0, stopAt).get(0).contains("skips"), "past the barrier");
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, src, 10, 10, 10, 40, 0, stopAt).get(0).contains("reads [10, 20) again"));
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, src, 20, 25, 21, 40, 0, stopAt).get(0).contains("read offset 25 first"));
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, src, -1, -1, -1, 40, 0, stopAt).get(0).contains("no committed offset"));
        assertEquals(List.of(), HistoryChecker.groupMoveViolations(tp, List.of(new MovingGroup.Commit(src, tp, 5, 150_000)), src, -1, -1, -1,
            40, 0, stopAt), "nothing committed long enough before the stop to be synced");
    }

    @Test
    void aGroupMovingBackMayResumeAtItsOwnEarlierCommitThere() {
        org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition("t", 0);
        long stopAt = 300_000;
        // On the destination in an earlier stint up to 200; back on the source it committed only 150 before moving again.
        List<MovingGroup.Commit> commits = List.of(new MovingGroup.Commit(Workload.Side.SOURCE, tp, 100, 50_000),
            new MovingGroup.Commit(Workload.Side.DESTINATION, tp, 200, 120_000), new MovingGroup.Commit(Workload.Side.SOURCE, tp, 150, 290_000));

        assertEquals(List.of(), HistoryChecker.groupMoveViolations(tp, commits, Workload.Side.SOURCE, 200, 200, 200, 400, 0, stopAt));
        // A commit on the side moved to is no evidence of what was synced from the side left; nor is one made before that
        // side mirrored the side left (a failback 100 s before the stop).
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, Workload.Side.DESTINATION, 100, 100, 100, 400, 0, stopAt).get(0)
            .contains("reads [100, 200) again"));
        assertEquals(List.of(), HistoryChecker.groupMoveViolations(tp, commits, Workload.Side.DESTINATION, 100, 100, 100, 400, 200_000, stopAt));
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, Workload.Side.SOURCE, 90, 90, 90, 400, 0, stopAt).get(0)
            .contains("reads [90, 100) again"), "the source's commit of 100 was made 250 s before the stop");
    }

    /** Writes a compacted segment of keyed records ({@code key:value}, value "-" for a tombstone) in batches starting at the given offsets. */
    private Path compactedLog(String name, Object[][] batches) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object[] batch : batches) {
            long base = (Long) batch[0];
            org.apache.kafka.common.record.internal.MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1024),
                Compression.NONE, org.apache.kafka.common.record.TimestampType.CREATE_TIME, base);
            for (int i = 1; i < batch.length; i++) {
                String[] kv = ((String) batch[i]).split(":");
                long offset = Long.parseLong(kv[0]);
                builder.appendWithOffset(offset, new SimpleRecord(1_000L + offset, kv[1].getBytes(StandardCharsets.UTF_8),
                    kv[2].equals("-") ? null : kv[2].getBytes(StandardCharsets.UTF_8)));
            }
            append(out, builder.build().buffer());
        }
        return segment(name, out);
    }

    private static Optional<String> compareCompacted(Path source, Path replica) throws IOException {
        return HistoryChecker.compareCompacted(SegmentBatches.read(source), "source", SegmentBatches.read(replica), Long.MAX_VALUE);
    }

    @Test
    void compactedCopiesCleanedOnTheirOwnScheduleStillMatch() throws IOException {
        // Source: a=1 and b=2 at 0-1, a=3 at 2, b's tombstone at 3, c=5 at 4. The source's cleaner removed a=1 so far.
        Path source = compactedLog("source", new Object[][]{{0L, "1:b:2"}, {2L, "2:a:3"}, {3L, "3:b:-"}, {4L, "4:c:5"}});
        Path uncleaned = compactedLog("uncleaned", new Object[][]{{0L, "0:a:1", "1:b:2"}, {2L, "2:a:3"}, {3L, "3:b:-"}, {4L, "4:c:5"}});
        Path cleaned = compactedLog("cleaned", new Object[][]{{2L, "2:a:3"}, {3L, "3:b:-"}, {4L, "4:c:5"}});
        Path tombstoneRemoved = compactedLog("no-tombstone", new Object[][]{{2L, "2:a:3"}, {4L, "4:c:5"}});
        Path lagging = compactedLog("lagging", new Object[][]{{0L, "0:a:1", "1:b:2"}});

        assertEquals(Optional.empty(), compareCompacted(source, uncleaned));
        assertEquals(Optional.empty(), compareCompacted(source, cleaned));
        assertEquals(Optional.empty(), compareCompacted(source, tombstoneRemoved));
        assertEquals(Optional.empty(), compareCompacted(source, lagging), "a newer record of a key lies beyond what the replica copied");
    }

    @Test
    void aCompactedRecordThatDiffersOrALostLatestValueIsNamed() throws IOException {
        Path source = compactedLog("source", new Object[][]{{0L, "0:a:1", "1:b:2"}, {2L, "2:a:3", "3:b:4"}, {4L, "4:c:5"}});
        String changed = compareCompacted(source, compactedLog("changed", new Object[][]{{0L, "0:a:1", "1:b:2"}, {2L, "2:a:9", "3:b:4"}}))
            .orElseThrow();
        assertTrue(changed.contains("hold different records at the same offsets"), changed);
        String lost = compareCompacted(source, compactedLog("lost", new Object[][]{{0L, "0:a:1", "1:b:2"}, {4L, "4:c:5"}})).orElseThrow();
        assertTrue(lost.contains("the latest record of key") && lost.contains("on the replica but a value at offset"), lost);
        String regrouped = compareCompacted(source, compactedLog("regrouped", new Object[][]{{0L, "0:a:1", "1:b:2", "2:a:3"}})).orElseThrow();
        assertTrue(regrouped.contains("a batch missing or added"), regrouped);
        String phantom = compareCompacted(source, compactedLog("phantom", new Object[][]{{5L, "5:d:6"}})).orElseThrow();
        assertTrue(phantom.contains("beyond the source's last offset 4"), phantom);
    }
}
