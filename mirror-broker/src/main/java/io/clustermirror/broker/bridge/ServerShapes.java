package io.clustermirror.broker.bridge;

import kafka.cluster.Partition;
import kafka.server.ControllerServer;
import kafka.server.KafkaBroker;
import kafka.server.KafkaConfig;
import kafka.server.ReplicaManager;
import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.network.ListenerName;
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
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import static io.clustermirror.common.compat.Reflection.accessibleField;
import static io.clustermirror.common.compat.Reflection.field;
import static io.clustermirror.common.compat.Reflection.firstClass;
import static io.clustermirror.common.compat.Reflection.get;
import static io.clustermirror.common.compat.Reflection.invoke;
import static io.clustermirror.common.compat.Reflection.method;
import static io.clustermirror.common.compat.Reflection.methodOrNull;
import static io.clustermirror.common.compat.Reflection.optionalClass;

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
 *   <li>The broker's metadata cache was the Scala {@code kafka.server.MetadataCache} (answering with {@code scala.Option})
 *       up to 4.0 and is {@code org.apache.kafka.metadata.MetadataCache} from 4.1.</li>
 *   <li>A broker's advertised listeners were the Scala {@code kafka.cluster.EndPoint} (its listener a {@code ListenerName})
 *       up to 4.0 and are {@code org.apache.kafka.common.Endpoint} from 4.1.</li>
 *   <li>A partition's replicas were {@code kafka.cluster.Replica} (state {@code kafka.cluster.ReplicaState}) up to 4.0 and
 *       are {@code org.apache.kafka.server.replica.Replica} from 4.1.</li>
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
    private static final Method BROKER_METADATA_CACHE = method(KafkaBroker.class, "metadataCache");
    private static final Method TOPIC_ID = method(BROKER_METADATA_CACHE.getReturnType(), "getTopicId", String.class);
    private static final Method ALIVE_BROKER_NODE = method(BROKER_METADATA_CACHE.getReturnType(), "getAliveBrokerNode", int.class,
        ListenerName.class);
    private static final Class<?> REPLICA = firstClass("Replica", "org.apache.kafka.server.replica.Replica", "kafka.cluster.Replica");
    private static final Method REPLICA_BROKER_ID = method(REPLICA, "brokerId");
    private static final Method REPLICA_STATE = method(REPLICA, "stateSnapshot");
    private static final Method REPLICA_LOG_END_OFFSET = method(REPLICA_STATE.getReturnType(), "logEndOffset");
    /** 4.0's advertised listener class; null from 4.1, whose listeners are {@link Endpoint}s. */
    private static final Class<?> SCALA_ENDPOINT = optionalClass("kafka.cluster.EndPoint");
    private static final Method SCALA_ENDPOINT_LISTENER = SCALA_ENDPOINT == null ? null : method(SCALA_ENDPOINT, "listenerName");
    private static final Method SCALA_ENDPOINT_HOST = SCALA_ENDPOINT == null ? null : method(SCALA_ENDPOINT, "host");
    private static final Field LEADER_ISR_UPDATE_LOCK = accessibleField(Partition.class, "leaderIsrUpdateLock");
    private static final Field REPLICA_STATE_CHANGE_LOCK = accessibleField(ReplicaManager.class, "replicaStateChangeLock");
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
        // Reaching here means the static initialiser bound every shape; the local log's shapes are bound with them.
        LocalLog.check();
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

    /** The host the broker advertises on {@code listener}, if it advertises that listener. */
    static Optional<String> advertisedHost(KafkaConfig config, ListenerName listener) {
        // Untyped: the element class differs between lines, and a typed loop would cast to the build's.
        scala.collection.Seq<?> endpoints = config.effectiveAdvertisedBrokerListeners();
        for (Object e : scala.jdk.javaapi.CollectionConverters.asJava(endpoints)) {
            if (e instanceof Endpoint endpoint) {
                if (endpoint.listenerName().equals(Optional.of(listener.value()))) {
                    return Optional.ofNullable(endpoint.host());
                }
            } else if (listener.equals(invoke(SCALA_ENDPOINT_LISTENER, e))) {
                return Optional.ofNullable((String) invoke(SCALA_ENDPOINT_HOST, e));
            }
        }
        return Optional.empty();
    }

    /** Kafka's lock of the partition's leadership and ISR, which it holds (write) to change either; no accessor exists. */
    static ReentrantReadWriteLock leaderIsrUpdateLock(Partition partition) {
        return (ReentrantReadWriteLock) get(LEADER_ISR_UPDATE_LOCK, partition);
    }

    /** The replica manager's monitor of leadership changes, held to make a replica a leader or a follower. */
    static Object replicaStateChangeLock(ReplicaManager replicaManager) {
        return get(REPLICA_STATE_CHANGE_LOCK, replicaManager);
    }

    /** The id of {@code topic} in the broker's metadata cache; empty if the topic does not exist. */
    static Optional<Uuid> topicId(KafkaBroker broker, String topic) {
        Uuid id = (Uuid) invoke(TOPIC_ID, invoke(BROKER_METADATA_CACHE, broker), topic);
        return id == null || Uuid.ZERO_UUID.equals(id) ? Optional.empty() : Optional.of(id);
    }

    /** The endpoint of broker {@code id} on {@code listener}, if the broker's metadata cache has it alive. */
    static Optional<Node> aliveBrokerNode(KafkaBroker broker, int id, ListenerName listener) {
        return LocalLog.optional(invoke(ALIVE_BROKER_NODE, invoke(BROKER_METADATA_CACHE, broker), id, listener)).map(Node.class::cast);
    }

    /** The log end offset of each remote replica of {@code partition} as its leader last saw it, by broker id. */
    static Map<Integer, Long> remoteLogEndOffsets(Partition partition) {
        // Untyped: the element class differs between lines, and a typed loop would cast to the build's.
        scala.collection.Iterable<?> replicas = partition.remoteReplicas();
        Map<Integer, Long> ends = new TreeMap<>();
        for (Object replica : scala.jdk.javaapi.CollectionConverters.asJava(replicas)) {
            ends.put((Integer) invoke(REPLICA_BROKER_ID, replica), (Long) invoke(REPLICA_LOG_END_OFFSET, invoke(REPLICA_STATE, replica)));
        }
        return ends;
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
