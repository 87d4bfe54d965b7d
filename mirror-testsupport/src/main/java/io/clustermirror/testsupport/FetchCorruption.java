package io.clustermirror.testsupport;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.ResponseHeader;

import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.OptionalLong;

/**
 * The test-only corruption of a fetch response on the wire: one byte of one partition's record data flipped, in place,
 * so that the first batch of that partition fails its CRC check and every other byte of the response is unchanged.
 */
public final class FetchCorruption {
    /** The partition to corrupt: fetch responses name a topic by id (version 13 and later) or by name. */
    public record Target(Uuid topicId, String topic, int partition) {
        @Override
        public String toString() {
            return topic + "-" + partition;
        }
    }

    private FetchCorruption() {
    }

    /**
     * Flips the last byte of the first complete batch of {@code target}'s records in the fetch response {@code frame}
     * (the response header and body, without the size prefix) of API version {@code version}, in place.
     *
     * @return the base offset of the corrupted batch; empty if the response carries no complete batch of the target
     */
    static OptionalLong corrupt(ByteBuffer frame, short version, Target target) {
        ByteBuffer buffer = frame.duplicate();
        ResponseHeader.parse(buffer, ApiKeys.FETCH.responseHeaderVersion(version));
        // The records are read as slices of the frame's own buffer: a byte changed in them changes the frame.
        FetchResponseData response = new FetchResponseData(new ByteBufferAccessor(buffer), version);
        for (FetchResponseData.FetchableTopicResponse topic : response.responses()) {
            boolean named = version >= 13 ? target.topicId().equals(topic.topicId()) : target.topic().equals(topic.topic());
            if (!named) {
                continue;
            }
            for (FetchResponseData.PartitionData partition : topic.partitions()) {
                if (partition.partitionIndex() != target.partition() || !(partition.records() instanceof MemoryRecords records)) {
                    continue;
                }
                Iterator<? extends RecordBatch> batches = records.batches().iterator();
                if (!batches.hasNext()) {
                    continue;
                }
                RecordBatch first = batches.next();
                ByteBuffer bytes = records.buffer();
                int last = bytes.position() + first.sizeInBytes() - 1;
                bytes.put(last, (byte) (bytes.get(last) ^ 0xFF));
                return OptionalLong.of(first.baseOffset());
            }
        }
        return OptionalLong.empty();
    }
}
