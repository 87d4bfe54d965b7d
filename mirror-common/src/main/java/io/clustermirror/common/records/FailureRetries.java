package io.clustermirror.common.records;

/**
 * How a FAILED mirror partition tries again, as its leader recorded it in {@code __mirror_state}: shown by describe, and
 * read by the mirror controller to refuse a {@code --recover} that cannot help.
 *
 * <p>Invariant: {@code attempts >= 1}; an unrecoverable failure never has an automatic attempt.
 *
 * @param attempts      failed attempts in a row under the current leader (the first failure is attempt 1)
 * @param nextAttemptMs when the leader tries again by itself, or {@link #NONE}: its automatic retries are used up
 *                      ({@code --recover}, a pause and resume, or a new leader tries again), or no retry can help
 * @param recoverable   false when no retry can help: the source topic was deleted or re-created, so fetching it again
 *                      would copy another topic's data over the mirrored history
 */
public record FailureRetries(int attempts, long nextAttemptMs, boolean recoverable) {
    /** {@link #nextAttemptMs()} of a partition that does not try again by itself. */
    public static final long NONE = -1L;

    public FailureRetries {
        if (attempts < 1) {
            throw new IllegalArgumentException("a failure counts at least one attempt: " + attempts);
        }
        if (!recoverable && nextAttemptMs != NONE) {
            throw new IllegalArgumentException("an unrecoverable failure has no automatic attempt");
        }
    }

    /** True while the partition will try again by itself. */
    public boolean retriesAutomatically() {
        return nextAttemptMs != NONE;
    }
}
