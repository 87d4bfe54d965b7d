package io.clustermirror.broker.sync;

import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredRecord;
import io.clustermirror.common.batch.TransactionMarker;
import io.clustermirror.common.compat.SourceOffsetCommit;
import io.clustermirror.common.records.SourceOffsetCommitRecord;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.ObjLongConsumer;
import java.util.function.Predicate;

/**
 * The offset commits of one partition of the source's {@code __consumer_offsets} that transactions made and committed,
 * read batch by batch in log order (pure). A transactional offset commit ({@code sendOffsetsToTransaction}) lies in a
 * transactional batch of its producer and applies only once that producer's COMMIT marker follows; an ABORT drops it.
 * Commits outside transactions are not kept: only a transaction ties an offset to the output written with it.
 *
 * <p>Reading may begin anywhere: a marker whose commits lay before the first batch read yields nothing. Not thread-safe.
 */
final class TransactionalCommits {
    private final String mirror;
    private final int logPartition;
    /** The commits of each producer's open transaction, by producer id. */
    private final Map<Long, List<Pending>> open = new HashMap<>();

    private record Pending(SourceOffsetCommit commit, short producerEpoch) {
    }

    TransactionalCommits(String mirror, int logPartition) {
        this.mirror = mirror;
        this.logPartition = logPartition;
    }

    /**
     * Reads the next batch of the partition.
     *
     * @param wanted      which commits to keep (the mirror's synced groups and topics)
     * @param undecodable told the offset and the reason of each record that does not decode; the record is skipped, so
     *                    one corrupt commit does not stop the following of every other
     * @return the commits a COMMIT marker in this batch made final, in log order; none for any other batch
     */
    List<SourceOffsetCommitRecord> read(StoredBatch batch, Predicate<SourceOffsetCommit> wanted, ObjLongConsumer<String> undecodable) {
        if (!batch.isV2() || !batch.isTransactional()) {
            return List.of();
        }
        if (batch.isControlBatch()) {
            Optional<TransactionMarker> marker = TransactionMarker.of(batch);
            List<Pending> ended = marker.isPresent() ? open.remove(batch.producerId()) : null;
            if (ended == null || !marker.get().commit()) {
                return List.of();
            }
            return ended.stream().map(p -> SourceOffsetCommitRecord.of(mirror, p.commit(), batch.producerId(), p.producerEpoch(),
                logPartition, batch.baseOffset(), batch.maxTimestamp())).toList();
        }
        for (StoredRecord r : batch.records()) {
            Optional<SourceOffsetCommit> commit;
            try {
                commit = SourceOffsetCommit.of(r.key(), r.value());
            } catch (IllegalArgumentException e) {
                undecodable.accept(e.getMessage(), r.offset());
                continue;
            }
            commit.filter(wanted).ifPresent(c ->
                open.computeIfAbsent(batch.producerId(), id -> new ArrayList<>()).add(new Pending(c, batch.producerEpoch())));
        }
        return List.of();
    }
}
