package io.clustermirror.common.records;

/**
 * One entry of a source partition's epoch lineage: source leader epoch {@code epoch} starts at
 * {@code startOffset}. Destination batches carry destination epochs (see docs/DESIGN.md), so the source's
 * lineage lives in {@code __mirror_state}.
 */
public record EpochStart(int epoch, long startOffset) {
}
