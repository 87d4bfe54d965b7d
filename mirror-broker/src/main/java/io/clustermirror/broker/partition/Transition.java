package io.clustermirror.broker.partition;

import java.util.List;

/**
 * The result of one {@link PartitionStateMachine#handle} call: the partition's next value and the actions
 * to run, in order.
 */
public record Transition(MirrorPartition next, List<PartitionAction> actions) {
    public Transition {
        actions = List.copyOf(actions);
    }
}
