package io.clustermirror.testkit;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Waiting for conditions in tests. Tests synchronise on observable conditions with a timeout, never on
 * fixed sleeps: a sleep is either too short on a slow machine or a waste of time on a fast one.
 */
public final class TestUtils {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
    private static final long MAX_POLL_INTERVAL_MS = 100;

    private TestUtils() {
    }

    /** A condition to poll; an exception counts as "not yet" and is reported if the wait times out. */
    @FunctionalInterface
    public interface Condition {
        boolean test() throws Exception;
    }

    /** A value to poll for; empty (or an exception) means "not yet". */
    @FunctionalInterface
    public interface ValueSupplier<T> {
        Optional<T> get() throws Exception;
    }

    /**
     * Polls {@code condition} until it holds.
     *
     * @throws AssertionError naming {@code message} (and the last exception) if it does not hold within {@code timeout}
     */
    public static void waitFor(Condition condition, Duration timeout, String message) throws InterruptedException {
        waitForValue(() -> condition.test() ? Optional.of(Boolean.TRUE) : Optional.empty(), timeout, message);
    }

    /**
     * Polls {@code supplier} until it returns a value, and returns it.
     *
     * @throws AssertionError naming {@code message} (and the last exception) if no value comes within {@code timeout}
     */
    public static <T> T waitForValue(ValueSupplier<T> supplier, Duration timeout, String message) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pollMs = 1;
        Exception lastError = null;
        while (true) {
            try {
                Optional<T> value = supplier.get();
                if (value.isPresent()) {
                    return value.get();
                }
                lastError = null;
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                lastError = e;
            }
            long remainingNs = deadline - System.nanoTime();
            if (remainingNs <= 0) {
                AssertionError error = new AssertionError("Timed out after " + timeout.toMillis() + " ms waiting for: "
                    + message + (lastError == null ? "" : " (last error: " + lastError + ")"));
                if (lastError != null) {
                    error.initCause(lastError);
                }
                throw error;
            }
            Thread.sleep(Math.min(pollMs, TimeUnit.NANOSECONDS.toMillis(remainingNs) + 1));
            pollMs = Math.min(pollMs * 2, MAX_POLL_INTERVAL_MS);
        }
    }
}
