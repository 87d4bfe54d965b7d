package io.clustermirror.common.batch;

import org.apache.kafka.common.errors.CorruptRecordException;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Splits the bytes a broker served (a fetch response's records, a log segment read) into their batches. Like Kafka's
 * readers, a trailing partial batch (a fetch cut at its size limit) is left out: the reader fetches it again from its
 * base offset.
 */
public final class StoredBatches {
    private StoredBatches() {
    }

    /**
     * The whole batches of {@code buffer} from its position to its limit, in order, as views sharing its content.
     * The buffer's position and limit are not moved.
     *
     * @throws CorruptRecordException if an entry's length field is below the smallest entry (bytes that are no batch)
     */
    public static List<StoredBatch> of(ByteBuffer buffer) {
        List<StoredBatch> batches = new ArrayList<>();
        iterator(buffer).forEachRemaining(batches::add);
        return batches;
    }

    /**
     * The batches of {@link #of}, read one at a time: a reader that meets bytes that are no batch still has the batches
     * before them.
     *
     * @return an iterator whose {@code hasNext} and {@code next} throw {@link CorruptRecordException} at an entry whose
     *         length field is below the smallest entry
     */
    public static Iterator<StoredBatch> iterator(ByteBuffer buffer) {
        ByteBuffer rest = buffer.duplicate();
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                int size = StoredBatch.wholeEntrySize(rest);
                return size >= 0 && size <= rest.remaining();
            }

            @Override
            public StoredBatch next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                StoredBatch batch = StoredBatch.of(rest);
                rest.position(rest.position() + batch.sizeInBytes());
                return batch;
            }
        };
    }
}
