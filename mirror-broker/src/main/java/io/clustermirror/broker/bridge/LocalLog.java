package io.clustermirror.broker.bridge;

import kafka.cluster.Partition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason;
import org.apache.kafka.storage.internals.log.ProducerStateManager;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.OptionalLong;

import static io.clustermirror.common.compat.Reflection.accessibleField;
import static io.clustermirror.common.compat.Reflection.accessibleMethod;
import static io.clustermirror.common.compat.Reflection.firstMethod;
import static io.clustermirror.common.compat.Reflection.get;
import static io.clustermirror.common.compat.Reflection.invoke;
import static io.clustermirror.common.compat.Reflection.method;
import static io.clustermirror.common.compat.Reflection.methodOrNull;

/**
 * A partition's local log (leader or follower replica), whatever class this Kafka gives it: {@code UnifiedLog} was the
 * Scala {@code kafka.log.UnifiedLog} up to 4.0 and is the Java {@code org.apache.kafka.storage.internals.log.UnifiedLog}
 * from 4.1 (4.0 already has a Java class of that name, holding only static helpers, so the class is taken from what
 * {@code Partition.localLogOrException} returns, not by name). The members used here have the same names on every
 * line; only the option types differ ({@code scala.Option} on 4.0, {@code java.util.Optional} after).
 *
 * <p>A view holds no state but the log it wraps; it is as thread-safe as the log's own methods. {@link #lock()} is the
 * log's own lock, under which Kafka changes the producer state.
 */
final class LocalLog {
    private static final Method LOCAL_LOG_OR_EXCEPTION = method(Partition.class, "localLogOrException");
    private static final Class<?> LOG = LOCAL_LOG_OR_EXCEPTION.getReturnType();
    private static final Method LOG_START_OFFSET = method(LOG, "logStartOffset");
    private static final Method LOG_END_OFFSET = method(LOG, "logEndOffset");
    private static final Method HIGH_WATERMARK = method(LOG, "highWatermark");
    private static final Method LAST_STABLE_OFFSET = method(LOG, "lastStableOffset");
    private static final Method READ = method(LOG, "read", long.class, int.class, FetchIsolation.class, boolean.class);
    private static final Method END_OFFSET_FOR_EPOCH = method(LOG, "endOffsetForEpoch", int.class);
    private static final Method INCREMENT_LOG_START_OFFSET = method(LOG, "maybeIncrementLogStartOffset", long.class,
        LogStartOffsetIncrementReason.class);
    /** {@code truncateFullyAndStartAt(long, log start)}: a {@code scala.Option} of it on 4.0, a {@code java.util.Optional} after. */
    private static final Method TRUNCATE_FULLY_AND_START_AT = methodOrNull(LOG, "truncateFullyAndStartAt", long.class, Optional.class) != null
        ? method(LOG, "truncateFullyAndStartAt", long.class, Optional.class)
        : method(LOG, "truncateFullyAndStartAt", long.class, scala.Option.class);
    private static final Method ASSIGN_EPOCH_START_OFFSET = method(LOG, "assignEpochStartOffset", int.class, long.class);
    private static final Method PRODUCER_STATE_MANAGER = method(LOG, "producerStateManager");
    private static final Method TOPIC_ID = method(LOG, "topicId");
    private static final Field LOCK = accessibleField(LOG, "lock");
    private static final Method INCREMENT_FIRST_UNSTABLE_OFFSET = accessibleMethod(LOG, "maybeIncrementFirstUnstableOffset");
    /** {@code OffsetAndEpoch.epoch()} from 4.1 (a record); {@code leaderEpoch()} on 4.0. */
    private static final Method EPOCH_OF_END = firstMethod(OffsetAndEpoch.class, "epoch", "leaderEpoch");
    private static final Method OFFSET_OF_END = method(OffsetAndEpoch.class, "offset");

    private final Object log;

    private LocalLog(Object log) {
        this.log = log;
    }

    /** Binds every shape now (class initialisation does), for {@link ServerShapes#check()}. */
    static void check() {
        // Reaching here means the static initialiser bound every shape.
    }

    /** The partition's local log, if this broker hosts a replica of it. */
    static Optional<LocalLog> of(Partition partition) {
        return optional(partition.log()).map(LocalLog::new);
    }

    /** The partition's local log if this broker is its leader. */
    static Optional<LocalLog> leaderOf(Partition partition) {
        return optional(partition.leaderLogIfLocal()).map(LocalLog::new);
    }

    /** The partition's local log; Kafka's NotLeaderOrFollowerException if this broker hosts no replica. */
    static LocalLog orException(Partition partition) {
        return new LocalLog(invoke(LOCAL_LOG_OR_EXCEPTION, partition));
    }

    long logStartOffset() {
        return (Long) invoke(LOG_START_OFFSET, log);
    }

    long logEndOffset() {
        return (Long) invoke(LOG_END_OFFSET, log);
    }

    long highWatermark() {
        return (Long) invoke(HIGH_WATERMARK, log);
    }

    long lastStableOffset() {
        return (Long) invoke(LAST_STABLE_OFFSET, log);
    }

    /** Reads from the batch holding {@code startOffset}, about {@code maxBytes}, up to what {@code isolation} allows. */
    FetchDataInfo read(long startOffset, int maxBytes, FetchIsolation isolation, boolean minOneMessage) {
        return (FetchDataInfo) invoke(READ, log, startOffset, maxBytes, isolation, minOneMessage);
    }

    /**
     * Where epoch {@code epoch} ends in this log's leader-epoch cache: the start of the next higher epoch, or the log end
     * for its latest. Empty if the cache does not know {@code epoch} itself (it would answer for a lower one).
     */
    OptionalLong endOffsetForEpoch(int epoch) {
        Optional<Object> end = optional(invoke(END_OFFSET_FOR_EPOCH, log, epoch));
        if (end.isEmpty() || (Integer) invoke(EPOCH_OF_END, end.get()) != epoch) {
            return OptionalLong.empty();
        }
        return OptionalLong.of((Long) invoke(OFFSET_OF_END, end.get()));
    }

    /** Moves the log start up to {@code offset} as a DeleteRecords does; Kafka refuses beyond the high watermark. */
    void incrementLogStartOffset(long offset, LogStartOffsetIncrementReason reason) {
        invoke(INCREMENT_LOG_START_OFFSET, log, offset, reason);
    }

    /**
     * Empties the log and starts it at {@code offset}, as Kafka's follower does when its leader's log starts past its end:
     * log start, log end and high watermark at {@code offset}, and the producer state reset there. Kafka clears the
     * leader-epoch cache too; the leader's {@code leaderEpoch} is assigned again from {@code offset}, as Kafka does for a
     * new leader at its log end.
     */
    void startEmptyAt(long offset, int leaderEpoch) {
        Object logStartAtOffset = TRUNCATE_FULLY_AND_START_AT.getParameterTypes()[1] == Optional.class
            ? Optional.empty() : scala.Option.apply(null);
        invoke(TRUNCATE_FULLY_AND_START_AT, log, offset, logStartAtOffset);
        invoke(ASSIGN_EPOCH_START_OFFSET, log, leaderEpoch, offset);
    }

    ProducerStateManager producerStateManager() {
        return (ProducerStateManager) invoke(PRODUCER_STATE_MANAGER, log);
    }

    /** The lock under which Kafka appends to this log and changes its producer state. */
    Object lock() {
        return get(LOCK, log);
    }

    /** Lets the first unstable offset move past transactions the producer state no longer holds (hold {@link #lock()}). */
    void updateFirstUnstableOffset() {
        invoke(INCREMENT_FIRST_UNSTABLE_OFFSET, log);
    }

    Optional<Uuid> topicId() {
        return optional(invoke(TOPIC_ID, log)).map(Uuid.class::cast);
    }

    /** A {@code java.util.Optional} or {@code scala.Option}, as a Java optional. */
    static Optional<Object> optional(Object option) {
        if (option instanceof Optional<?> o) {
            return o.map(Object.class::cast);
        }
        scala.Option<?> o = (scala.Option<?>) option;
        return o.isDefined() ? Optional.of(o.get()) : Optional.empty();
    }
}
