package io.clustermirror.broker.partition;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A {@link PassScheduler} on one daemon thread. A pass that throws is logged and the next one still runs: an executor
 * would otherwise stop a periodic task for good at its first exception.
 */
final class ThreadPassScheduler implements PassScheduler {
    private static final Logger log = LoggerFactory.getLogger(ThreadPassScheduler.class);

    private final ScheduledThreadPoolExecutor executor;

    ThreadPassScheduler(String threadName) {
        this.executor = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, threadName);
            thread.setDaemon(true);
            return thread;
        });
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        executor.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
    }

    @Override
    public void everyPeriod(Runnable pass, long periodMs) {
        executor.scheduleAtFixedRate(logged(pass), periodMs, periodMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public void soon(Runnable pass) {
        executor.execute(logged(pass));
    }

    @Override
    public void close() throws InterruptedException {
        executor.shutdown();
        while (!executor.awaitTermination(30, TimeUnit.SECONDS)) {
            log.info("Waiting for the producer state pass in progress to end before the broker stops");
        }
    }

    private static Runnable logged(Runnable pass) {
        return () -> {
            try {
                pass.run();
            } catch (RuntimeException e) {
                log.error("A producer state pass failed; the next one runs as planned", e);
            }
        };
    }
}
