package io.clustermirror.broker.partition;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * TEST-ONLY: holds a stop at one of its steps, so that a test on launched processes can kill the partition's leader, or
 * move its leadership, at exactly that point of the stop. Never an operator setting: it is read only from the JVM system
 * property {@value #PROPERTY}, which names a file. While that file exists and holds a partition and a step (for example
 * {@code ledger-0 after-cut}), the stop of that partition waits at that step, after logging one line that says so, until
 * the file no longer names it, this broker no longer leads the partition at the stop's epoch (an election moved it), or
 * the broker shuts down (which waits for its stops). Without the property it costs one field read.
 */
public final class TestOnlyStopHold {
    private static final Logger log = LoggerFactory.getLogger(TestOnlyStopHold.class);
    /** The JVM system property that names the hold file; test-only. */
    public static final String PROPERTY = "clustermirror.testonly.stop.hold.file";
    private static final Optional<Path> FILE = Optional.ofNullable(System.getProperty(PROPERTY)).filter(s -> !s.isBlank()).map(Path::of);
    private static final long POLL_MS = 20;

    /** The points of a stop where a test may hold it. */
    public enum Step {
        /** The cut is decided (the last stable offset read, or the earlier attempt's cut taken), nothing truncated yet. */
        BEFORE_CUT,
        /** The leader and its in-sync followers are truncated to the cut; no barrier yet. */
        AFTER_CUT,
        /** The barrier is appended on the leader; its producer state not yet cleaned, the followers may lack the barrier. */
        AFTER_BARRIER;

        /** The name a hold file uses: {@code before-cut}, {@code after-cut}, {@code after-barrier}. */
        public String id() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    private TestOnlyStopHold() {
    }

    /**
     * Waits here while the hold file names {@code tp} and {@code step} and {@code stillLeader} holds.
     *
     * @param stillLeader whether this broker still leads the partition at the stop's epoch and is not shutting down
     */
    static void at(Step step, TopicPartition tp, BooleanSupplier stillLeader, Time time) throws InterruptedException {
        if (FILE.isEmpty()) {
            return;
        }
        String wanted = tp + " " + step.id();
        boolean logged = false;
        while (wanted.equals(read(FILE.get())) && stillLeader.getAsBoolean()) {
            if (!logged) {
                log.warn("TEST-ONLY: the stop of {} holds at step {} while {} names it (-D{})", tp, step.id(), FILE.get(), PROPERTY);
                logged = true;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("held at step " + step.id() + " of the stop of " + tp);
            }
            time.sleep(POLL_MS); // polling a file the test controls; no event to wait on exists
        }
        if (logged) {
            log.warn("TEST-ONLY: the stop of {} goes on from step {}", tp, step.id());
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).trim();
        } catch (NoSuchFileException e) {
            return "";
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot read the test-only hold file " + file, e);
        }
    }
}
