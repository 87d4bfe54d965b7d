package io.clustermirror.broker.bridge;

import org.apache.kafka.common.TopicPartition;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * {@link LeaderLogs} and the operations on this broker's local follower replicas that keep mirrored producer state out
 * of them. {@link BrokerHandle} implements it on a running broker; the hygiene is tested against an in-memory one.
 */
public interface LocalReplicas extends LeaderLogs {
    /** Log end offset of the local replica (leader or follower), if this broker hosts one. */
    OptionalLong localLogEndOffset(TopicPartition partition);

    /** Whether the local replica holds a MIRROR_PID_RESET barrier at {@code offset}; empty if it cannot tell now. */
    Optional<Boolean> holdsBarrierAt(TopicPartition partition, long offset);

    /** Truncates the local follower replica to {@code offset}; false if this broker hosts no follower of it. */
    boolean truncateFollowerTo(TopicPartition partition, long offset);
}
