package io.clustermirror.testsupport;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The wire corruption on real fetch responses: one batch of the target fails its CRC, every other byte is unchanged. */
class FetchCorruptionTest {
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final FetchCorruption.Target TARGET = new FetchCorruption.Target(TOPIC_ID, "t", 1);

    private static MemoryRecords records(long base) {
        return MemoryRecords.withRecords(base, Compression.NONE, 0, new SimpleRecord(1_000L, null, "a".getBytes(StandardCharsets.UTF_8)),
            new SimpleRecord(1_001L, null, "b".getBytes(StandardCharsets.UTF_8)));
    }

    /** A fetch response frame (header and body) with partitions 0 and 1 of topic t, each holding two batches. */
    private static ByteBuffer response(short version) {
        FetchResponseData.FetchableTopicResponse topic = new FetchResponseData.FetchableTopicResponse().setTopicId(TOPIC_ID).setTopic("t");
        for (int p = 0; p < 2; p++) {
            ByteBuffer both = ByteBuffer.allocate(records(10).sizeInBytes() + records(12).sizeInBytes());
            both.put(records(10).buffer()).put(records(12).buffer()).flip();
            topic.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(p).setHighWatermark(14)
                .setRecords(MemoryRecords.readableRecords(both)));
        }
        FetchResponseData data = new FetchResponseData().setResponses(new ArrayList<>(List.of(topic)));
        short headerVersion = ApiKeys.FETCH.responseHeaderVersion(version);
        return RequestUtils.serialize(new ResponseHeader(7, headerVersion).data(), headerVersion, data, version);
    }

    private static List<MemoryRecords> recordsOf(ByteBuffer frame, short version) {
        ByteBuffer buffer = frame.duplicate();
        ResponseHeader.parse(buffer, ApiKeys.FETCH.responseHeaderVersion(version));
        FetchResponseData data = new FetchResponseData(new ByteBufferAccessor(buffer), version);
        return data.responses().get(0).partitions().stream().map(p -> (MemoryRecords) p.records()).toList();
    }

    @Test
    void flipsOneByteOfTheTargetsFirstBatch() {
        for (short version : new short[]{12, 16}) {
            ByteBuffer frame = response(version);
            ByteBuffer original = ByteBuffer.allocate(frame.remaining()).put(frame.duplicate()).flip();

            assertEquals(OptionalLong.of(10), FetchCorruption.corrupt(frame, version, TARGET));

            int differing = 0;
            for (int i = 0; i < frame.remaining(); i++) {
                differing += frame.get(frame.position() + i) != original.get(i) ? 1 : 0;
            }
            assertEquals(1, differing, "bytes changed, version " + version);
            List<MemoryRecords> partitions = recordsOf(frame, version);
            partitions.get(0).batches().forEach(RecordBatch::ensureValid);
            List<RecordBatch> target = new ArrayList<>();
            partitions.get(1).batches().forEach(target::add);
            assertThrows(CorruptRecordException.class, target.get(0)::ensureValid);
            target.get(1).ensureValid();
        }
    }

    @Test
    void leavesAResponseWithoutTheTargetAlone() {
        ByteBuffer frame = response((short) 16);
        assertEquals(OptionalLong.empty(), FetchCorruption.corrupt(frame, (short) 16, new FetchCorruption.Target(Uuid.randomUuid(), "u", 1)));
        assertEquals(OptionalLong.empty(), FetchCorruption.corrupt(frame, (short) 16, new FetchCorruption.Target(TOPIC_ID, "t", 2)));
    }
}
