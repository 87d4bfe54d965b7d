package io.clustermirror.common.barrier;

import io.clustermirror.common.batch.ControlBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredRecord;

import java.util.Optional;

/**
 * The {@code MIRROR_PID_RESET} barrier (docs/DESIGN.md, "Where we differ from KIP-1279"): a v2 control batch holding one control
 * record whose key is {@code (version 0, type 7)} and whose value is a {@link MirrorPidResetRecord}.
 * Wherever it is appended or recovered, all mirrored producer state before it is stale.
 *
 * <p>The batch has producerId, producerEpoch and baseSequence -1 and is not transactional: stock Kafka's
 * producer-state code rejects an unknown control type on a batch with a producer id, while without one it
 * appends, replicates and is skipped by consumers like any control batch.
 *
 * <p>{@link #build} writes the batch with {@link ControlBatch}, since Kafka's batch builder refuses unknown control types.
 * The partition leader epoch is outside the CRC, so the appender may still stamp it.
 */
public final class BarrierBatch {
    /** The control record type of the barrier. */
    public static final short CONTROL_TYPE = 7;

    private BarrierBatch() {
    }

    /**
     * Builds a barrier batch at {@code offset}.
     *
     * @param offset               base (and last) offset of the batch
     * @param partitionLeaderEpoch the destination leader epoch to stamp
     * @param sourceClusterId      the source cluster the partition mirrored from
     * @param timestampMs          the record's create time
     */
    public static StoredBatch build(long offset, int partitionLeaderEpoch, String sourceClusterId, long timestampMs) {
        return ControlBatch.write(offset, partitionLeaderEpoch, false, StoredBatch.NO_PRODUCER_ID, StoredBatch.NO_PRODUCER_EPOCH,
            timestampMs, CONTROL_TYPE, MirrorPidResetRecord.of(sourceClusterId).encode());
    }

    /** True if {@code batch} is a control batch whose record has control type {@link #CONTROL_TYPE}. */
    public static boolean isBarrier(StoredBatch batch) {
        return barrierRecord(batch).isPresent();
    }

    /** The source cluster id recorded in a barrier, or empty if {@code batch} is not a barrier. */
    public static Optional<String> sourceClusterId(StoredBatch batch) {
        return barrierRecord(batch).map(r -> MirrorPidResetRecord.decode(r.value()).sourceClusterId());
    }

    private static Optional<StoredRecord> barrierRecord(StoredBatch batch) {
        if (ControlBatch.controlType(batch) != CONTROL_TYPE) {
            return Optional.empty();
        }
        StoredRecord record = batch.records().get(0);
        return record.value() != null ? Optional.of(record) : Optional.empty();
    }
}
