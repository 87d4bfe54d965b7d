package io.clustermirror.common.batch;

import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * A transaction marker (Kafka's {@code EndTransactionMarker}): the control batch a transaction coordinator writes to each
 * partition of a transaction to commit or abort it. Its control record's value is a version (0) and the coordinator's
 * epoch; the batch carries the producer's id and epoch.
 *
 * @param producerId       the transaction's producer
 * @param producerEpoch    the producer epoch of the marker
 * @param commit           true for COMMIT, false for ABORT
 * @param coordinatorEpoch the epoch of the coordinator that wrote it (Kafka fences a marker of an older coordinator)
 * @param timestampMs      the batch's timestamp
 */
public record TransactionMarker(long producerId, short producerEpoch, boolean commit, int coordinatorEpoch, long timestampMs) {
    /** The control type of an ABORT marker. */
    public static final short ABORT = 0;
    /** The control type of a COMMIT marker. */
    public static final short COMMIT = 1;
    private static final short VALUE_VERSION = 0;
    private static final int VALUE_SIZE = Short.BYTES + Integer.BYTES;

    /** The marker a batch holds; empty for a data batch or any other control batch (such as the mirror's barrier). */
    public static Optional<TransactionMarker> of(StoredBatch batch) {
        short type = ControlBatch.controlType(batch);
        if (type != ABORT && type != COMMIT || !batch.isTransactional()) {
            return Optional.empty();
        }
        ByteBuffer value = batch.records().get(0).value();
        int coordinatorEpoch = value != null && value.remaining() >= VALUE_SIZE ? value.getInt(value.position() + Short.BYTES) : -1;
        return Optional.of(new TransactionMarker(batch.producerId(), batch.producerEpoch(), type == COMMIT, coordinatorEpoch,
            batch.maxTimestamp()));
    }

    /** This marker as a batch at {@code offset}, stamped with {@code partitionLeaderEpoch}. */
    public StoredBatch toBatch(long offset, int partitionLeaderEpoch) {
        ByteBuffer value = ByteBuffer.allocate(VALUE_SIZE).putShort(VALUE_VERSION).putInt(coordinatorEpoch).flip();
        return ControlBatch.write(offset, partitionLeaderEpoch, true, producerId, producerEpoch, timestampMs,
            commit ? COMMIT : ABORT, value);
    }
}
