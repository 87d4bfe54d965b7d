package io.clustermirror.common.records;

import io.clustermirror.common.compat.SourceTransaction;
import org.apache.kafka.common.TopicPartition;

import java.util.List;

/**
 * A transaction of a mirror's source over several of the mirror's partitions, as the source's coordinator prepared its
 * end: a value of {@code __mirror_transactions} (key: the mirror's name). What the stop's analysis needs to see a
 * transaction whose records a lagging partition never mirrored; kept while the source may still be read, for when it
 * is lost.
 *
 * @param partitions the mirror's partitions the transaction wrote to (two or more)
 * @see SourceTransaction for the other fields
 */
public record SourceTransactionRecord(String mirror, long producerId, short markerEpoch, boolean epochBumped, boolean commit,
                                      long startMs, long preparedMs, List<Partition> partitions) {
    public SourceTransactionRecord {
        partitions = partitions == null ? List.of() : List.copyOf(partitions);
    }

    /** A topic partition, as JSON can hold it. */
    public record Partition(String topic, int partition) {
    }

    /** The record of {@code transaction}, keeping only {@code partitions} (the mirror's). */
    public static SourceTransactionRecord of(String mirror, SourceTransaction transaction, List<TopicPartition> partitions) {
        return new SourceTransactionRecord(mirror, transaction.producerId(), transaction.markerEpoch(), transaction.epochBumped(),
            transaction.commit(), transaction.startMs(), transaction.preparedMs(),
            partitions.stream().map(tp -> new Partition(tp.topic(), tp.partition())).toList());
    }

    /** The transaction this record keeps, with the mirror's partitions only. */
    public SourceTransaction transaction() {
        return new SourceTransaction(producerId, markerEpoch, epochBumped, commit, startMs, preparedMs,
            partitions.stream().map(p -> new TopicPartition(p.topic(), p.partition())).toList());
    }
}
