package io.clustermirror.chaos;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;

/** Polling waits with a deadline: the runner's only way to wait for a condition of the clusters. */
final class Waits {
    private static final long POLL_MILLIS = 250;

    private Waits() {
    }

    /**
     * Polls {@code condition} until it returns true, or throws a {@link TimeoutException} naming {@code what} (with the
     * last exception the condition threw, if any) once {@code timeout} has passed.
     */
    static void until(Callable<Boolean> condition, Duration timeout, String what) throws TimeoutException, InterruptedException {
        value(() -> Boolean.TRUE.equals(condition.call()) ? Optional.of(Boolean.TRUE) : Optional.empty(), timeout, what);
    }

    /** Polls {@code supplier} until it returns a value, as {@link #until}. */
    static <T> T value(Callable<Optional<T>> supplier, Duration timeout, String what) throws TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (true) {
            try {
                Optional<T> value = supplier.call();
                if (value.isPresent()) {
                    return value.get();
                }
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                last = e;
            }
            if (System.nanoTime() > deadline) {
                TimeoutException timedOut = new TimeoutException("timed out after " + timeout.toSeconds() + " s waiting for " + what
                    + (last == null ? "" : " (last error: " + last + ")"));
                if (last != null) {
                    timedOut.initCause(last);
                }
                throw timedOut;
            }
            Thread.sleep(POLL_MILLIS);
        }
    }
}
