package io.clustermirror.broker.sync;

import org.apache.kafka.common.utils.Time;

import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Where the metadata sync of one mirror runs and waits: its rounds, and every wait within a round (for the controller's
 * answer to a command, for the image to show a change, before retrying a refused config change), are tasks of one
 * {@link TaskRunner}, timed by {@link #time()}. Nothing in the sync sleeps: a wait is the next task, scheduled for later.
 *
 * <p>Once {@link #shutdown shut down} it schedules nothing more, so a round in progress ends at its next wait and no
 * round follows it. The tasks run one at a time on one thread, so the sync's state needs no lock.
 */
final class SyncScheduler {
    private final TaskRunner runner;
    private final Time time;
    private volatile boolean shutDown;

    /** Runs the scheduler's tasks one at a time, each once its delay has passed on the scheduler's clock. */
    interface TaskRunner {
        /** @throws RejectedExecutionException once stopped */
        void runAfter(long delayMs, Runnable task);

        /** Drops the tasks not started and interrupts the one running, so that its blocking client call ends. */
        void stop();

        /** Waits up to {@code waitMs} for the task running at {@link #stop} to end; false if it did not. */
        boolean awaitStopped(long waitMs) throws InterruptedException;
    }

    /** @param runner runs the tasks; this scheduler owns it and stops it on {@link #shutdown} */
    SyncScheduler(TaskRunner runner, Time time) {
        this.runner = runner;
        this.time = time;
    }

    /** A scheduler on a new daemon thread of this name, on the system clock. */
    static SyncScheduler onNewThread(String threadName) {
        ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        return new SyncScheduler(new TaskRunner() {
            @Override
            public void runAfter(long delayMs, Runnable task) {
                thread.schedule(task, delayMs, TimeUnit.MILLISECONDS);
            }

            @Override
            public void stop() {
                thread.shutdownNow();
            }

            @Override
            public boolean awaitStopped(long waitMs) throws InterruptedException {
                return thread.awaitTermination(waitMs, TimeUnit.MILLISECONDS);
            }
        }, Time.SYSTEM);
    }

    Time time() {
        return time;
    }

    boolean isShutDown() {
        return shutDown;
    }

    /** Runs the task {@code delayMs} from now; nothing once shut down. */
    void after(long delayMs, Runnable task) {
        if (shutDown) {
            return;
        }
        try {
            runner.runAfter(delayMs, task);
        } catch (RejectedExecutionException e) {
            // Shut down by another thread since the check: the task is not wanted anymore.
        }
    }

    /**
     * Makes an attempt now and again every {@code intervalMs} while it returns empty, until {@code timeoutMs} from now have
     * passed: the result is the first value an attempt returns, or empty when the time is up (after at least one
     * attempt), or the exception an attempt threw. A scheduler shut down makes no further attempt, and the result then
     * never completes.
     */
    <T> CompletableFuture<Optional<T>> retry(Callable<Optional<T>> attempt, long intervalMs, long timeoutMs) {
        CompletableFuture<Optional<T>> result = new CompletableFuture<>();
        attempt(attempt, intervalMs, time.milliseconds() + timeoutMs, result);
        return result;
    }

    private <T> void attempt(Callable<Optional<T>> attempt, long intervalMs, long deadlineMs, CompletableFuture<Optional<T>> result) {
        Optional<T> value;
        try {
            value = attempt.call();
        } catch (Exception e) {
            result.completeExceptionally(e);
            return;
        }
        if (value.isPresent() || time.milliseconds() >= deadlineMs) {
            result.complete(value);
        } else {
            after(intervalMs, () -> attempt(attempt, intervalMs, deadlineMs, result));
        }
    }

    /** Stops scheduling and stops the runner: the tasks not started are dropped, a running one is interrupted. */
    void shutdown() {
        shutDown = true;
        runner.stop();
    }

    /** Waits up to {@code waitMs} for the task running at {@link #shutdown} to end; false if it did not. */
    boolean awaitTermination(long waitMs) throws InterruptedException {
        return runner.awaitStopped(waitMs);
    }
}
