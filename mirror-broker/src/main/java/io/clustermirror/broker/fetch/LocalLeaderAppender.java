package io.clustermirror.broker.fetch;

import io.clustermirror.broker.bridge.AppendResult;
import io.clustermirror.broker.bridge.BrokerHandle;
import io.clustermirror.broker.bridge.NotLeaderException;
import org.apache.kafka.common.TopicPartition;

import java.nio.ByteBuffer;

/** The {@link PartitionAppender} of a running broker: its local leader replicas. */
public final class LocalLeaderAppender implements PartitionAppender {
    private final BrokerHandle broker;

    public LocalLeaderAppender(BrokerHandle broker) {
        this.broker = broker;
    }

    @Override
    public AppendResult append(TopicPartition partition, int destLeaderEpoch, ByteBuffer batches) throws NotLeaderException {
        return broker.appendAsLeader(partition, destLeaderEpoch, batches);
    }

    @Override
    public boolean advanceLogStartOffset(TopicPartition partition, int destLeaderEpoch, long sourceLogStartOffset)
            throws NotLeaderException {
        return broker.advanceLogStartOffset(partition, destLeaderEpoch, sourceLogStartOffset);
    }

    @Override
    public boolean startEmptyLogAt(TopicPartition partition, int destLeaderEpoch, long sourceLogStartOffset)
            throws NotLeaderException {
        return broker.startEmptyLeaderLogAt(partition, destLeaderEpoch, sourceLogStartOffset);
    }

    @Override
    public void removeProducersBefore(TopicPartition partition, int destLeaderEpoch, long barrierOffset) throws NotLeaderException {
        if (broker.leaderLogState(partition).map(s -> s.leaderEpoch() != destLeaderEpoch).orElse(true)) {
            throw new NotLeaderException("broker " + broker.nodeId() + " no longer leads " + partition + " at epoch " + destLeaderEpoch);
        }
        broker.removeProducersBefore(partition, barrierOffset);
    }
}
