package io.clustermirror.broker.partition;

/**
 * Where {@link ProducerStateHygiene} runs its passes: one at a time, in the order asked, each soon after it is asked
 * for, plus one every period.
 */
interface PassScheduler extends AutoCloseable {
    /** Runs {@code pass} every {@code periodMs}, the first time one period from now. */
    void everyPeriod(Runnable pass, long periodMs);

    /** Runs {@code pass} as soon as the passes before it have run. */
    void soon(Runnable pass);

    /** Runs nothing more; waits for a pass in progress to end, never interrupting it. */
    @Override
    void close() throws InterruptedException;
}
