package io.clustermirror.broker.fetch;

import io.clustermirror.common.records.HeldDecision;
import io.clustermirror.common.records.HeldLogStarts;

import java.util.Objects;

/**
 * Where a partition's destination log start stands when it is handed to the fetchers.
 *
 * @param offset the destination leader's log start offset
 * @param held     the moves of the source's log start that the destination has not followed yet, as the partition's last
 *                 state record kept them (a new leader goes on with the same clock)
 * @param decision the operator's last decision on the topic's held changes, or null
 */
public record DestinationLogStart(long offset, HeldLogStarts held, HeldDecision decision) {
    public DestinationLogStart {
        Objects.requireNonNull(held, "held");
    }
}
