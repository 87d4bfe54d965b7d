package io.clustermirror.common.batch;

import io.clustermirror.common.barrier.BarrierBatch;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class TransactionMarkerTest {
    private static MemoryRecords kafkaMarker(long offset, long timestamp, int leaderEpoch, long producerId, short epoch,
                                             boolean commit, int coordinatorEpoch) {
        return MemoryRecords.withEndTransactionMarker(offset, timestamp, leaderEpoch, producerId, epoch,
            new EndTransactionMarker(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, coordinatorEpoch));
    }

    @Test
    void readsKafkasMarkersOfBothKinds() {
        for (boolean commit : new boolean[] {true, false}) {
            StoredBatch batch = StoredBatch.of(kafkaMarker(42L, 1_700L, 3, 9_001L, (short) 5, commit, 11).buffer());
            assertEquals(Optional.of(new TransactionMarker(9_001L, (short) 5, commit, 11, 1_700L)), TransactionMarker.of(batch));
        }
    }

    @Test
    void writesTheBytesKafkasBuilderWritesForTheSameMarker() {
        for (boolean commit : new boolean[] {true, false}) {
            StoredBatch ours = new TransactionMarker(77L, (short) 2, commit, 4, 123_456L).toBatch(1_000L, 9);
            assertEquals(kafkaMarker(1_000L, 123_456L, 9, 77L, (short) 2, commit, 4).buffer(), ours.bytes());
        }
    }

    @Test
    void dataBatchesAndTheBarrierAreNoMarkers() {
        StoredBatch data = StoredBatch.of(MemoryRecords.withTransactionalRecords(Compression.NONE, 5L, (short) 0, 0,
            new SimpleRecord(1L, "k".getBytes(), "v".getBytes())).buffer());
        assertEquals(Optional.empty(), TransactionMarker.of(data));
        assertEquals(Optional.empty(), TransactionMarker.of(BarrierBatch.build(3L, 1, "cluster", 5L)));
    }
}
