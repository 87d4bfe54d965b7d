package io.clustermirror.broker.fetch;

import org.apache.kafka.common.utils.Time;

/**
 * The link throttle of one mirror on this broker ({@code mirror.fetch.rate.limit.bytes.per.sec}): a token bucket shared
 * by the mirror's fetcher threads, filled at the limit and holding at most one second of it.
 *
 * <p>A fetch's size is known only once its response arrived, so the bucket goes into debt by the bytes received
 * ({@link #record}) and a fetcher sends no request while it is in debt ({@link #delayMs}). Invariant: over any interval
 * of {@code t} seconds the fetchers receive at most {@code limit * (t + 1)} bytes plus one response per fetcher (the
 * responses that were in flight); every byte received is kept, the throttle only delays the next request.
 *
 * <p>Thread-safe: the fetchers of the mirror share it.
 */
final class FetchThrottle {
    /** The value of the config that means no limit (its default). */
    static final long UNLIMITED = Long.MAX_VALUE;

    private final Time time;
    private final long bytesPerSec;
    private double tokens; // guarded by this; negative: debt
    private long refilledMs; // guarded by this

    FetchThrottle(Time time, long bytesPerSec) {
        if (bytesPerSec <= 0) {
            throw new IllegalArgumentException("the rate limit must be positive: " + bytesPerSec);
        }
        this.time = time;
        this.bytesPerSec = bytesPerSec;
        this.tokens = bytesPerSec;
        this.refilledMs = time.milliseconds();
    }

    boolean limited() {
        return bytesPerSec != UNLIMITED;
    }

    /** How long from now the next fetch must wait: 0 unless the fetchers received more than the limit allows. */
    synchronized long delayMs() {
        if (!limited()) {
            return 0L;
        }
        refill();
        return tokens >= 0 ? 0L : (long) Math.ceil(-tokens * 1000.0 / bytesPerSec);
    }

    /** Counts bytes received from the source. */
    synchronized void record(long bytes) {
        if (!limited()) {
            return;
        }
        refill();
        tokens -= bytes;
    }

    private void refill() {
        long now = time.milliseconds();
        if (now > refilledMs) {
            tokens = Math.min(bytesPerSec, tokens + (now - refilledMs) * (double) bytesPerSec / 1000.0);
            refilledMs = now;
        }
    }
}
