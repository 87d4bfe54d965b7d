package io.clustermirror.broker.fetch;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.batch.StoredBatch;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClusterLogReaderTest {
    private static final TopicPartition TP = new TopicPartition("orders", 2);

    @Test
    void aValidBatchPasses() {
        StoredBatch batch = StoredBatch.of(SourceBatchesTest.batch(40, 3, 1));
        assertSame(batch, ClusterLogReader.checked(TP, batch));
    }

    /** A corruption met while aligning a log names the batch's offsets, as the data path does (found by a chaos run). */
    @Test
    void aCorruptBatchIsNamedWithItsOffsets() {
        ByteBuffer buf = SourceBatchesTest.batch(40, 3, 1);
        buf.put(70, (byte) (buf.get(70) ^ 0x5a)); // inside the records, covered by the CRC
        StoredBatch corrupt = StoredBatch.of(buf);

        ClusterMirrorException e = assertThrows(ClusterMirrorException.class, () -> ClusterLogReader.checked(TP, corrupt));
        assertEquals(MirrorError.CORRUPT_MESSAGE, e.error());
        assertTrue(e.getMessage().startsWith("CORRUPT_MESSAGE: corrupt batch at offsets 40..42 of orders-2 as read from the cluster: "
            + "Record is corrupt (stored crc = "), e.getMessage());
        assertTrue(e.getMessage().endsWith("if this persists, the replica that serves it is damaged at these offsets (compare its "
            + "segment with kafka-dump-log, or move the leadership to a healthy replica)"), e.getMessage());
    }
}
