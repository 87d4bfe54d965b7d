package io.clustermirror.broker.partition;

import io.clustermirror.broker.partition.PartitionAction.PersistState;
import io.clustermirror.broker.partition.PartitionAction.Prepare;
import io.clustermirror.broker.partition.PartitionAction.RepairDivergence;
import io.clustermirror.broker.partition.PartitionAction.RunStop;
import io.clustermirror.broker.partition.PartitionAction.ScheduleRetry;
import io.clustermirror.broker.partition.PartitionAction.SkipLostRecords;
import io.clustermirror.broker.partition.PartitionAction.StartFetching;
import io.clustermirror.broker.partition.PartitionAction.StopFetching;
import io.clustermirror.broker.partition.PartitionAction.StopUnmirrored;
import io.clustermirror.broker.partition.PartitionEvent.BecameFollower;
import io.clustermirror.broker.partition.PartitionEvent.BecameLeader;
import io.clustermirror.broker.partition.PartitionEvent.DesiredChanged;
import io.clustermirror.broker.partition.PartitionEvent.FetchFailed;
import io.clustermirror.broker.partition.PartitionEvent.FetcherStopped;
import io.clustermirror.broker.partition.PartitionEvent.FetchingStarted;
import io.clustermirror.broker.partition.PartitionEvent.LineageChanged;
import io.clustermirror.broker.partition.PartitionEvent.MadeProgress;
import io.clustermirror.broker.partition.PartitionEvent.PrepareFailed;
import io.clustermirror.broker.partition.PartitionEvent.PrepareSucceeded;
import io.clustermirror.broker.partition.PartitionEvent.ProcedureOutcome;
import io.clustermirror.broker.partition.PartitionEvent.ProgressSnapshotDue;
import io.clustermirror.broker.partition.PartitionEvent.RecordedStateChanged;
import io.clustermirror.broker.partition.PartitionEvent.RecoverRequested;
import io.clustermirror.broker.partition.PartitionEvent.StateRecordLost;
import io.clustermirror.broker.partition.PartitionEvent.RepairFailed;
import io.clustermirror.broker.partition.PartitionEvent.RepairSucceeded;
import io.clustermirror.broker.partition.PartitionEvent.RetryDue;
import io.clustermirror.broker.partition.PartitionEvent.SourceAvailable;
import io.clustermirror.broker.partition.PartitionEvent.SourceDiverged;
import io.clustermirror.broker.partition.PartitionEvent.SourceRecordsLost;
import io.clustermirror.broker.partition.PartitionEvent.SourceTopicGone;
import io.clustermirror.broker.partition.PartitionEvent.SourceUnavailable;
import io.clustermirror.broker.partition.PartitionEvent.StopFailed;
import io.clustermirror.broker.partition.PartitionEvent.StopSucceeded;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.DoubleSupplier;
import java.util.function.Function;

import static io.clustermirror.common.PartitionState.FAILED;
import static io.clustermirror.common.PartitionState.MIRRORING;
import static io.clustermirror.common.PartitionState.PAUSED;
import static io.clustermirror.common.PartitionState.PAUSING;
import static io.clustermirror.common.PartitionState.PREPARING;
import static io.clustermirror.common.PartitionState.STOPPED;
import static io.clustermirror.common.PartitionState.STOPPING;
import static io.clustermirror.common.PartitionState.UNKNOWN;

/**
 * The per-partition mirror state machine: given a {@link MirrorPartition} and a
 * {@link PartitionEvent}, returns the next value and the {@link PartitionAction}s to run. Pure: no I/O, no
 * clock, no threads; the caller serialises events per partition and runs the actions in order.
 *
 * <p>Invariants:
 * <ul>
 *   <li>Only a leader acts. A follower ignores every event but {@link BecameLeader}; it only tracks the
 *       desired and the recorded state, so that a later leadership starts from the current ones.</li>
 *   <li>A partition fetches only in MIRRORING and only while leader: {@link StartFetching} is issued only on
 *       entering MIRRORING as leader, and leaving MIRRORING issues {@link StopFetching} (so does losing
 *       leadership, a new leader epoch, or leaving the mirror, in MIRRORING or PAUSING).</li>
 *   <li>{@link RunStop} is issued only in STOPPING, and after a {@link StopFetching} only on its
 *       {@link FetcherStopped}: no mirrored append can follow the stop's truncation and barrier, and an
 *       executor that posts FetcherStopped after each StopFetching runs each stop once. A partition this mirror
 *       never fetched into ({@link MirrorPartition#mirroredInto()} false: no {@link FetchingStarted} under this
 *       leadership, no mirrored data in the record it found) holds only its own data: it gets
 *       {@link StopUnmirrored} instead, at the same points, and is neither truncated nor given a barrier.</li>
 *   <li>STOPPED is left only when the desired state changes to MIRRORING (to PREPARING, which re-aligns the
 *       log) or the topic leaves its mirror (to UNKNOWN). A new leader finding STOPPED persisted (or a new
 *       epoch of a STOPPED leader) stays STOPPED unless the desired state is MIRRORING or null.</li>
 *   <li>Mirroring starts (or restarts after a failure, a new leadership or a pause) only through PREPARING:
 *       a partition can reach PAUSED without ever being aligned (paused while PREPARING, UNKNOWN or FAILED),
 *       so resuming from PAUSED aligns again (a log this mirror was copying into is kept as it is). Only a
 *       resume that arrives while the fetcher is still stopping (PAUSING) continues without it, and so does a
 *       partition whose {@link MirrorPartition#recorded() recorded} state is past PREPARING ({@link #RECORDED_ALIGNED}:
 *       a new leader continues where its predecessor was): it enters MIRRORING at once.</li>
 *   <li>Every state change of a leader is persisted ({@link PersistState}), except entering UNKNOWN (nothing
 *       to mirror, nothing to record) and a new leadership that finds STOPPED already persisted. So is a leader's
 *       {@link LineageChanged} and {@link StateRecordLost} at once, and its {@link ProgressSnapshotDue} in MIRRORING and in PAUSED (where a probe of the
 *       source finds the records that arrive while paused: the lag grows).</li>
 *   <li>Once a stop has completed, the log ends with a barrier that is not source data: mirroring resumes
 *       only through PREPARING, and a pause that arrived during the stop is not applied (STOPPED).</li>
 *   <li>A FAILED partition retries by itself ({@link ScheduleRetry}) as its mirror's {@link RetryPolicy} says: with
 *       jittered exponential backoff, for a bounded number of failures in a row. Once they are used up it waits (no retry
 *       pending) for the operator's {@link RecoverRequested}, a pause and resume, or a new leadership. A failed stop is
 *       always retried (a desire to stop must complete), and so is a preparation the source did not answer (it ends by
 *       itself once the source is back). A failure of one partition touches no other. A failure no automatic
 *       retry can mend waits for the operator at once: source records lost under {@code mirror.source.data.loss.policy=fail}
 *       (a recovery tries again, say after the policy changed), and the source topic deleted or re-created
 *       ({@link SourceTopicGone}: fetching it again would copy another topic's data over the mirrored history, so not even
 *       a recovery tries it; only a stop or a new leadership moves it).</li>
 *   <li>A recovery ({@link RecoverRequested}) acts only on a leader in FAILED that a retry may help: it forgets the failures
 *       (a fresh run of automatic retries) and moves toward the desired state at once.</li>
 *   <li>Source records lost before they were mirrored ({@link SourceRecordsLost}) are never skipped in silence: under
 *       the {@code continue} policy the partition goes on past them ({@link SkipLostRecords}) and its last error names
 *       the range until another error replaces it; under {@code fail} it stops, naming the range.</li>
 *   <li>A desire to stop always completes, whatever the partition is doing: in every leader state but STOPPING
 *       (whose stop is under way) and STOPPED it issues {@link RunStop} at once, or on {@link FetcherStopped} from
 *       MIRRORING and PAUSING. Only the stop's own outcome, a new leadership or leaving the mirror moves a
 *       partition out of STOPPING: a desire to mirror again takes effect once the stop has completed.</li>
 *   <li>Every transition that issues a procedure on the log ({@link Prepare}, {@link RepairDivergence},
 *       {@link RunStop}, {@link StopUnmirrored}), or that changes the state, the leadership or the leader epoch, starts a new
 *       {@link MirrorPartition#generation() generation}. A procedure belongs to the generation of the transition
 *       that issued it: the executor lets it change the log only while that generation is current, so nothing
 *       a superseded procedure does can follow the work of a newer one (a stop's truncation and barrier in
 *       particular), and the machine ignores any {@link ProcedureOutcome} of another generation.</li>
 * </ul>
 */
public final class PartitionStateMachine {
    private static final PartitionAction PREPARE = new Prepare();
    private static final PartitionAction START_FETCHING = new StartFetching();
    private static final PartitionAction STOP_FETCHING = new StopFetching();
    private static final PartitionAction RUN_STOP = new RunStop();
    private static final PartitionAction STOP_UNMIRRORED = new StopUnmirrored();
    private static final PartitionAction PERSIST = new PersistState();
    private static final String UNKNOWN_ERROR = "unknown error";
    /**
     * Recorded states that let a new preparation continue at once: the partition got past PREPARING under some leader.
     * FAILED and PREPARING do not prove it (a preparation refused as a loop is refused again on every retry).
     */
    static final Set<PartitionState> RECORDED_ALIGNED = EnumSet.of(MIRRORING, PAUSING, PAUSED, STOPPING);
    /** Recorded states that show an earlier leader fetched into the log (as does a recorded last mirrored offset). */
    private static final Set<PartitionState> RECORDED_MIRRORED_INTO = EnumSet.of(MIRRORING, PAUSING, PAUSED, STOPPING, STOPPED);

    private final Function<String, RetryPolicy> retryPolicies;
    private final DoubleSupplier jitter;

    /**
     * @param retryPolicies the retry policy of each mirror, by name
     * @param jitter        where each retry's delay falls in its range, from 0 to 1 ({@link RetryPolicy#delayMs}): random
     *                      numbers on a broker, fixed ones in tests
     */
    public PartitionStateMachine(Function<String, RetryPolicy> retryPolicies, DoubleSupplier jitter) {
        this.retryPolicies = retryPolicies;
        this.jitter = jitter;
    }

    public Transition handle(MirrorPartition current, PartitionEvent event, long nowMs) {
        if (event instanceof ProcedureOutcome outcome && outcome.generation() != current.generation()) {
            return stay(current); // its procedure was superseded: whatever it reports is stale
        }
        Transition t = decide(current, event, nowMs);
        return startsGeneration(current, t) ? new Transition(t.next().nextGeneration(), t.actions()) : t;
    }

    /** A procedure is issued, or the one that may be in flight no longer belongs to where the partition is. */
    private static boolean startsGeneration(MirrorPartition current, Transition t) {
        MirrorPartition next = t.next();
        return next.state() != current.state() || next.leader() != current.leader()
            || next.leaderEpoch() != current.leaderEpoch()
            || t.actions().stream().anyMatch(a -> a instanceof Prepare || a instanceof RepairDivergence || a instanceof RunStop
                || a instanceof StopUnmirrored);
    }

    private Transition decide(MirrorPartition current, PartitionEvent event, long nowMs) {
        if (event instanceof BecameLeader e) {
            return becameLeader(current, e);
        }
        if (event instanceof DesiredChanged e) {
            MirrorPartition p = current.withDesired(e.desired());
            return p.leader() ? desiredChanged(p) : stay(p);
        }
        if (event instanceof RecordedStateChanged e) {
            return stay(current.withRecorded(e.recorded()));
        }
        if (!current.leader()) {
            return stay(current);
        }
        PartitionState state = current.state();
        if (event instanceof BecameFollower) {
            return fetcherMayRun(state) ? go(current.asFollower(), STOP_FETCHING) : stay(current.asFollower());
        }
        if (event instanceof PrepareSucceeded && state == PREPARING) {
            return startFetching(current);
        }
        if (event instanceof PrepareFailed e && state == PREPARING) {
            return fail(current, e.error(), nowMs, e.sourceUnreachable());
        }
        if (event instanceof FetchFailed e && state == MIRRORING) {
            return fail(current, e.error(), nowMs, false, STOP_FETCHING);
        }
        if (event instanceof SourceRecordsLost e && state == MIRRORING) {
            return sourceRecordsLost(current, e);
        }
        if (event instanceof SourceTopicGone e && state == MIRRORING) {
            return go(current.failedUntilAsked(e.error(), false), STOP_FETCHING, PERSIST);
        }
        if (event instanceof SourceUnavailable e && state == MIRRORING) {
            return go(current.reporting(e.report(), true), PERSIST);
        }
        if (event instanceof SourceAvailable && state == MIRRORING && current.sourceUnavailable()) {
            return go(current.healthy(), PERSIST);
        }
        if (event instanceof SourceDiverged e && state == MIRRORING) {
            return go(current, new RepairDivergence(e.sourceEpoch(), e.sourceEpochEndOffset()));
        }
        if (event instanceof RepairSucceeded && state == MIRRORING) {
            return startFetching(current);
        }
        if (event instanceof RepairFailed e && state == MIRRORING) {
            return fail(current, e.error(), nowMs, false, STOP_FETCHING);
        }
        if (event instanceof FetchingStarted && state == MIRRORING) {
            return stay(current.asMirroredInto());
        }
        if (event instanceof ProgressSnapshotDue && (state == MIRRORING || state == PAUSED) || event instanceof LineageChanged
            || event instanceof StateRecordLost && state != UNKNOWN) {
            return go(current, PERSIST);
        }
        if (event instanceof MadeProgress && state == MIRRORING) {
            if (reportsSkippedRecords(current)) {
                return stay(current); // progress does not undo the loss
            }
            boolean hadError = current.lastError() != null;
            MirrorPartition healthy = current.healthy();
            return hadError ? go(healthy, PERSIST) : stay(healthy);
        }
        if (event instanceof RetryDue && state == FAILED && current.retryAtMs() != MirrorPartition.NO_RETRY
            && nowMs >= current.retryAtMs()) {
            return settle(current, false);
        }
        if (event instanceof RecoverRequested && state == FAILED && current.recoverable()) {
            return settle(current.healthy(), false);
        }
        if (event instanceof FetcherStopped && state == PAUSING) {
            return current.desired() == DesiredState.MIRRORING ? startFetching(current) : settle(current, false);
        }
        if (event instanceof FetcherStopped && state == STOPPING) {
            return go(current, stop(current));
        }
        if (event instanceof StopSucceeded && state == STOPPING) {
            // The log now ends with a barrier: only PREPARING may realign it for mirroring, and a pause
            // that came during the stop cannot make the topic read-only again.
            DesiredState desired = current.desired();
            return desired == null || desired == DesiredState.MIRRORING
                ? settle(current, false)
                : go(current.to(STOPPED).healthy(), PERSIST);
        }
        if (event instanceof StopFailed e && state == STOPPING) {
            return fail(current, e.error(), nowMs, false);
        }
        return stay(current);
    }

    /** Goes on past the lost records, or stops before them, as the mirror's policy says; the range is reported either way. */
    private static Transition sourceRecordsLost(MirrorPartition p, SourceRecordsLost e) {
        String lost = "source offsets [" + e.fromOffset() + ", " + e.toOffset() + ") of " + p.partition() + " were deleted on "
            + "the source (retention or deleteRecords) before they were mirrored";
        if (e.failOnLoss()) {
            return go(p.failedUntilAsked(MirrorError.SOURCE_RETENTION_OUTRUN.format(lost + "; the partition stops before them ("
                + MirrorConfig.SOURCE_DATA_LOSS_POLICY + "=fail): stop it, or set the policy to continue and recover it (--recover)"),
                true),
                STOP_FETCHING, PERSIST);
        }
        return go(p.reporting(MirrorError.SOURCE_RETENTION_OUTRUN.format(lost + "; skipped them, mirroring goes on at offset "
            + e.toOffset() + " (" + MirrorConfig.SOURCE_DATA_LOSS_POLICY + "=continue)"), false),
            new SkipLostRecords(e.fromOffset(), e.toOffset()), PERSIST);
    }

    /** The last error reports skipped source records: no failure, and not the source's unavailability. */
    private static boolean reportsSkippedRecords(MirrorPartition p) {
        return p.lastError() != null && p.failures() == 0 && !p.sourceUnavailable();
    }

    private static Transition becameLeader(MirrorPartition current, BecameLeader event) {
        if (current.leader() && event.leaderEpoch() <= current.leaderEpoch()) {
            return stay(current); // a repeated or stale notification
        }
        // A fetcher of the previous epoch cannot append any more (the epoch fences it), but must still go.
        boolean stopFetcher = current.leader() && fetcherMayRun(current.state());
        MirrorPartition leader = current.asLeader(event.leaderEpoch(), event.persisted(),
            event.mirroredOffsets() || RECORDED_MIRRORED_INTO.contains(event.persisted()));
        // A stopped partition is a normal writable one: only a desire to mirror again (or leaving the
        // mirror) may change it, never a pause that arrived after the stop.
        boolean stopped = event.persisted() == STOPPED || current.leader() && current.state() == STOPPED;
        DesiredState desired = current.desired();
        Transition decided = stopped && desired != null && desired != DesiredState.MIRRORING
            ? stay(leader.to(STOPPED))
            : settle(leader, stopFetcher);
        return stopFetcher ? prepend(STOP_FETCHING, decided) : decided;
    }

    private static Transition desiredChanged(MirrorPartition p) {
        PartitionState state = p.state();
        if (p.desired() == null) {
            return fetcherMayRun(state) ? go(p.to(UNKNOWN), STOP_FETCHING) : stay(p.to(UNKNOWN));
        }
        return switch (p.desired()) {
            case MIRRORING -> switch (state) {
                case UNKNOWN, STOPPED, PAUSED -> prepare(p);
                // PAUSING, FAILED and STOPPING pick the desired state up at their next step.
                default -> stay(p);
            };
            case PAUSED -> switch (state) {
                case MIRRORING -> go(p.to(PAUSING), STOP_FETCHING, PERSIST);
                case PREPARING, UNKNOWN, FAILED -> go(p.to(PAUSED), PERSIST);
                default -> stay(p);
            };
            case STOPPED -> switch (state) {
                case MIRRORING -> prepend(STOP_FETCHING, stopping(p, true));
                case PAUSING -> stopping(p, true);
                case PAUSED, PREPARING, UNKNOWN, FAILED -> stopping(p, false);
                default -> stay(p);
            };
        };
    }

    /**
     * Moves a leader toward its desired state from a point where no stop is under way (a new leadership, a
     * due retry, a finished pause or stop).
     *
     * @param fetcherStopping a StopFetching was just issued: a stop must wait for its {@link FetcherStopped}
     */
    private static Transition settle(MirrorPartition p, boolean fetcherStopping) {
        if (p.desired() == null) {
            return stay(p.to(UNKNOWN));
        }
        return switch (p.desired()) {
            case MIRRORING -> prepare(p);
            case PAUSED -> go(p.to(PAUSED), PERSIST);
            case STOPPED -> stopping(p, fetcherStopping);
        };
    }

    /** Enters STOPPING; the stop now, or on {@link FetcherStopped} if the fetcher is still stopping. */
    private static Transition stopping(MirrorPartition p, boolean fetcherStopping) {
        return fetcherStopping ? go(p.to(STOPPING), PERSIST) : go(p.to(STOPPING), PERSIST, stop(p));
    }

    /** A log that may hold mirrored data is truncated and gets a barrier; any other is only released. */
    private static PartitionAction stop(MirrorPartition p) {
        return p.mirroredInto() ? RUN_STOP : STOP_UNMIRRORED;
    }

    /** Toward MIRRORING: through PREPARING, unless the record shows the log got past it (a new leader continues). */
    private static Transition prepare(MirrorPartition p) {
        return RECORDED_ALIGNED.contains(p.recorded()) ? startFetching(p) : go(p.to(PREPARING), PERSIST, PREPARE);
    }

    private static Transition startFetching(MirrorPartition p) {
        return go(p.to(MIRRORING), START_FETCHING, PERSIST);
    }

    /**
     * FAILED; a retry is scheduled while the policy has retries left, and always for a stop or a source that did not answer
     * (it ends by itself once the source is back, and a partition waiting for the operator then would lag for nothing).
     */
    private Transition fail(MirrorPartition p, String error, long nowMs, boolean sourceUnreachable, PartitionAction... first) {
        String message = error == null ? UNKNOWN_ERROR : error;
        int failures = p.failures() + 1;
        RetryPolicy policy = retryPolicies.apply(p.mirror());
        List<PartitionAction> actions = new ArrayList<>(List.of(first));
        actions.add(PERSIST);
        if (!policy.retriesAfter(failures) && p.desired() != DesiredState.STOPPED && !sourceUnreachable) {
            return new Transition(p.failed(message + " (gave up after " + failures + " attempt(s) in a row; retry with --recover)",
                MirrorPartition.NO_RETRY), actions);
        }
        long delayMs = policy.delayMs(failures, jitter.getAsDouble());
        long retryAtMs = nowMs > Long.MAX_VALUE - delayMs ? Long.MAX_VALUE : nowMs + delayMs;
        actions.add(new ScheduleRetry(retryAtMs));
        return new Transition(p.failed(message, retryAtMs), actions);
    }

    /** The fetcher may still be running: MIRRORING, or PAUSING before {@link FetcherStopped}. */
    private static boolean fetcherMayRun(PartitionState state) {
        return state == MIRRORING || state == PAUSING;
    }

    private static Transition stay(MirrorPartition next) {
        return new Transition(next, List.of());
    }

    private static Transition go(MirrorPartition next, PartitionAction... actions) {
        return new Transition(next, List.of(actions));
    }

    private static Transition prepend(PartitionAction first, Transition t) {
        List<PartitionAction> actions = new ArrayList<>();
        actions.add(first);
        actions.addAll(t.actions());
        return new Transition(t.next(), actions);
    }
}
