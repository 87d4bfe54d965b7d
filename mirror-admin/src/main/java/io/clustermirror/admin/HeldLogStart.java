package io.clustermirror.admin;

/**
 * A move of the source partition's log start (a DeleteRecords, or retention on the source) that the destination holds
 * back under the mirror's {@code mirror.source.destructive.policy=hold}: until {@code appliesAtMs} the destination keeps
 * its records below {@code offset} readable.
 *
 * @param offset      the source's log start the destination will move to
 * @param sinceMs     when the destination first saw the move
 * @param appliesAtMs when the destination follows it ({@code sinceMs} plus {@code mirror.source.destructive.hold.ms})
 */
public record HeldLogStart(long offset, long sinceMs, long appliesAtMs) {
}
