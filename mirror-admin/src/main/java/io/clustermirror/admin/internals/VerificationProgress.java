package io.clustermirror.admin.internals;

import io.clustermirror.admin.OperationProgress;
import io.clustermirror.admin.ProgressListener;
import io.clustermirror.common.batch.StoredBatch;

import java.util.Iterator;
import java.util.List;

/**
 * The progress of an integrity check, reported as it compares the partitions one after the other. The offsets to compare
 * are estimated when the check begins, from the destination's logs ({@link MirrorVerifications#estimatedOffsets}): a
 * partition's range is only fixed when the check reaches it, and reading both clusters' bounds of every partition up front
 * would double the check's requests. Invariant: the partitions before {@link #current} are done, and
 * {@link #remainingAfterCurrent} is the sum of the estimates of those after it.
 */
public final class VerificationProgress {
    private final List<Long> estimatedOffsets;
    private final ProgressListener listener;
    private int current;
    private long remainingAfterCurrent;

    /**
     * Reports the start of the check: nothing compared yet.
     *
     * @param estimatedOffsets the offsets to compare in each partition, in the order the check compares them
     */
    public VerificationProgress(List<Long> estimatedOffsets, ProgressListener listener) {
        this.estimatedOffsets = List.copyOf(estimatedOffsets);
        this.listener = listener;
        this.remainingAfterCurrent = this.estimatedOffsets.stream().mapToLong(Long::longValue).sum()
            - (this.estimatedOffsets.isEmpty() ? 0 : this.estimatedOffsets.get(0));
        report(this.estimatedOffsets.isEmpty() ? 0 : this.estimatedOffsets.get(0));
    }

    /**
     * The batches of the partition now compared, reporting each one as it is taken: its last offset tells how far the
     * comparison has come from {@code from}.
     */
    public Iterator<StoredBatch> counting(Iterator<StoredBatch> batches, long from) {
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return batches.hasNext();
            }

            @Override
            public StoredBatch next() {
                StoredBatch batch = batches.next();
                report(Math.max(0, estimatedOffsets.get(current) - (batch.lastOffset() + 1 - from)));
                return batch;
            }
        };
    }

    /** The partition now compared is done, whether identical or not; the next one begins. */
    public void partitionDone() {
        current++;
        long next = current < estimatedOffsets.size() ? estimatedOffsets.get(current) : 0;
        remainingAfterCurrent -= next;
        report(next);
    }

    private void report(long remainingInCurrent) {
        listener.onProgress(new OperationProgress(current, estimatedOffsets.size(), remainingAfterCurrent + remainingInCurrent));
    }
}
