package io.clustermirror.chaos;

import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredBatches;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * The record batches of one replica as its segment files hold them, byte for byte: what the identity invariant
 * (docs/DESIGN.md, "The contract") compares between a source partition and each destination replica.
 *
 * <p>The files are read while the broker appends, rolls, truncates and deletes segments: a batch still being written at
 * the end of a file is incomplete and left out, and a segment deleted during the read makes the whole read start over.
 */
final class SegmentBatches {
    /** Where the 4-byte partition leader epoch sits in a v2 batch: outside the CRC, the one field a mirror may change. */
    static final int LEADER_EPOCH_POSITION = 12;
    private static final int READ_ATTEMPTS = 5;

    /**
     * One stored batch. {@code bytes} is the whole batch with its partition leader epoch zeroed, so two batches are the
     * same source batch exactly when their {@code bytes} are equal.
     */
    record Batch(long baseOffset, long lastOffset, long producerId, boolean control, boolean barrier, String segment,
                 long position, byte[] bytes) {
        /** True if {@code other} holds the same bytes (all fields but the partition leader epoch). */
        boolean sameAs(Batch other) {
            return Arrays.equals(bytes, other.bytes);
        }

        /** The first byte position where the two batches differ, or -1 if they are the same. */
        int firstDifference(Batch other) {
            return Arrays.mismatch(bytes, other.bytes);
        }

        /** The batch parsed (its partition leader epoch reads 0), to read its records. */
        StoredBatch recordBatch() {
            return StoredBatch.of(ByteBuffer.wrap(bytes));
        }

        String range() {
            return "[" + baseOffset + ", " + lastOffset + "]";
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Batch b && baseOffset == b.baseOffset && sameAs(b);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(baseOffset) * 31 + Arrays.hashCode(bytes);
        }

        @Override
        public String toString() {
            return "batch " + range() + " (" + bytes.length + " bytes" + (control ? ", control" : "") + (barrier ? ", barrier" : "")
                + ", producer id " + producerId + ", in " + segment + " at " + position + ")";
        }
    }

    private SegmentBatches() {
    }

    /** Every complete batch of the replica in {@code dir}, in offset order; empty if the directory does not exist. */
    static List<Batch> read(Path dir) throws IOException {
        NoSuchFileException last = null;
        for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
            try {
                return readOnce(dir);
            } catch (NoSuchFileException e) {
                // A segment was deleted (truncation, retention, the directory renamed for deletion) while we listed: read again.
                last = e;
            }
        }
        throw last;
    }

    private static List<Batch> readOnce(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Path> segments;
        try (Stream<Path> files = Files.list(dir)) {
            segments = files.filter(f -> f.getFileName().toString().endsWith(".log")).sorted().toList();
        }
        List<Batch> batches = new ArrayList<>();
        for (Path segment : segments) {
            // A copy of the file, never a FileRecords: closing one trims the file to the size it saw, which must never
            // happen to a live log.
            ByteBuffer file = ByteBuffer.wrap(Files.readAllBytes(segment));
            int position = 0;
            for (StoredBatch b : StoredBatches.of(file)) {
                int size = b.sizeInBytes();
                byte[] bytes = Arrays.copyOfRange(file.array(), position, position + size);
                Arrays.fill(bytes, LEADER_EPOCH_POSITION, LEADER_EPOCH_POSITION + 4, (byte) 0);
                batches.add(new Batch(b.baseOffset(), b.lastOffset(), b.producerId(), b.isControlBatch(),
                    BarrierBatch.sourceClusterId(b).isPresent(), dir.relativize(segment).toString(), position, bytes));
                position += size;
            }
        }
        return batches;
    }

    /** The name of the v2 batch header field at byte {@code position} of a batch, for violation messages. */
    static String fieldAt(int position) {
        if (position < 8) {
            return "baseOffset";
        } else if (position < 12) {
            return "batchLength";
        } else if (position < 16) {
            return "partitionLeaderEpoch";
        } else if (position < 17) {
            return "magic";
        } else if (position < 21) {
            return "crc";
        } else if (position < 23) {
            return "attributes";
        } else if (position < 27) {
            return "lastOffsetDelta";
        } else if (position < 35) {
            return "baseTimestamp";
        } else if (position < 43) {
            return "maxTimestamp";
        } else if (position < 51) {
            return "producerId";
        } else if (position < 53) {
            return "producerEpoch";
        } else if (position < 57) {
            return "baseSequence";
        } else if (position < 61) {
            return "recordCount";
        }
        return "records";
    }
}
