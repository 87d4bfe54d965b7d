package io.clustermirror.testsupport;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Waiting for conditions, in tests and in the test tools (the chaos runner, the benchmark). They synchronise on
 * observable conditions with a timeout, never on fixed sleeps: a sleep is either too short on a slow machine or a
 * waste of time on a fast one. Tests use {@link #waitFor} and {@link #waitForValue}, which fail with an
 * {@link AssertionError}; a tool that records a timeout as a finding uses {@link #await} and {@link #awaitValue}, which
 * throw a {@link TimeoutException}. All poll the same way.
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
        waitFor(condition, timeout, () -> message);
    }

    /**
     * As {@link #waitFor(Condition, Duration, String)}, with a message built only if the wait times out: it can name
     * the state the condition was waiting to change.
     */
    public static void waitFor(Condition condition, Duration timeout, Supplier<String> message) throws InterruptedException {
        waitForValue(asValue(condition), timeout, message);
    }

    /**
     * Polls {@code supplier} until it returns a value, and returns it.
     *
     * @throws AssertionError naming {@code message} (and the last exception) if no value comes within {@code timeout}
     */
    public static <T> T waitForValue(ValueSupplier<T> supplier, Duration timeout, String message) throws InterruptedException {
        return waitForValue(supplier, timeout, () -> message);
    }

    private static <T> T waitForValue(ValueSupplier<T> supplier, Duration timeout, Supplier<String> message) throws InterruptedException {
        try {
            return awaitValue(supplier, timeout, message);
        } catch (TimeoutException e) {
            AssertionError error = new AssertionError(e.getMessage());
            if (e.getCause() != null) {
                error.initCause(e.getCause());
            }
            throw error;
        }
    }

    /**
     * Polls {@code condition} until it holds, as {@link #waitFor(Condition, Duration, String)}.
     *
     * @throws TimeoutException naming {@code message} (and the last exception, its cause) if it does not hold in time
     */
    public static void await(Condition condition, Duration timeout, String message) throws TimeoutException, InterruptedException {
        awaitValue(asValue(condition), timeout, () -> message);
    }

    /**
     * Polls {@code supplier} until it returns a value, and returns it, as {@link #waitForValue}.
     *
     * @throws TimeoutException naming {@code message} (and the last exception, its cause) if no value comes in time
     */
    public static <T> T awaitValue(ValueSupplier<T> supplier, Duration timeout, String message) throws TimeoutException, InterruptedException {
        return awaitValue(supplier, timeout, () -> message);
    }

    private static <T> T awaitValue(ValueSupplier<T> supplier, Duration timeout, Supplier<String> message)
        throws TimeoutException, InterruptedException {
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
                TimeoutException timedOut = new TimeoutException("Timed out after " + timeout.toMillis() + " ms waiting for: "
                    + message.get() + (lastError == null ? "" : " (last error: " + lastError + ")"));
                if (lastError != null) {
                    timedOut.initCause(lastError);
                }
                throw timedOut;
            }
            Thread.sleep(Math.min(pollMs, TimeUnit.NANOSECONDS.toMillis(remainingNs) + 1));
            pollMs = Math.min(pollMs * 2, MAX_POLL_INTERVAL_MS);
        }
    }

    private static ValueSupplier<Boolean> asValue(Condition condition) {
        return () -> condition.test() ? Optional.of(Boolean.TRUE) : Optional.empty();
    }
}
