package io.clustermirror.admin;

import io.clustermirror.common.PartitionState;

/**
 * The integrity check of one mirror partition ({@link ClusterMirrorAdmin#verifyMirrorTopics}): the source's and the
 * destination's batches compared over {@code [verifiedFrom, verifiedTo)}, every byte but the partition leader epoch,
 * each side's CRC checked against its own bytes.
 *
 * @param state                 the partition's state when the check began
 * @param verifiedFrom          the greater of the two log start offsets: below it one side no longer holds the batches
 * @param verifiedTo            the end of the mirrored range: the barrier of a STOPPED partition (what was mirrored before
 *                              the stop), else the destination's high watermark when the check began
 * @param firstDifferenceOffset the offset of the first difference, or {@link MirrorPartitionDescription#UNKNOWN} (-1)
 *                              when identical or when the partition could not be read
 * @param difference            what differs there, or why the partition could not be read; null when identical
 * @param batches               the batches compared
 * @param bytes                 the bytes compared (one side's)
 */
public record PartitionVerification(String topic, int partition, PartitionState state, long verifiedFrom, long verifiedTo,
                                    boolean identical, long firstDifferenceOffset, String difference, long batches,
                                    long bytes) {
}
