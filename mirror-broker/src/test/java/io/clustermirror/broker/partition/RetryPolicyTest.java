package io.clustermirror.broker.partition;

import io.clustermirror.common.MirrorConfig;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RetryPolicyTest {
    private final RetryPolicy policy = new RetryPolicy(1_000, 300_000, 10);

    @Test
    void theFirstRetryWaitsTheBackoffAndLaterOnesSpreadUpToADoublingCeiling() {
        assertEquals(1_000, policy.delayMs(1, 0));
        assertEquals(1_000, policy.delayMs(1, 1));
        assertEquals(1_000, policy.delayMs(4, 0), "jitter never waits less than the backoff");
        assertEquals(8_000, policy.delayMs(4, 1));
        assertEquals(4_500, policy.delayMs(4, 0.5));
        assertEquals(256_000, policy.delayMs(9, 1));
        assertEquals(300_000, policy.delayMs(10, 1), "capped at the maximum");
        assertEquals(300_000, policy.delayMs(Integer.MAX_VALUE, 1));
    }

    @Test
    void delaysNeverOverflow() {
        RetryPolicy huge = new RetryPolicy(Long.MAX_VALUE / 3, Long.MAX_VALUE, 1);
        assertEquals(Long.MAX_VALUE, huge.delayMs(3, 1));
        assertTrue(huge.delayMs(3, 0.999) > 0);
        assertEquals(0, new RetryPolicy(0, 0, 1).delayMs(Integer.MAX_VALUE, 1));
        assertEquals(50, new RetryPolicy(100, 50, 1).delayMs(3, 1), "a backoff above its maximum waits the maximum");
    }

    @Test
    void retriesAreCountedAfterEachFailure() {
        assertTrue(policy.retriesAfter(1));
        assertTrue(policy.retriesAfter(10));
        assertFalse(policy.retriesAfter(11));
        assertFalse(new RetryPolicy(1, 1, 0).retriesAfter(1));
    }

    @Test
    void aMirrorsConfigsGiveItsPolicyAndTheDefaultsFollowKip1279() {
        assertEquals(new RetryPolicy(1_000, 300_000, 10), RetryPolicy.DEFAULTS);
        assertEquals(RetryPolicy.DEFAULTS, RetryPolicy.of(MirrorConfig.validate("dr", Map.of("bootstrap.servers", "s:9092"))));
        assertEquals(new RetryPolicy(5, 50, 0), RetryPolicy.of(MirrorConfig.validate("dr", Map.of("bootstrap.servers", "s:9092",
            MirrorConfig.PARTITION_RETRY_BACKOFF_MS, "5", MirrorConfig.PARTITION_RETRY_BACKOFF_MAX_MS, "50",
            MirrorConfig.PARTITION_RETRIES, "0"))));
    }

    @Test
    void refusesNegativeValuesAndJitterOutOfRange() {
        assertThrows(IllegalArgumentException.class, () -> new RetryPolicy(-1, 10, 1));
        assertThrows(IllegalArgumentException.class, () -> new RetryPolicy(1, -10, 1));
        assertThrows(IllegalArgumentException.class, () -> new RetryPolicy(1, 10, -1));
        assertThrows(IllegalArgumentException.class, () -> policy.delayMs(1, 1.5));
        assertThrows(IllegalArgumentException.class, () -> policy.delayMs(0, 0.5));
    }
}
