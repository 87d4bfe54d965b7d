package io.clustermirror.common.records;

/**
 * How far a mirror's sync has read the source's coordinator logs ({@code __transaction_state} and the synced groups'
 * partitions of {@code __consumer_offsets}): a value of {@code __mirror_transactions} (key: the mirror's name, header
 * {@value SourceOffsetCommitRecord#KIND_HEADER} = {@value #KIND}). Every transaction the source prepared, and every
 * transactional offset commit it wrote, before {@code readUpToMs} (the source's end offsets were read then, and the sync
 * read up to them) is in {@code __mirror_transactions} before this record. A stop's analysis that read the destination's
 * offsets before that time knows every transaction that can lie below them.
 *
 * @param readUpToMs when the sync read the logs' end offsets that it then read up to, by the broker's clock
 */
public record SourceLogReadRecord(String mirror, long readUpToMs) {
    public static final String KIND = "read-up-to";
}
