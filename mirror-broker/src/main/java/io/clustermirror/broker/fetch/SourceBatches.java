package io.clustermirror.broker.fetch;

import io.clustermirror.common.MirrorError;
import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredBatches;
import org.apache.kafka.common.KafkaException;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

/**
 * Cuts the records of one fetched partition into appendable runs (pure; no I/O).
 *
 * <ul>
 *   <li>Only whole batches: a trailing partial batch (cut at the fetch size limit) is left out.</li>
 *   <li>Every batch must be magic v2: the destination appends with the RAFT_LEADER origin, which keeps
 *       offsets and bytes as they are, and a v0/v1 batch could only be stored re-encoded. The first such batch,
 *       or an unreadable batch header, ends the usable data; the batches before it are still returned, and
 *       {@link #corruption()} describes the bad one.</li>
 *   <li>CRCs are not checked here: Kafka's append checks every batch's CRC whatever the origin, before it writes
 *       anything, so the data path reads each byte once, as a follower does. Only when the append refuses a run as
 *       corrupt does {@link #locateCorruption} find the bad batch, to append the ones before it and name it.</li>
 *   <li>Batches that end before the fetch offset are skipped.</li>
 *   <li>Consecutive batches with the same source partitionLeaderEpoch form one {@link Run}, so each
 *       append (and each progress report) starts at most one new source epoch. The epochs are read
 *       here, before the destination stamps its own epoch into the batches.</li>
 *   <li>A MIRROR_PID_RESET barrier (failback, chains) ends its run, so the destination can clear the
 *       producers before it ahead of appending what follows.</li>
 * </ul>
 */
final class SourceBatches {

    /**
     * Batches of one source epoch, as a slice of the fetched buffer (shares its bytes; position 0, limit its size).
     *
     * @param barrierOffset offset of the barrier that ends the run, or -1
     */
    record Run(ByteBuffer records, long baseOffset, long lastOffset, int sourceEpoch, long newEpochStart,
               int batchCount, long recordCount, long barrierOffset) {
    }

    private final List<Run> runs;
    private final String corruption;
    private final MirrorError corruptionError;
    private final long corruptOffset;
    private final int partialBytes;
    private final long lastTimestamp;

    private SourceBatches(List<Run> runs, String corruption, MirrorError corruptionError, long corruptOffset, int partialBytes,
                          long lastTimestamp) {
        this.runs = runs;
        this.corruption = corruption;
        this.corruptionError = corruptionError;
        this.corruptOffset = corruptOffset;
        this.partialBytes = partialBytes;
        this.lastTimestamp = lastTimestamp;
    }

    List<Run> runs() {
        return runs;
    }

    /** Why the data stopped being usable (a corrupt or unsupported batch), or null. */
    String corruption() {
        return corruption;
    }

    /**
     * The error the partition fails with because of {@link #corruption()}: {@link MirrorError#CORRUPT_MESSAGE}, or
     * {@link MirrorError#UNSUPPORTED_MESSAGE_FORMAT} for a v0/v1 batch; null if the data is usable to its end.
     */
    MirrorError corruptionError() {
        return corruptionError;
    }

    /** Base offset of the bad batch (or the last good offset + 1 if unknown); -1 if none. */
    long corruptOffset() {
        return corruptOffset;
    }

    /**
     * The newest timestamp of the last batch of the runs (its max timestamp: the append time of a LogAppendTime topic), -1
     * without runs. The source wrote the records after the runs no earlier than this.
     */
    long lastTimestamp() {
        return lastTimestamp;
    }

    /** Bytes after the last whole batch (a partial batch), 0 if none. */
    int partialBytes() {
        return partialBytes;
    }

    /**
     * @param records          the fetched records of one partition (from the buffer's position to its limit)
     * @param fetchOffset      the offset that was fetched
     * @param lastFetchedEpoch source epoch of the last batch mirrored before, or -1 if unknown
     */
    static SourceBatches split(ByteBuffer records, long fetchOffset, int lastFetchedEpoch) {
        ByteBuffer buf = records.duplicate();
        int pos = buf.position();
        List<Run> runs = new ArrayList<>();
        int runStart = -1;
        long runBase = -1;
        long runLast = -1;
        int runEpoch = 0;
        int runBatches = 0;
        long runRecords = 0;
        int prevEpoch = lastFetchedEpoch;
        String corruption = null;
        MirrorError corruptionError = MirrorError.CORRUPT_MESSAGE;
        long corruptOffset = -1;
        long expectedNext = fetchOffset;
        long lastTimestamp = -1;

        Iterator<StoredBatch> it = StoredBatches.iterator(buf);
        while (true) {
            StoredBatch b;
            try {
                if (!it.hasNext()) {
                    break;
                }
                b = it.next();
            } catch (KafkaException e) { // CorruptRecordException: a batch header with an impossible size
                corruption = "unreadable batch header after offset " + (expectedNext - 1) + ": " + e.getMessage();
                corruptOffset = expectedNext;
                break;
            }
            int size = b.sizeInBytes();
            if (b.lastOffset() < fetchOffset) {
                // Before the fetch offset (possible only with compacted or mid-batch log starts): skip it.
                if (runStart >= 0) {
                    corruption = "batch " + b.baseOffset() + ".." + b.lastOffset() + " out of order after offset "
                        + runLast;
                    corruptOffset = b.baseOffset();
                    break;
                }
                pos += size;
                continue;
            }
            if (b.magic() >= StoredBatch.MAGIC_V2 && !b.isV2()) {
                corruption = "corrupt batch at offset " + b.baseOffset() + ": its " + b.sizeInBytes() + " bytes are fewer than"
                    + " a v2 batch header's " + StoredBatch.RECORDS_OFFSET;
                corruptOffset = b.baseOffset();
                break;
            }
            if (b.magic() != StoredBatch.MAGIC_V2) {
                corruption = "batch at offsets " + b.baseOffset() + ".." + b.lastOffset() + " is in message format v"
                    + b.magic() + " (written by a client or broker older than Kafka 0.11): only v2 batches can be"
                    + " mirrored as they are";
                corruptOffset = b.baseOffset();
                corruptionError = MirrorError.UNSUPPORTED_MESSAGE_FORMAT;
                break;
            }
            int epoch = b.partitionLeaderEpoch();
            if (runStart >= 0 && epoch != runEpoch) {
                runs.add(run(buf, runStart, pos, runBase, runLast, runEpoch, prevEpoch, runBatches, runRecords, -1L));
                prevEpoch = runEpoch;
                runStart = -1;
            }
            if (runStart < 0) {
                runStart = pos;
                runBase = b.baseOffset();
                runEpoch = epoch;
                runBatches = 0;
                runRecords = 0;
            }
            runLast = b.lastOffset();
            lastTimestamp = b.maxTimestamp();
            runBatches++;
            runRecords += b.recordCount();
            expectedNext = b.lastOffset() + 1;
            pos += size;
            if (BarrierBatch.isBarrier(b)) {
                runs.add(run(buf, runStart, pos, runBase, runLast, runEpoch, prevEpoch, runBatches, runRecords, b.baseOffset()));
                prevEpoch = runEpoch;
                runStart = -1;
            }
        }
        if (runStart >= 0) {
            runs.add(run(buf, runStart, pos, runBase, runLast, runEpoch, prevEpoch, runBatches, runRecords, -1L));
        }
        int partial = corruption == null ? buf.limit() - pos : 0;
        return new SourceBatches(List.copyOf(runs), corruption, corruption == null ? null : corruptionError, corruptOffset, partial,
            lastTimestamp);
    }

    /**
     * The first batch of {@code run} whose CRC does not match, and the batches before it as a run of their own.
     *
     * @param validPrefix the batches before the corrupt one (same source epoch as {@code run}), empty if it is the first
     * @param description what is wrong, with the corrupt batch's offsets; null if every batch is valid
     */
    record Corruption(Optional<Run> validPrefix, String description, long corruptOffset) {
    }

    /**
     * Finds the corrupt batch in a run that Kafka's append refused (see the class comment). Reads the run's bytes
     * again: this is the error path only.
     */
    static Corruption locateCorruption(Run run) {
        ByteBuffer buf = run.records().duplicate();
        int pos = buf.position();
        int batches = 0;
        long records = 0;
        long last = -1;
        for (StoredBatch b : StoredBatches.of(buf)) {
            try {
                b.ensureValid();
            } catch (KafkaException e) {
                Optional<Run> prefix = Optional.empty();
                if (batches > 0) {
                    ByteBuffer slice = buf.duplicate();
                    slice.limit(pos).position(buf.position());
                    prefix = Optional.of(new Run(slice.slice(), run.baseOffset(), last,
                        run.sourceEpoch(), run.newEpochStart(), batches, records, -1L));
                }
                return new Corruption(prefix, "corrupt batch at offsets " + b.baseOffset() + ".." + b.lastOffset() + ": "
                    + e.getMessage(), b.baseOffset());
            }
            batches++;
            records += b.recordCount();
            last = b.lastOffset();
            pos += b.sizeInBytes();
        }
        return new Corruption(Optional.empty(), null, -1L);
    }

    private static Run run(ByteBuffer buf, int from, int to, long base, long last, int epoch, int prevEpoch,
                           int batches, long recs, long barrierOffset) {
        ByteBuffer slice = buf.duplicate();
        slice.limit(to).position(from);
        return new Run(slice.slice(), base, last, epoch,
            epoch != prevEpoch ? base : -1L, batches, recs, barrierOffset);
    }
}
