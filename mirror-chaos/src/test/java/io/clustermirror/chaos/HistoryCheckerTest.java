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
            ByteBuffer buffer = MemoryRecords.withRecords(base, Compression.NONE, epoch, records).buffer();
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            out.write(bytes);
        }
        Path partition = Files.createDirectories(dir.resolve(name));
        Files.write(partition.resolve("00000000000000000000.log"), out.toByteArray());
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
            ByteBuffer buffer = MemoryRecords.withIdempotentRecords(batch[0], Compression.NONE, batch[1], (short) 0, (int) batch[0], 0,
                new SimpleRecord(1_000L, null, "v".getBytes(StandardCharsets.UTF_8)),
                new SimpleRecord(1_001L, null, "w".getBytes(StandardCharsets.UTF_8))).buffer();
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            out.write(bytes);
        }
        Path partition = Files.createDirectories(dir.resolve("stopped"));
        Files.write(partition.resolve("00000000000000000000.log"), out.toByteArray());
        List<SegmentBatches.Batch> log = SegmentBatches.read(partition);
        List<ProducerState> active = List.of(new ProducerState(7, 0, 5, 0, OptionalInt.empty(), OptionalLong.empty()),
            new ProducerState(8, 0, 3, 0, OptionalInt.empty(), OptionalLong.empty()),
            new ProducerState(9, 0, 1, 0, OptionalInt.empty(), OptionalLong.empty()));

        List<String> stranded = HistoryChecker.strandedProducers(active, log, 3);

        assertEquals(2, stranded.size(), stranded.toString());
        assertTrue(stranded.get(0).startsWith("producer id 8 ") && stranded.get(0).contains("batch [2, 3]"), stranded.get(0));
        assertTrue(stranded.get(1).startsWith("producer id 9 ") && stranded.get(1).contains("not in the log"), stranded.get(1));
    }

    @Test
    void aMovedGroupResumesAtItsLastSyncedCommit() {
        org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition("t", 0);
        long stopAt = 200_000;
        List<MovingGroup.Commit> commits = List.of(new MovingGroup.Commit(tp, 10, 50_000), new MovingGroup.Commit(tp, 20, 100_000),
            new MovingGroup.Commit(tp, 30, 190_000), new MovingGroup.Commit(new org.apache.kafka.common.TopicPartition("t", 1), 99, 10_000));

        assertEquals(List.of(), HistoryChecker.groupMoveViolations(tp, commits, 20, 20, 20, 40, stopAt), "the commit synced before the stop");
        assertEquals(List.of(), HistoryChecker.groupMoveViolations(tp, commits, 30, 31, 31, 40, stopAt), "the last commit");
        assertEquals(List.of(), HistoryChecker.groupMoveViolations(tp, commits, 15, 15, 15, 15, stopAt), "clamped to the barrier");
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, 31, 31, 31, 40, stopAt).get(0).contains("skips"));
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, 30, 30, 30, 20, stopAt).get(0).contains("skips"), "past the barrier");
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, 10, 10, 10, 40, stopAt).get(0).contains("reads [10, 20) again"));
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, 20, 25, 21, 40, stopAt).get(0).contains("read offset 25 first"));
        assertTrue(HistoryChecker.groupMoveViolations(tp, commits, -1, -1, -1, 40, stopAt).get(0).contains("no committed offset"));
        assertEquals(List.of(), HistoryChecker.groupMoveViolations(tp, List.of(new MovingGroup.Commit(tp, 5, 150_000)), -1, -1, -1, 40, stopAt),
            "nothing committed long enough before the stop to be synced");
    }
}
