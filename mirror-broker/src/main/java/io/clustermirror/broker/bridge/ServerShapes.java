package io.clustermirror.broker.bridge;

import kafka.cluster.Partition;
import kafka.server.ControllerServer;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.VerificationGuard;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.List;

import static io.clustermirror.common.compat.Reflection.field;
import static io.clustermirror.common.compat.Reflection.firstClass;
import static io.clustermirror.common.compat.Reflection.get;
import static io.clustermirror.common.compat.Reflection.invoke;
import static io.clustermirror.common.compat.Reflection.method;
import static io.clustermirror.common.compat.Reflection.methodOrNull;

/**
 * The shapes of Kafka's broker and storage internals that differ between the supported Kafka lines, bound once for the
 * line this JVM runs. The rest of this package refers to Kafka directly, with shapes every supported line shares.
 *
 * <ul>
 *   <li>The record classes ({@code Records}, {@code MemoryRecords}, {@code FileRecords}) moved from
 *       {@code org.apache.kafka.common.record} to {@code ...record.internal} in 4.3, which changes what a log read
 *       returns and what a leader append takes.</li>
 *   <li>{@code Partition.appendRecordsToLeader} takes the transaction version of the append from 4.2 on; before, a
 *       RAFT_LEADER append accepted the markers of either transaction version without being told.</li>
 *   <li>The controller's {@code KRaftMetadataCache} moved from {@code kafka.server.metadata} (Scala) to
 *       {@code org.apache.kafka.metadata} in 4.3.</li>
 *   <li>A partition's {@code AssignmentState} was the Scala {@code kafka.cluster.AssignmentState} (replicas a Scala
 *       sequence) up to 4.1 and is {@code org.apache.kafka.server.partition.AssignmentState} (a Java list) from 4.2.</li>
 * </ul>
 *
 * <p>Binding fails with an {@link IllegalStateException} naming the shape that no candidate matched, which a node
 * reports at start ({@link #check()}).
 */
final class ServerShapes {
    /**
     * The transaction version passed with RAFT_LEADER appends where Kafka takes one (4.2+). The source's markers may be
     * TV1 (marker epoch == data epoch) or TV2 (marker epoch bumped); version 1 selects the lenient epoch check that
     * accepts both, while 2 would reject TV1 markers. Kafka's default (TV_UNKNOWN) throws for RAFT_LEADER.
     */
    static final short MIRROR_TRANSACTION_VERSION = 1;

    private static final Class<?> RECORDS = recordClass("Records");
    private static final Class<?> MEMORY_RECORDS = recordClass("MemoryRecords");
    private static final Class<?> FILE_RECORDS = recordClass("FileRecords");
    private static final Field FETCHED_RECORDS = field(FetchDataInfo.class, "records");
    private static final Method SIZE_IN_BYTES = method(RECORDS, "sizeInBytes");
    private static final Method MEMORY_BUFFER = method(MEMORY_RECORDS, "buffer");
    private static final Method FILE_READ_INTO = method(FILE_RECORDS, "readInto", ByteBuffer.class, int.class);
    private static final Method READABLE_RECORDS = method(MEMORY_RECORDS, "readableRecords", ByteBuffer.class);
    /** 4.2 and later: with the transaction version; null before, where {@link #APPEND_TO_LEADER_UNVERSIONED} is bound. */
    private static final Method APPEND_TO_LEADER = methodOrNull(Partition.class, "appendRecordsToLeader", MEMORY_RECORDS,
        AppendOrigin.class, int.class, RequestLocal.class, VerificationGuard.class, short.class);
    private static final Method APPEND_TO_LEADER_UNVERSIONED = APPEND_TO_LEADER != null ? null
        : method(Partition.class, "appendRecordsToLeader", MEMORY_RECORDS, AppendOrigin.class, int.class, RequestLocal.class,
            VerificationGuard.class);
    private static final Method CONTROLLER_METADATA_CACHE = method(ControllerServer.class, "metadataCache");
    private static final Method CURRENT_IMAGE = method(firstClass("KRaftMetadataCache",
        "org.apache.kafka.metadata.KRaftMetadataCache", "kafka.server.metadata.KRaftMetadataCache"), "currentImage");
    private static final Method ASSIGNMENT_STATE = method(Partition.class, "assignmentState");
    private static final Method ASSIGNED_REPLICAS = method(firstClass("AssignmentState",
        "org.apache.kafka.server.partition.AssignmentState", "kafka.cluster.AssignmentState"), "replicas");

    private ServerShapes() {
    }

    /**
     * Binds every shape now (class initialisation does), so that a Kafka whose internals match none of the known shapes
     * is named at start.
     *
     * @throws IllegalStateException (from class initialisation, as the cause of an {@link ExceptionInInitializerError})
     */
    static void check() {
        // Reaching here means the static initialiser bound every shape.
    }

    /**
     * A copy of the batches a log read returned, position 0 to limit: the read's own buffer for records in memory, the
     * bytes read from the segment file for records in a file.
     *
     * @throws java.io.UncheckedIOException if the segment file cannot be read
     */
    static ByteBuffer bytesOf(FetchDataInfo read) {
        Object records = get(FETCHED_RECORDS, read);
        if (MEMORY_RECORDS.isInstance(records)) {
            return (ByteBuffer) invoke(MEMORY_BUFFER, records);
        }
        ByteBuffer buf = ByteBuffer.allocate((Integer) invoke(SIZE_IN_BYTES, records));
        invoke(FILE_READ_INTO, records, buf, 0); // readInto flips the buffer
        return buf;
    }

    /**
     * Appends {@code batches} (whole, CRC-checked batches) on the partition's leader with the RAFT_LEADER origin, which
     * keeps their offsets, compression and producer fields, and fences a leader whose epoch is not theirs.
     */
    static LogAppendInfo appendToLeader(Partition partition, ByteBuffer batches, int requiredAcks) {
        Object records = invoke(READABLE_RECORDS, null, batches);
        if (APPEND_TO_LEADER != null) {
            return (LogAppendInfo) invoke(APPEND_TO_LEADER, partition, records, AppendOrigin.RAFT_LEADER, requiredAcks,
                RequestLocal.noCaching(), VerificationGuard.SENTINEL, MIRROR_TRANSACTION_VERSION);
        }
        return (LogAppendInfo) invoke(APPEND_TO_LEADER_UNVERSIONED, partition, records, AppendOrigin.RAFT_LEADER, requiredAcks,
            RequestLocal.noCaching(), VerificationGuard.SENTINEL);
    }

    /** The controller's current metadata image; null before its metadata cache exists. */
    static MetadataImage metadataImage(ControllerServer controller) {
        Object cache = invoke(CONTROLLER_METADATA_CACHE, controller);
        return cache == null ? null : (MetadataImage) invoke(CURRENT_IMAGE, cache);
    }

    /** The partition's assigned replicas, in assignment order (the first is the preferred leader). */
    static List<Integer> assignedReplicas(Partition partition) {
        Object replicas = invoke(ASSIGNED_REPLICAS, invoke(ASSIGNMENT_STATE, partition));
        if (replicas instanceof scala.collection.Seq<?> seq) {
            return scala.jdk.javaapi.CollectionConverters.asJava(seq).stream().map(id -> (Integer) id).toList();
        }
        return ((List<?>) replicas).stream().map(id -> (Integer) id).toList();
    }

    private static Class<?> recordClass(String simpleName) {
        return firstClass(simpleName, "org.apache.kafka.common.record.internal." + simpleName,
            "org.apache.kafka.common.record." + simpleName);
    }
}
