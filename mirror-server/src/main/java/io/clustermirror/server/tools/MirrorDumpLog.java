package io.clustermirror.server.tools;

import io.clustermirror.broker.bridge.KafkaTools;
import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredBatches;
import org.apache.kafka.common.KafkaException;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.charset.Charset;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Kafka's log dump tool ({@code kafka-dump-log.sh}, its DumpLogSegments, same arguments and output) that names
 * the MIRROR_PID_RESET barrier. Kafka prints a control record of a type it does not know as
 * {@code controlType: UNKNOWN(7)} and decodes no value of a control record; this runs Kafka's tool unchanged and
 * rewrites the record line of each barrier in a dumped {@code .log} file to
 * {@code controlType: MIRROR_PID_RESET(7) sourceClusterId: <id>}, read from the segment itself. Every other line
 * is Kafka's. Record lines exist only with {@code --deep-iteration} or {@code --print-data-log}.
 */
public final class MirrorDumpLog {
    private static final String KAFKA_CONTROL_TYPE =
        "controlType: UNKNOWN(" + BarrierBatch.CONTROL_TYPE + ")";
    private static final String BARRIER_CONTROL_TYPE = "controlType: MIRROR_PID_RESET(" + BarrierBatch.CONTROL_TYPE + ")";

    /** DumpLogSegments' header of each file, and the start of its record lines (its RECORD_INDENT is "|"). */
    private static final String FILE_HEADER = "Dumping ";
    private static final String RECORD_LINE = "| offset: ";

    private MirrorDumpLog() {
    }

    public static void main(String[] args) throws IOException {
        PrintStream out = System.out;
        // Kafka's lines are encoded into the wrapper and decoded from it with the same charset; out re-encodes them.
        Charset charset = Charset.defaultCharset();
        System.setOut(new PrintStream(new BarrierLines(out, charset), true, charset));
        try {
            KafkaTools.dumpLogSegments(args);
        } finally {
            System.out.flush();
            System.setOut(out);
        }
    }

    /**
     * Passes DumpLogSegments' output through line by line (so nothing waits for the end of a large dump), knowing
     * from its "Dumping" headers which file the lines come from.
     */
    private static final class BarrierLines extends OutputStream {
        private final PrintStream out;
        private final Charset charset;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        /** Source cluster id by barrier offset, in the file being dumped. */
        private Map<Long, String> barriers = Map.of();

        BarrierLines(PrintStream out, Charset charset) {
            this.out = out;
            this.charset = charset;
        }

        @Override
        public void write(int b) {
            if (b == '\n') {
                out.println(rewrite(line.toString(charset)));
                line.reset();
            } else {
                line.write(b);
            }
        }

        @Override
        public void flush() {
            out.flush();
        }

        private String rewrite(String text) {
            if (text.startsWith(FILE_HEADER)) {
                barriers = barriers(new File(text.substring(FILE_HEADER.length())));
            } else if (!barriers.isEmpty() && text.startsWith(RECORD_LINE) && text.contains(KAFKA_CONTROL_TYPE)) {
                int end = text.indexOf(' ', RECORD_LINE.length());
                String id = barriers.get(Long.parseLong(text.substring(RECORD_LINE.length(), end)));
                if (id != null) {
                    return text.replace(KAFKA_CONTROL_TYPE, BARRIER_CONTROL_TYPE + " sourceClusterId: " + id);
                }
            }
            return text;
        }
    }

    /**
     * The barriers of a segment file by offset (a barrier batch holds one record). Empty for other files; a
     * corrupt tail ends the scan, which DumpLogSegments reports itself.
     */
    private static Map<Long, String> barriers(File file) {
        Map<Long, String> barriers = new HashMap<>();
        if (!file.getName().endsWith(".log") || !file.isFile()) {
            return barriers;
        }
        // Mapped read-only: the segment is paged in as it is scanned, never copied whole, and never written (closing a
        // Kafka FileRecords would trim the file to the size it saw).
        try (FileChannel channel = FileChannel.open(file.toPath(), StandardOpenOption.READ)) {
            Iterator<StoredBatch> batches = StoredBatches.iterator(channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size()));
            while (batches.hasNext()) {
                StoredBatch batch = batches.next();
                if (batch.isControlBatch()) {
                    BarrierBatch.sourceClusterId(batch).ifPresent(id -> barriers.put(batch.baseOffset(), id));
                }
            }
        } catch (IOException | KafkaException e) {
            // Keep the barriers found before the unreadable part.
        }
        return barriers;
    }
}
