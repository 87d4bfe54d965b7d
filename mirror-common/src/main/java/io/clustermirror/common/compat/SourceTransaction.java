package io.clustermirror.common.compat;

import io.clustermirror.common.batch.Varints;
import org.apache.kafka.common.TopicPartition;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A transaction of the source as its coordinator decided it: the partitions it wrote to, read from the coordinator's
 * log ({@code __transaction_state}) when it prepared the commit or the abort, before writing any marker. What the
 * destination's mirrored data alone cannot show: which partitions a transaction wrote to whose records a lagging
 * partition never mirrored.
 *
 * <p>The log's values are Kafka's {@code TransactionLogValue} (versions 0 and 1, version-prefixed, version 1 flexible),
 * decoded here from their documented layout; Kafka's own classes for them are internal.
 *
 * @param producerId    the transaction's producer id
 * @param markerEpoch   the producer epoch its markers carry: its records' epoch, or under transaction protocol version 2
 *                      (the epoch bumped at each commit or abort) that epoch plus one
 * @param epochBumped   true under transaction protocol version 2: its records carry {@code markerEpoch - 1}
 * @param commit        true for a commit, false for an abort
 * @param startMs       when the transaction began, by the coordinator's clock
 * @param preparedMs    when the coordinator prepared its end, by its clock
 * @param partitions    the partitions it wrote to
 */
public record SourceTransaction(long producerId, short markerEpoch, boolean epochBumped, boolean commit, long startMs,
                                long preparedMs, List<TopicPartition> partitions) {
    /**
     * How long a transaction of the source lasts at most: Kafka's default {@code transaction.max.timeout.ms}, beyond which
     * the coordinator aborts it. How far back the mirror and the stop's analysis look for one.
     */
    public static final long LONGEST_MS = 15 * 60 * 1000;
    /** The coordinator prepares a commit: the transaction's partitions are final, no marker is written yet. */
    static final byte PREPARE_COMMIT = 2;
    /** The coordinator prepares an abort. */
    static final byte PREPARE_ABORT = 3;

    public SourceTransaction {
        partitions = List.copyOf(partitions);
    }

    /** The epoch of the transaction's records. */
    public short dataEpoch() {
        return (short) (epochBumped ? markerEpoch - 1 : markerEpoch);
    }

    /**
     * The transaction a value of {@code __transaction_state} prepares to commit or abort; empty for any other value (a
     * transaction under way or complete, an id expiring, a tombstone) and for a version this does not know.
     *
     * @throws IllegalArgumentException if a known version's value does not decode (truncated or corrupt)
     */
    public static Optional<SourceTransaction> prepared(ByteBuffer value) {
        if (value == null) {
            return Optional.empty();
        }
        ByteBuffer in = value.duplicate();
        try {
            short version = in.getShort();
            if (version < 0 || version > 1) {
                return Optional.empty();
            }
            boolean flexible = version >= 1;
            long producerId = in.getLong();
            short epoch = in.getShort();
            in.getInt(); // the transaction timeout
            byte status = in.get();
            List<TopicPartition> partitions = partitions(in, flexible);
            long updatedMs = in.getLong();
            long startMs = in.getLong();
            short clientVersion = flexible ? clientTransactionVersion(in) : 0;
            if (status != PREPARE_COMMIT && status != PREPARE_ABORT) {
                return Optional.empty();
            }
            return Optional.of(new SourceTransaction(producerId, epoch, clientVersion >= 2, status == PREPARE_COMMIT, startMs,
                updatedMs, partitions));
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new IllegalArgumentException("a __transaction_state value that does not decode: " + e, e);
        }
    }

    private static List<TopicPartition> partitions(ByteBuffer in, boolean flexible) {
        int topics = length(in, flexible);
        List<TopicPartition> out = new ArrayList<>();
        for (int t = 0; t < topics; t++) {
            int nameLength = flexible ? Varints.readUnsignedVarint(in) - 1 : in.getShort();
            if (nameLength < 0 || nameLength > in.remaining()) {
                throw new IllegalArgumentException("a topic name of " + nameLength + " bytes");
            }
            byte[] name = new byte[nameLength];
            in.get(name);
            String topic = new String(name, StandardCharsets.UTF_8);
            int ids = length(in, flexible);
            for (int i = 0; i < ids; i++) {
                out.add(new TopicPartition(topic, in.getInt()));
            }
            if (flexible) {
                skipTaggedFields(in);
            }
        }
        return out;
    }

    /** An array's length, 0 for a null array. */
    private static int length(ByteBuffer in, boolean flexible) {
        int length = flexible ? Varints.readUnsignedVarint(in) - 1 : in.getInt();
        if (length > in.remaining()) {
            throw new IllegalArgumentException("an array of " + length + " elements in " + in.remaining() + " bytes");
        }
        return Math.max(0, length);
    }

    /** Version 1's tagged fields: tag 2 is the client's transaction version (the others are producer ids). */
    private static short clientTransactionVersion(ByteBuffer in) {
        short clientVersion = 0;
        int fields = Varints.readUnsignedVarint(in);
        for (int f = 0; f < fields; f++) {
            int tag = Varints.readUnsignedVarint(in);
            int size = Varints.readUnsignedVarint(in);
            if (size < 0 || size > in.remaining()) {
                throw new IllegalArgumentException("a tagged field of " + size + " bytes");
            }
            if (tag == 2 && size == Short.BYTES) {
                clientVersion = in.getShort(in.position());
            }
            in.position(in.position() + size);
        }
        return clientVersion;
    }

    private static void skipTaggedFields(ByteBuffer in) {
        int fields = Varints.readUnsignedVarint(in);
        for (int f = 0; f < fields; f++) {
            Varints.readUnsignedVarint(in);
            int size = Varints.readUnsignedVarint(in);
            if (size < 0 || size > in.remaining()) {
                throw new IllegalArgumentException("a tagged field of " + size + " bytes");
            }
            in.position(in.position() + size);
        }
    }
}
