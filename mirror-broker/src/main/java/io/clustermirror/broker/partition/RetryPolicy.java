package io.clustermirror.broker.partition;

import io.clustermirror.common.MirrorConfig;

/**
 * How a mirror's FAILED partitions try again by themselves: exponential backoff with full jitter, and a bounded number of
 * retries in a row, after which a partition waits for the operator's {@code --recover}. The jitter spreads the retries of
 * partitions that failed together (a link flap fails thousands at once) instead of sending them back to the source at the
 * same moment.
 *
 * @param backoffMs    the delay before the first retry, and the least delay of any retry
 * @param backoffMaxMs the greatest delay of any retry
 * @param retries      automatic retries in a row; 0 never retries by itself
 */
public record RetryPolicy(long backoffMs, long backoffMaxMs, int retries) {
    /** The policy of a mirror that sets none of the retry configs. */
    public static final RetryPolicy DEFAULTS = new RetryPolicy(
        Long.parseLong(MirrorConfig.KNOWN_MIRROR_KEYS.get(MirrorConfig.PARTITION_RETRY_BACKOFF_MS)),
        Long.parseLong(MirrorConfig.KNOWN_MIRROR_KEYS.get(MirrorConfig.PARTITION_RETRY_BACKOFF_MAX_MS)),
        Integer.parseInt(MirrorConfig.KNOWN_MIRROR_KEYS.get(MirrorConfig.PARTITION_RETRIES)));

    public RetryPolicy {
        if (backoffMs < 0 || backoffMaxMs < 0 || retries < 0) {
            throw new IllegalArgumentException("retry backoffs and retries must not be negative: " + backoffMs + ", "
                + backoffMaxMs + ", " + retries);
        }
    }

    /** The policy a mirror's configs give. */
    public static RetryPolicy of(MirrorConfig config) {
        return new RetryPolicy(config.getLong(MirrorConfig.PARTITION_RETRY_BACKOFF_MS),
            config.getLong(MirrorConfig.PARTITION_RETRY_BACKOFF_MAX_MS), config.getInt(MirrorConfig.PARTITION_RETRIES));
    }

    /** True if a partition that has just failed for the {@code failures}-th time in a row still retries by itself. */
    public boolean retriesAfter(int failures) {
        return failures <= retries;
    }

    /**
     * The delay before the retry that follows failure number {@code failures} (1 for the first): uniformly spread between
     * the least delay and the ceiling {@code min(backoffMaxMs, backoffMs * 2^(failures - 1))}, so the first retry waits
     * exactly {@code backoffMs} and the ceiling doubles from there.
     *
     * @param jitter where in that range, from 0 (the least delay) to 1 (the ceiling)
     */
    public long delayMs(int failures, double jitter) {
        if (failures < 1 || jitter < 0 || jitter > 1) {
            throw new IllegalArgumentException("failure " + failures + ", jitter " + jitter);
        }
        long least = Math.min(backoffMs, backoffMaxMs);
        int doublings = Math.min(failures - 1, Long.SIZE - 2);
        // base * 2^d > max exactly when base > floor(max / 2^d); otherwise base * 2^d cannot overflow.
        long ceiling = least > (backoffMaxMs >> doublings) ? backoffMaxMs : least << doublings;
        long span = ceiling - least;
        // A double cannot hold every long: the product may round either way, so the ends are exact and the rest capped.
        return least + (jitter == 1 ? span : Math.min(span, (long) (jitter * span)));
    }
}
