package io.clustermirror.admin;

/**
 * A change of the source topic that the metadata sync holds back under the mirror's
 * {@code mirror.source.destructive.policy=hold}: a topic config that would let the destination delete data sooner, or a
 * growth by more than {@code mirror.partitions.max.growth} partitions.
 *
 * @param change      what changes, e.g. {@code retention.ms=1}, {@code removal of retention.ms},
 *                    {@code growth to 500 partitions}
 * @param sinceMs     when the sync first saw it
 * @param status      {@code HELD}; {@code APPROVED} (applied by an operator, copied by the sync's next round);
 *                    {@code REJECTED} (the destination keeps its value while the source keeps this one)
 * @param appliesAtMs when the sync copies a {@code HELD} change by itself; -1 for a decided one
 */
public record HeldTopicChange(String change, long sinceMs, String status, long appliesAtMs) {
}
