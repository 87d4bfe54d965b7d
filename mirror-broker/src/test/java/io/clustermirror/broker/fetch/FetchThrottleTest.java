package io.clustermirror.broker.fetch;

import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The link throttle's token bucket on mock time. */
class FetchThrottleTest {
    private static final long LIMIT = 100_000L;

    private final MockTime time = new MockTime(0L, 1_000_000L, 0L);

    /** Fetches as fast as the throttle lets it, {@code responseBytes} each, for {@code seconds}; returns the bytes taken. */
    private long fetchFor(FetchThrottle throttle, long responseBytes, long seconds) {
        long end = time.milliseconds() + seconds * 1000L;
        long taken = 0;
        while (time.milliseconds() < end) {
            long delay = throttle.delayMs();
            if (delay > 0) {
                time.sleep(delay);
                continue;
            }
            throttle.record(responseBytes);
            taken += responseBytes;
            time.sleep(1L); // a fetch's round trip
        }
        return taken;
    }

    @Test
    void holdsTheRateOverManyFetches() {
        FetchThrottle throttle = new FetchThrottle(time, LIMIT);
        long taken = fetchFor(throttle, 7_000L, 100L);
        // 100 s at the limit, plus the first second's burst and the response in flight.
        assertTrue(taken >= 99 * LIMIT && taken <= 101 * LIMIT + 7_000L, "took " + taken);
    }

    @Test
    void boundsTheBurstAfterAnIdlePeriodToOneSecond() {
        FetchThrottle throttle = new FetchThrottle(time, LIMIT);
        time.sleep(3_600_000L);
        // No delay while the one second of credit lasts, then a delay for each further response.
        long burst = 0;
        while (throttle.delayMs() == 0) {
            throttle.record(10_000L);
            burst += 10_000L;
        }
        assertEquals(LIMIT + 10_000L, burst);
        assertEquals(100L, throttle.delayMs()); // 10 000 bytes of debt at 100 000 bytes/s
    }

    @Test
    void aResponseLargerThanTheLimitIsKeptAndPaidForByWaiting() {
        FetchThrottle throttle = new FetchThrottle(time, LIMIT);
        throttle.record(LIMIT + 5 * LIMIT); // one oversized batch: five seconds of debt after the burst
        assertEquals(5_000L, throttle.delayMs());
        time.sleep(4_999L);
        assertEquals(1L, throttle.delayMs());
        time.sleep(1L);
        assertEquals(0L, throttle.delayMs());
    }

    @Test
    void aNewLimitAppliesAtOnce() {
        // An ALTER builds the mirror's fetchers, and their throttle, anew: the new limit holds from the next fetch on.
        FetchThrottle slow = new FetchThrottle(time, LIMIT);
        long slowTaken = fetchFor(slow, 10_000L, 10L);
        FetchThrottle fast = new FetchThrottle(time, 10 * LIMIT);
        long fastTaken = fetchFor(fast, 10_000L, 10L);
        assertTrue(slowTaken <= 11 * LIMIT + 10_000L, "slow " + slowTaken);
        assertTrue(fastTaken >= 10 * (10 * LIMIT), "fast " + fastTaken);
        assertEquals(0L, new FetchThrottle(time, FetchThrottle.UNLIMITED).delayMs());
    }

    @Test
    void unlimitedNeverDelays() {
        FetchThrottle throttle = new FetchThrottle(time, FetchThrottle.UNLIMITED);
        throttle.record(Long.MAX_VALUE / 2);
        throttle.record(Long.MAX_VALUE / 2);
        assertEquals(0L, throttle.delayMs());
        assertThrows(IllegalArgumentException.class, () -> new FetchThrottle(time, 0L));
    }
}
