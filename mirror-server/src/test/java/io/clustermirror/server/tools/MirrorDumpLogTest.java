package io.clustermirror.server.tools;

import io.clustermirror.common.barrier.BarrierBatch;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.tools.DumpLogSegments;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MirrorDumpLogTest {
    private static final long TIMESTAMP = 1_700_000_000_000L;
    private static final long BARRIER_OFFSET = 5;

    @TempDir
    Path dir;

    @Test
    void namesTheBarrierAndLeavesKafkasOtherLinesAlone() throws Exception {
        String file = segment("a", "source-cluster-a").toString();
        List<List<String>> optionSets = List.of(List.of(), List.of("--deep-iteration"), List.of("--print-data-log"));
        for (List<String> options : optionSets) {
            String[] args = args(file, options);
            List<String> kafka = run(DumpLogSegments::main, args);
            List<String> ours = run(MirrorDumpLog::main, args);

            assertEquals(kafka.size(), ours.size(), String.valueOf(options));
            int rewritten = 0;
            for (int i = 0; i < kafka.size(); i++) {
                if (kafka.get(i).startsWith("| offset: " + BARRIER_OFFSET + " ")) {
                    assertTrue(kafka.get(i).endsWith(" controlType: UNKNOWN(7)"), kafka.get(i));
                    assertEquals(kafka.get(i).replace(" controlType: UNKNOWN(7)",
                        " controlType: MIRROR_PID_RESET(7) sourceClusterId: source-cluster-a"), ours.get(i));
                    rewritten++;
                } else {
                    assertEquals(kafka.get(i), ours.get(i));
                }
            }
            // Kafka prints record lines only when iterating deeply.
            assertEquals(options.isEmpty() ? 0 : 1, rewritten, String.valueOf(options));
        }
    }

    @Test
    void eachFileShowsItsOwnBarrier() throws Exception {
        String files = segment("a", "source-cluster-a") + "," + segment("b", "source-cluster-b");

        List<String> barriers = run(MirrorDumpLog::main, args(files, List.of("--deep-iteration"))).stream()
            .filter(line -> line.contains("MIRROR_PID_RESET")).toList();

        assertEquals(2, barriers.size(), String.valueOf(barriers));
        assertTrue(barriers.get(0).endsWith("controlType: MIRROR_PID_RESET(7) sourceClusterId: source-cluster-a"));
        assertTrue(barriers.get(1).endsWith("controlType: MIRROR_PID_RESET(7) sourceClusterId: source-cluster-b"));
    }

    @FunctionalInterface
    private interface Tool {
        void main(String[] args) throws IOException;
    }

    private static String[] args(String files, List<String> options) {
        return Stream.concat(Stream.of("--files", files), options.stream())
            .toArray(String[]::new);
    }

    private static List<String> run(Tool tool, String[] args) throws IOException {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            tool.main(args);
        } finally {
            System.setOut(out);
        }
        return captured.toString(StandardCharsets.UTF_8).lines().toList();
    }

    /**
     * A segment as a mirror leaves it: idempotent data (0-2), a committed transaction (3, marker at 4), the barrier
     * and a local producer's batch after it.
     */
    private File segment(String name, String sourceClusterId) throws IOException {
        File file = Files.createDirectories(dir.resolve(name)).resolve("00000000000000000000.log").toFile();
        try (FileRecords records = FileRecords.open(file)) {
            records.append(data(0, 7L, 0, false, "a", "b", "c"));
            records.append(data(3, 8L, 0, true, "t"));
            records.append(MemoryRecords.withEndTransactionMarker(4, TIMESTAMP, 0, 8L, (short) 0,
                new EndTransactionMarker(ControlRecordType.COMMIT, 0)));
            records.append(MemoryRecords.readableRecords(BarrierBatch.build(BARRIER_OFFSET, 0, sourceClusterId, TIMESTAMP).bytes()));
            records.append(data(6, 7L, 0, false, "local"));
            records.flush();
        }
        return file;
    }

    private static MemoryRecords data(long baseOffset, long producerId, int baseSequence, boolean transactional,
                                      String... values) {
        ByteBuffer buffer = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
            TimestampType.CREATE_TIME, baseOffset, RecordBatch.NO_TIMESTAMP, producerId, (short) 0, baseSequence,
            transactional, false, 0, buffer.capacity());
        for (int i = 0; i < values.length; i++) {
            builder.appendWithOffset(baseOffset + i, TIMESTAMP, null, values[i].getBytes(StandardCharsets.UTF_8));
        }
        return builder.build();
    }
}
