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
import io.clustermirror.broker.partition.PartitionEvent.StateRecordLost;
import io.clustermirror.broker.partition.PartitionEvent.MadeProgress;
import io.clustermirror.broker.partition.PartitionEvent.PrepareFailed;
import io.clustermirror.broker.partition.PartitionEvent.PrepareSucceeded;
import io.clustermirror.broker.partition.PartitionEvent.ProcedureOutcome;
import io.clustermirror.broker.partition.PartitionEvent.ProgressSnapshotDue;
import io.clustermirror.broker.partition.PartitionEvent.RecordedStateChanged;
import io.clustermirror.broker.partition.PartitionEvent.RecoverRequested;
import io.clustermirror.broker.partition.PartitionEvent.RepairFailed;
import io.clustermirror.broker.partition.PartitionEvent.RepairSucceeded;
import io.clustermirror.broker.partition.PartitionEvent.SourceAvailable;
import io.clustermirror.broker.partition.PartitionEvent.SourceDiverged;
import io.clustermirror.broker.partition.PartitionEvent.SourceRecordsLost;
import io.clustermirror.broker.partition.PartitionEvent.SourceTopicGone;
import io.clustermirror.broker.partition.PartitionEvent.SourceUnavailable;
import io.clustermirror.broker.partition.PartitionEvent.RetryDue;
import io.clustermirror.broker.partition.PartitionEvent.StopFailed;
import io.clustermirror.broker.partition.PartitionEvent.StopSucceeded;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static io.clustermirror.common.PartitionState.FAILED;
import static io.clustermirror.common.PartitionState.MIRRORING;
import static io.clustermirror.common.PartitionState.PAUSED;
import static io.clustermirror.common.PartitionState.PAUSING;
import static io.clustermirror.common.PartitionState.PREPARING;
import static io.clustermirror.common.PartitionState.STOPPED;
import static io.clustermirror.common.PartitionState.STOPPING;
import static io.clustermirror.common.PartitionState.UNKNOWN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PartitionStateMachineTest {
    private static final TopicPartition TP = new TopicPartition("orders", 3);
    private static final long NOW = 10_000L;
    private static final long BASE = 100L;
    private static final long MAX = 1_000L;
    /** Enough automatic retries for every test but those about their bound. */
    private static final int RETRIES = 20;
    private static final int EPOCH = 5;

    private static final PartitionAction PREPARE = new Prepare();
    private static final PartitionAction START = new StartFetching();
    private static final PartitionAction STOP_FETCHING = new StopFetching();
    private static final PartitionAction RUN_STOP = new RunStop();
    private static final PartitionAction STOP_UNMIRRORED = new StopUnmirrored();
    private static final PartitionAction PERSIST = new PersistState();

    /** Every retry waits the longest its backoff allows: the tests know each delay. */
    private final PartitionStateMachine machine = machine(RETRIES);

    private static PartitionStateMachine machine(int retries) {
        return new PartitionStateMachine(mirror -> new RetryPolicy(BASE, MAX, retries), () -> 1.0);
    }

    /** The desired state a partition normally has in each state (UNKNOWN: in no mirror). */
    private static DesiredState typicalDesired(PartitionState state) {
        return switch (state) {
            case UNKNOWN -> null;
            case PREPARING, MIRRORING, FAILED -> DesiredState.MIRRORING;
            case PAUSING, PAUSED -> DesiredState.PAUSED;
            case STOPPING, STOPPED -> DesiredState.STOPPED;
        };
    }

    /** A leader at {@link #EPOCH} in {@code state}; FAILED has one failure with its retry due at {@link #NOW}. */
    private static MirrorPartition leaderIn(PartitionState state) {
        boolean failed = state == FAILED;
        return new MirrorPartition("dr", TP, state, true, EPOCH, typicalDesired(state), failed ? 1 : 0,
            failed ? NOW : MirrorPartition.NO_RETRY, failed ? "boom" : null, 0, UNKNOWN, true, false);
    }

    private record Expected(PartitionState state, List<PartitionAction> actions) {
    }

    private static Expected to(PartitionState state, PartitionAction... actions) {
        return new Expected(state, List.of(actions));
    }

    private static PartitionAction retryAt(long atMs) {
        return new ScheduleRetry(atMs);
    }

    /**
     * Applies {@code event} to a leader in every state: states in {@code changes} must end as given there;
     * every other state must be left exactly as it was (apart from a new desired state) with no actions.
     */
    private List<Transition> expect(PartitionEvent event, Map<PartitionState, Expected> changes) {
        List<Transition> transitions = new ArrayList<>();
        for (PartitionState state : PartitionState.values()) {
            MirrorPartition start = leaderIn(state);
            Transition t = machine.handle(start, event, NOW);
            String pair = "(" + state + ", " + event + ")";
            Expected expected = changes.get(state);
            if (expected == null) {
                MirrorPartition unchanged = event instanceof DesiredChanged d ? start.withDesired(d.desired()) : start;
                assertEquals(unchanged, t.next(), pair);
                assertEquals(List.of(), t.actions(), pair);
            } else {
                assertEquals(expected.state(), t.next().state(), pair);
                assertEquals(expected.actions(), t.actions(), pair);
            }
            transitions.add(t);
        }
        return transitions;
    }

    @Test
    void newEpochWhileLeaderStopsTheFetcherAndDecidesAgain() {
        List<Transition> transitions = expect(new BecameLeader(EPOCH + 1, UNKNOWN, true), Map.of(
            UNKNOWN, to(UNKNOWN),
            PREPARING, to(PREPARING, PERSIST, PREPARE),
            MIRRORING, to(PREPARING, STOP_FETCHING, PERSIST, PREPARE),
            PAUSING, to(PAUSED, STOP_FETCHING, PERSIST),
            PAUSED, to(PAUSED, PERSIST),
            STOPPING, to(STOPPING, PERSIST, RUN_STOP), // RunStop is idempotent: an interrupted stop runs again
            STOPPED, to(STOPPED), // its own state is fresher than __mirror_state: the stop is done
            FAILED, to(PREPARING, PERSIST, PREPARE)));
        for (Transition t : transitions) {
            assertTrue(t.next().leader());
            assertEquals(EPOCH + 1, t.next().leaderEpoch());
            assertEquals(0, t.next().failures());
            assertNull(t.next().lastError());
            assertEquals(MirrorPartition.NO_RETRY, t.next().retryAtMs());
        }
    }

    @Test
    void newEpochFindingStoppedPersistedStaysStopped() {
        Transition t = machine.handle(leaderIn(STOPPING), new BecameLeader(EPOCH + 1, STOPPED, false), NOW);
        assertEquals(STOPPED, t.next().state());
        assertEquals(EPOCH + 1, t.next().leaderEpoch());
        assertEquals(List.of(), t.actions());
    }

    @Test
    void repeatedOrStaleLeaderNotificationIsIgnored() {
        expect(new BecameLeader(EPOCH, UNKNOWN, false), Map.of());
        expect(new BecameLeader(EPOCH - 1, STOPPED, false), Map.of());
    }

    /**
     * A new leader decides from the desired state and the record it found: the recorded state (past PREPARING: continue at
     * once; STOPPED: stay stopped) and whether the log was ever mirrored into (a recorded state that follows fetching, or a
     * recorded last mirrored offset), which decides between a stop with barrier and a plain release.
     */
    @Test
    void becameLeaderDecidesFromDesiredAndPersisted() {
        for (PartitionState state : PartitionState.values()) {
            for (PartitionState persisted : PartitionState.values()) {
                for (boolean mirroredOffsets : List.of(false, true)) {
                    for (DesiredState desired : Arrays.asList(null, DesiredState.MIRRORING, DesiredState.PAUSED,
                            DesiredState.STOPPED)) {
                        MirrorPartition follower = new MirrorPartition("dr", TP, state, false, 2, desired, 3, NOW, "old", 0,
                            UNKNOWN, !mirroredOffsets, false);
                        Transition t = machine.handle(follower, new BecameLeader(9, persisted, mirroredOffsets), NOW);
                        boolean mirroredInto = mirroredOffsets || persisted == MIRRORING || persisted == PAUSING
                            || persisted == PAUSED || persisted == STOPPING || persisted == STOPPED;
                        boolean aligned = persisted == MIRRORING || persisted == PAUSING || persisted == PAUSED
                            || persisted == STOPPING;
                        Expected expected;
                        if (desired == null) {
                            expected = to(UNKNOWN);
                        } else if (desired == DesiredState.MIRRORING) {
                            expected = aligned ? to(MIRRORING, START, PERSIST) : to(PREPARING, PERSIST, PREPARE);
                        } else if (persisted == STOPPED) {
                            expected = to(STOPPED); // a pause or stop cannot make a stopped topic read-only again
                        } else if (desired == DesiredState.PAUSED) {
                            expected = to(PAUSED, PERSIST);
                        } else {
                            expected = to(STOPPING, PERSIST, mirroredInto ? RUN_STOP : STOP_UNMIRRORED);
                        }
                        String pair = "(" + state + ", " + desired + ", persisted " + persisted + ", mirrored offsets "
                            + mirroredOffsets + ")";
                        assertEquals(new MirrorPartition("dr", TP, expected.state(), true, 9, desired, 0,
                            MirrorPartition.NO_RETRY, null, 1, persisted, mirroredInto, false), t.next(), pair);
                        assertEquals(expected.actions(), t.actions(), pair);
                    }
                }
            }
        }
    }

    @Test
    void newEpochOfAFetchingLeaderToStopRunsTheStopAfterTheFetcherStopped() {
        for (PartitionState state : List.of(MIRRORING, PAUSING)) {
            MirrorPartition p = leaderIn(state).withDesired(DesiredState.STOPPED);
            p = step(p, new BecameLeader(EPOCH + 1, state, false), STOPPING, STOP_FETCHING, PERSIST);
            p = step(p, new FetcherStopped(), STOPPING, RUN_STOP);
            step(p, new StopSucceeded(p.generation()), STOPPED, PERSIST);
        }
    }

    @Test
    void newEpochOfAStoppedLeaderIgnoresALaterPause() {
        MirrorPartition stopped = leaderIn(STOPPED);
        MirrorPartition p = step(stopped, new DesiredChanged(DesiredState.PAUSED), STOPPED);
        p = step(p, new BecameLeader(EPOCH + 1, PAUSING, false), STOPPED);
        assertEquals(EPOCH + 1, p.leaderEpoch());
    }

    @Test
    void becameLeaderReadsMissingPersistedStateAsUnknown() {
        assertEquals(UNKNOWN, new BecameLeader(1, null, false).persisted());
    }

    @Test
    void becameFollowerStopsFetchingAndKeepsTheStateForDisplay() {
        List<Transition> transitions = expect(new BecameFollower(), Map.of(
            UNKNOWN, to(UNKNOWN),
            PREPARING, to(PREPARING),
            MIRRORING, to(MIRRORING, STOP_FETCHING),
            PAUSING, to(PAUSING, STOP_FETCHING),
            PAUSED, to(PAUSED),
            STOPPING, to(STOPPING),
            STOPPED, to(STOPPED),
            FAILED, to(FAILED)));
        for (Transition t : transitions) {
            assertFalse(t.next().leader());
            assertEquals(EPOCH, t.next().leaderEpoch());
            assertFalse(t.next().fetching());
        }
    }

    @Test
    void desiredMirroring() {
        expect(new DesiredChanged(DesiredState.MIRRORING), Map.of(
            UNKNOWN, to(PREPARING, PERSIST, PREPARE),
            STOPPED, to(PREPARING, PERSIST, PREPARE),
            PAUSED, to(PREPARING, PERSIST, PREPARE)));
    }

    @Test
    void desiredPaused() {
        expect(new DesiredChanged(DesiredState.PAUSED), Map.of(
            MIRRORING, to(PAUSING, STOP_FETCHING, PERSIST),
            PREPARING, to(PAUSED, PERSIST),
            UNKNOWN, to(PAUSED, PERSIST),
            FAILED, to(PAUSED, PERSIST)));
    }

    @Test
    void desiredStopped() {
        expect(new DesiredChanged(DesiredState.STOPPED), Map.of(
            MIRRORING, to(STOPPING, STOP_FETCHING, PERSIST),
            PAUSING, to(STOPPING, PERSIST),
            PAUSED, to(STOPPING, PERSIST, RUN_STOP),
            PREPARING, to(STOPPING, PERSIST, RUN_STOP),
            UNKNOWN, to(STOPPING, PERSIST, RUN_STOP),
            FAILED, to(STOPPING, PERSIST, RUN_STOP)));
    }

    @Test
    void leavingTheMirror() {
        expect(new DesiredChanged(null), Map.of(
            PREPARING, to(UNKNOWN),
            MIRRORING, to(UNKNOWN, STOP_FETCHING),
            PAUSING, to(UNKNOWN, STOP_FETCHING),
            PAUSED, to(UNKNOWN),
            STOPPING, to(UNKNOWN),
            STOPPED, to(UNKNOWN),
            FAILED, to(UNKNOWN)));
    }

    @Test
    void leavingFailedCancelsTheRetry() {
        Transition t = machine.handle(leaderIn(FAILED), new DesiredChanged(DesiredState.PAUSED), NOW);
        assertEquals(MirrorPartition.NO_RETRY, t.next().retryAtMs());
        Transition retry = machine.handle(t.next(), new RetryDue(), NOW);
        assertEquals(List.of(), retry.actions());
    }

    @Test
    void prepareOutcomes() {
        expect(new PrepareSucceeded(0), Map.of(PREPARING, to(MIRRORING, START, PERSIST)));
        List<Transition> failed = expect(new PrepareFailed(0, "source topic gone"),
            Map.of(PREPARING, to(FAILED, PERSIST, retryAt(NOW + BASE))));
        MirrorPartition next = failed.get(PREPARING.ordinal()).next();
        assertEquals(1, next.failures());
        assertEquals("source topic gone", next.lastError());
        assertEquals(NOW + BASE, next.retryAtMs());
    }

    @Test
    void sourceDivergedRepairsTheLogThenFetchesAgain() {
        List<Transition> repairing = expect(new SourceDiverged(3, 40), Map.of(MIRRORING, to(MIRRORING, new RepairDivergence(3, 40))));
        assertEquals(1, repairing.get(MIRRORING.ordinal()).next().generation(), "the repair is a procedure of its own");
        expect(new RepairSucceeded(0), Map.of(MIRRORING, to(MIRRORING, START, PERSIST)));
        List<Transition> failed = expect(new RepairFailed(0, "source unreachable"),
            Map.of(MIRRORING, to(FAILED, STOP_FETCHING, PERSIST, retryAt(NOW + BASE))));
        assertEquals("source unreachable", failed.get(MIRRORING.ordinal()).next().lastError());
    }

    @Test
    void sourceRecordsLostUnderContinueSkipsTheRangeAndKeepsReportingIt() {
        List<Transition> skipped = expect(new SourceRecordsLost(10, 25, false),
            Map.of(MIRRORING, to(MIRRORING, new SkipLostRecords(10, 25), PERSIST)));
        MirrorPartition p = skipped.get(MIRRORING.ordinal()).next();
        assertTrue(p.lastError().startsWith("SOURCE_RETENTION_OUTRUN: source offsets [10, 25) of orders-3 were deleted"), p.lastError());
        assertTrue(p.lastError().contains("mirror.source.data.loss.policy=continue"), p.lastError());
        assertEquals(0, p.failures(), "a skip is no failure");
        // Progress does not undo the loss; another error replaces the report, and its recovery clears it.
        assertEquals(p, step(p, new MadeProgress(), MIRRORING));
        MirrorPartition unavailable = step(p, new SourceUnavailable("SOURCE_UNAVAILABLE: down"), MIRRORING, PERSIST);
        assertNull(step(unavailable, new MadeProgress(), MIRRORING, PERSIST).lastError());
    }

    @Test
    void sourceRecordsLostUnderFailStopsBeforeThemUntilTheOperatorActs() {
        List<Transition> failed = expect(new SourceRecordsLost(10, 25, true), Map.of(MIRRORING, to(FAILED, STOP_FETCHING, PERSIST)));
        MirrorPartition p = failed.get(MIRRORING.ordinal()).next();
        assertTrue(p.lastError().startsWith("SOURCE_RETENTION_OUTRUN: source offsets [10, 25)"), p.lastError());
        assertTrue(p.lastError().contains("mirror.source.data.loss.policy=fail"), p.lastError());
        assertWaitsForTheOperator(p);
    }

    @Test
    void sourceTopicGoneStopsFetchingUntilTheOperatorActs() {
        List<Transition> failed = expect(new SourceTopicGone("SOURCE_TOPIC_ID_CHANGED: recreated"),
            Map.of(MIRRORING, to(FAILED, STOP_FETCHING, PERSIST)));
        MirrorPartition p = failed.get(MIRRORING.ordinal()).next();
        assertEquals("SOURCE_TOPIC_ID_CHANGED: recreated", p.lastError());
        assertWaitsForTheOperator(p);
    }

    /** FAILED with no retry: no retry ever fires; a stop, a pause and resume, or a new leadership acts. */
    private void assertWaitsForTheOperator(MirrorPartition p) {
        assertEquals(MirrorPartition.NO_RETRY, p.retryAtMs());
        assertEquals(p, machine.handle(p, new RetryDue(), Long.MAX_VALUE).next(), "a stale retry does not restart it");
        assertEquals(List.of(), machine.handle(p, new RetryDue(), Long.MAX_VALUE).actions());
        assertEquals(p, machine.handle(p, new MadeProgress(), NOW).next());
        step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING, PERSIST, RUN_STOP);
        MirrorPartition paused = step(p, new DesiredChanged(DesiredState.PAUSED), PAUSED, PERSIST);
        step(paused, new DesiredChanged(DesiredState.MIRRORING), PREPARING, PERSIST, PREPARE);
        step(p, new BecameLeader(EPOCH + 1, FAILED, true), PREPARING, PERSIST, PREPARE);
    }

    @Test
    void sourceUnavailableIsReportedUntilAFetchSucceeds() {
        List<Transition> reported = expect(new SourceUnavailable("SOURCE_UNAVAILABLE: no fetch for 6 s"),
            Map.of(MIRRORING, to(MIRRORING, PERSIST)));
        MirrorPartition p = reported.get(MIRRORING.ordinal()).next();
        assertEquals("SOURCE_UNAVAILABLE: no fetch for 6 s", p.lastError());
        assertTrue(p.sourceUnavailable() && p.fetching());
        MirrorPartition cleared = step(p, new SourceAvailable(), MIRRORING, PERSIST);
        assertNull(cleared.lastError());
        assertFalse(cleared.sourceUnavailable());
        expect(new SourceAvailable(), Map.of()); // nothing reported, nothing to clear
    }

    @Test
    void fetchFailed() {
        List<Transition> failed = expect(new FetchFailed("bad batch"),
            Map.of(MIRRORING, to(FAILED, STOP_FETCHING, PERSIST, retryAt(NOW + BASE))));
        MirrorPartition next = failed.get(MIRRORING.ordinal()).next();
        assertEquals(1, next.failures());
        assertEquals("bad batch", next.lastError());
        assertFalse(next.fetching());
    }

    @Test
    void failureWithoutMessageStillRecordsAnError() {
        Transition t = machine.handle(leaderIn(MIRRORING), new FetchFailed(null), NOW);
        assertEquals("unknown error", t.next().lastError());
    }

    @Test
    void madeProgress() {
        expect(new MadeProgress(), Map.of());
        MirrorPartition recovered = new MirrorPartition("dr", TP, MIRRORING, true, EPOCH, DesiredState.MIRRORING,
            4, MirrorPartition.NO_RETRY, "timeout", 0, UNKNOWN, true, false);
        Transition t = machine.handle(recovered, new MadeProgress(), NOW);
        assertEquals(List.of(PERSIST), t.actions());
        assertEquals(0, t.next().failures());
        assertNull(t.next().lastError());
        // Failures without an error message: reset, but nothing to persist.
        MirrorPartition quiet = new MirrorPartition("dr", TP, MIRRORING, true, EPOCH, DesiredState.MIRRORING,
            2, MirrorPartition.NO_RETRY, null, 0, UNKNOWN, true, false);
        Transition q = machine.handle(quiet, new MadeProgress(), NOW);
        assertEquals(List.of(), q.actions());
        assertEquals(0, q.next().failures());
    }

    @Test
    void retryDue() {
        expect(new RetryDue(), Map.of(FAILED, to(PREPARING, PERSIST, PREPARE)));
    }

    @Test
    void retryBeforeItsTimeIsIgnored() {
        MirrorPartition failed = leaderIn(FAILED);
        Transition t = machine.handle(failed, new RetryDue(), NOW - 1);
        assertEquals(failed, t.next());
        assertEquals(List.of(), t.actions());
    }

    @Test
    void retryReevaluatesTheDesiredState() {
        MirrorPartition failed = leaderIn(FAILED);
        Transition paused = machine.handle(failed.withDesired(DesiredState.PAUSED), new RetryDue(), NOW);
        assertEquals(PAUSED, paused.next().state());
        assertEquals(List.of(PERSIST), paused.actions());
        Transition stopping = machine.handle(failed.withDesired(DesiredState.STOPPED), new RetryDue(), NOW);
        assertEquals(STOPPING, stopping.next().state());
        assertEquals(List.of(PERSIST, RUN_STOP), stopping.actions());
        assertEquals(MirrorPartition.NO_RETRY, stopping.next().retryAtMs());
    }

    @Test
    void fetcherStopped() {
        expect(new FetcherStopped(), Map.of(
            PAUSING, to(PAUSED, PERSIST),
            STOPPING, to(STOPPING, RUN_STOP)));
    }

    @Test
    void fetcherStoppedWhilePausingFollowsTheDesiredState() {
        MirrorPartition pausing = leaderIn(PAUSING);
        Transition resumed = machine.handle(pausing.withDesired(DesiredState.MIRRORING), new FetcherStopped(), NOW);
        assertEquals(MIRRORING, resumed.next().state());
        assertEquals(List.of(START, PERSIST), resumed.actions());
        Transition stopping = machine.handle(pausing.withDesired(DesiredState.STOPPED), new FetcherStopped(), NOW);
        assertEquals(STOPPING, stopping.next().state());
        assertEquals(List.of(PERSIST, RUN_STOP), stopping.actions());
    }

    @Test
    void stopOutcomes() {
        List<Transition> stopped = expect(new StopSucceeded(0), Map.of(STOPPING, to(STOPPED, PERSIST)));
        assertFalse(stopped.get(STOPPING.ordinal()).next().state().isReadOnly());
        List<Transition> failed = expect(new StopFailed(0, "not leader"),
            Map.of(STOPPING, to(FAILED, PERSIST, retryAt(NOW + BASE))));
        assertEquals("not leader", failed.get(STOPPING.ordinal()).next().lastError());
    }

    @Test
    void stopSucceededPicksUpADesiredStateThatChangedDuringTheStop() {
        MirrorPartition stopping = leaderIn(STOPPING);
        Transition restarted = machine.handle(stopping.withDesired(DesiredState.MIRRORING), new StopSucceeded(0), NOW);
        assertEquals(PREPARING, restarted.next().state());
        assertEquals(List.of(PERSIST, PREPARE), restarted.actions());
        Transition removed = machine.handle(stopping.withDesired(null), new StopSucceeded(0), NOW);
        assertEquals(UNKNOWN, removed.next().state());
        assertEquals(List.of(), removed.actions());
        // The stop is done: a pause cannot make the topic read-only again, nor resume skip PREPARING.
        MirrorPartition p = step(stopping, new DesiredChanged(DesiredState.PAUSED), STOPPING);
        p = step(p, new StopSucceeded(p.generation()), STOPPED, PERSIST);
        step(p, new DesiredChanged(DesiredState.MIRRORING), PREPARING, PERSIST, PREPARE);
    }

    @Test
    void followerIgnoresEverythingButLeadershipAndTracksTheDesiredState() {
        List<PartitionEvent> events = new ArrayList<>(List.of(new BecameFollower(), new FetchFailed("x"), new MadeProgress(),
            new RetryDue(), new FetcherStopped(), new SourceDiverged(3, 40), new DesiredChanged(DesiredState.STOPPED),
            new DesiredChanged(null), new FetchingStarted(), new ProgressSnapshotDue(), new LineageChanged(), new StateRecordLost(),
            new RecordedStateChanged(MIRRORING), new SourceRecordsLost(1, 2, false), new SourceRecordsLost(1, 2, true),
            new SourceTopicGone("gone"), new SourceUnavailable("down"), new SourceAvailable()));
        for (int kind = 0; kind < OUTCOMES; kind++) {
            events.add(outcome(kind, 0));
        }
        for (PartitionState state : PartitionState.values()) {
            MirrorPartition follower = leaderIn(state).asFollower();
            for (PartitionEvent event : events) {
                Transition t = machine.handle(follower, event, NOW + MAX);
                MirrorPartition expected = event instanceof DesiredChanged d ? follower.withDesired(d.desired())
                    : event instanceof RecordedStateChanged r ? follower.withRecorded(r.recorded()) : follower;
                assertEquals(expected, t.next(), "(" + state + ", " + event + ")");
                assertEquals(List.of(), t.actions(), "(" + state + ", " + event + ")");
            }
        }
    }

    @Test
    void fetchingStartedMarksTheLogMirroredInto() {
        for (PartitionState state : PartitionState.values()) {
            MirrorPartition unmirrored = withMirroredInto(leaderIn(state), false);
            Transition t = machine.handle(unmirrored, new FetchingStarted(), NOW);
            assertEquals(state == MIRRORING ? withMirroredInto(unmirrored, true) : unmirrored, t.next(), state.toString());
            assertEquals(List.of(), t.actions(), state.toString());
        }
    }

    /** A partition this mirror never fetched into holds only its own data: it is released, never truncated or given a barrier. */
    @Test
    void aStopOfAPartitionNeverMirroredIntoReleasesIt() {
        for (PartitionState state : List.of(UNKNOWN, PREPARING, PAUSED, FAILED)) {
            MirrorPartition p = withMirroredInto(leaderIn(state), false);
            p = step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING, PERSIST, STOP_UNMIRRORED);
            step(p, new StopSucceeded(p.generation()), STOPPED, PERSIST);
        }
        MirrorPartition p = step(withMirroredInto(leaderIn(STOPPING), false), new BecameLeader(EPOCH + 1, UNKNOWN, false), STOPPING,
            PERSIST, STOP_UNMIRRORED);
        assertFalse(p.mirroredInto());
        p = step(withMirroredInto(leaderIn(STOPPING), false), new BecameLeader(EPOCH + 1, FAILED, true), STOPPING, PERSIST, RUN_STOP);
        assertTrue(p.mirroredInto(), "a recorded last mirrored offset shows an earlier leader fetched into the log");
    }

    @Test
    void recordedStateIsTrackedWithoutActions() {
        for (PartitionState state : PartitionState.values()) {
            for (MirrorPartition p : List.of(leaderIn(state), leaderIn(state).asFollower())) {
                Transition t = machine.handle(p, new RecordedStateChanged(PAUSED), NOW);
                assertEquals(p.withRecorded(PAUSED), t.next(), p.toString());
                assertEquals(List.of(), t.actions(), p.toString());
            }
        }
        assertEquals(UNKNOWN, new RecordedStateChanged(null).recorded());
    }

    /** A record past PREPARING (a leader change, a restart) lets mirroring continue at once; any other aligns first. */
    @Test
    void aRecordPastPreparingContinuesWithoutAligning() {
        for (PartitionState recorded : PartitionState.values()) {
            boolean aligned = PartitionStateMachine.RECORDED_ALIGNED.contains(recorded);
            for (PartitionState from : List.of(UNKNOWN, STOPPED, PAUSED)) {
                MirrorPartition p = leaderIn(from).withRecorded(recorded);
                Transition t = machine.handle(p, new DesiredChanged(DesiredState.MIRRORING), NOW);
                assertEquals(aligned ? MIRRORING : PREPARING, t.next().state(), from + ", recorded " + recorded);
                assertEquals(aligned ? List.of(START, PERSIST) : List.of(PERSIST, PREPARE), t.actions(), from + ", recorded " + recorded);
            }
            Transition retry = machine.handle(leaderIn(FAILED).withRecorded(recorded), new RetryDue(), NOW);
            assertEquals(aligned ? List.of(START, PERSIST) : List.of(PERSIST, PREPARE), retry.actions(), "retry, recorded " + recorded);
        }
        assertEquals(java.util.EnumSet.of(MIRRORING, PAUSING, PAUSED, STOPPING), PartitionStateMachine.RECORDED_ALIGNED,
            "FAILED and PREPARING do not prove an alignment: a refused preparation is refused again on every retry");
    }

    @Test
    void progressIsRecordedPeriodicallyWhileMirroringOrPausedAndLineageAtOnce() {
        expect(new ProgressSnapshotDue(), Map.of(MIRRORING, to(MIRRORING, PERSIST), PAUSED, to(PAUSED, PERSIST)));
        Map<PartitionState, Expected> always = new HashMap<>();
        for (PartitionState state : PartitionState.values()) {
            always.put(state, to(state, PERSIST));
        }
        List<Transition> lineage = expect(new LineageChanged(), always);
        for (Transition t : lineage) {
            assertEquals(0, t.next().generation(), "recording changes nothing in flight");
        }
    }

    /** A leader whose record went with {@code __mirror_state} records what it knows again, whatever its state; in UNKNOWN there is nothing. */
    @Test
    void aLeaderRecordsItsStateAgainWhenItsRecordIsLost() {
        Map<PartitionState, Expected> again = new HashMap<>();
        for (PartitionState state : PartitionState.values()) {
            if (state != UNKNOWN) {
                again.put(state, to(state, PERSIST));
            }
        }
        for (Transition t : expect(new StateRecordLost(), again)) {
            assertEquals(0, t.next().generation(), "recording changes nothing in flight");
        }
    }

    private static MirrorPartition withMirroredInto(MirrorPartition p, boolean mirroredInto) {
        return new MirrorPartition(p.mirror(), p.partition(), p.state(), p.leader(), p.leaderEpoch(), p.desired(), p.failures(),
            p.retryAtMs(), p.lastError(), p.generation(), p.recorded(), mirroredInto, p.sourceUnavailable());
    }

    @Test
    void startMirrorPauseResumeStop() {
        MirrorPartition p = MirrorPartition.unknown("dr", TP, DesiredState.MIRRORING, 0);
        assertFalse(p.leader());
        p = step(p, new BecameLeader(0, UNKNOWN, false), PREPARING, PERSIST, PREPARE);
        p = step(p, new PrepareSucceeded(p.generation()), MIRRORING, START, PERSIST);
        assertTrue(p.fetching());
        p = step(p, new FetchingStarted(), MIRRORING);
        assertTrue(p.mirroredInto());
        p = step(p, new MadeProgress(), MIRRORING);
        p = step(p, new DesiredChanged(DesiredState.PAUSED), PAUSING, STOP_FETCHING, PERSIST);
        assertFalse(p.fetching());
        p = step(p, new FetcherStopped(), PAUSED, PERSIST);
        p = step(p, new DesiredChanged(DesiredState.MIRRORING), PREPARING, PERSIST, PREPARE);
        p = step(p, new PrepareSucceeded(p.generation()), MIRRORING, START, PERSIST);
        p = step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING, STOP_FETCHING, PERSIST);
        p = step(p, new FetcherStopped(), STOPPING, RUN_STOP);
        p = step(p, new StopSucceeded(p.generation()), STOPPED, PERSIST);
        // Terminal until the operator starts mirroring again, across leader changes.
        p = step(p, new BecameFollower(), STOPPED);
        p = step(p, new BecameLeader(1, STOPPED, false), STOPPED);
        p = step(p, new RetryDue(), STOPPED);
        step(p, new DesiredChanged(DesiredState.MIRRORING), PREPARING, PERSIST, PREPARE);
    }

    /** A partition paused before it was ever aligned (here: while PREPARING) is aligned when it resumes. */
    @Test
    void aPauseDuringPreparationDoesNotSkipTheAlignment() {
        MirrorPartition p = MirrorPartition.unknown("dr", TP, DesiredState.MIRRORING, 0);
        p = step(p, new BecameLeader(0, UNKNOWN, false), PREPARING, PERSIST, PREPARE);
        long preparation = p.generation();
        p = step(p, new DesiredChanged(DesiredState.PAUSED), PAUSED, PERSIST);
        p = step(p, new PrepareSucceeded(preparation), PAUSED);
        p = step(p, new DesiredChanged(DesiredState.MIRRORING), PREPARING, PERSIST, PREPARE);
        assertFalse(p.fetching());
        step(p, new PrepareSucceeded(p.generation()), MIRRORING, START, PERSIST);
    }

    @Test
    void pauseThenResumeBeforeTheFetcherStopped() {
        MirrorPartition p = leaderIn(MIRRORING);
        p = step(p, new DesiredChanged(DesiredState.PAUSED), PAUSING, STOP_FETCHING, PERSIST);
        p = step(p, new DesiredChanged(DesiredState.MIRRORING), PAUSING);
        step(p, new FetcherStopped(), MIRRORING, START, PERSIST);
    }

    @Test
    void stopWhilePausingWaitsForTheFetcher() {
        MirrorPartition p = leaderIn(MIRRORING);
        p = step(p, new DesiredChanged(DesiredState.PAUSED), PAUSING, STOP_FETCHING, PERSIST);
        p = step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING, PERSIST);
        p = step(p, new FetcherStopped(), STOPPING, RUN_STOP);
        step(p, new StopSucceeded(p.generation()), STOPPED, PERSIST);
    }

    @Test
    void leadershipMovesAwayAndBack() {
        MirrorPartition p = leaderIn(MIRRORING);
        p = step(p, new BecameFollower(), MIRRORING, STOP_FETCHING);
        p = step(p, new FetcherStopped(), MIRRORING);
        p = step(p, new DesiredChanged(DesiredState.PAUSED), MIRRORING);
        p = step(p, new BecameLeader(EPOCH + 2, MIRRORING, false), PAUSED, PERSIST);
        assertEquals(EPOCH + 2, p.leaderEpoch());
    }

    @Test
    void failuresBackOffExponentiallyUpToTheMaximumAndProgressResets() {
        MirrorPartition p = leaderIn(MIRRORING);
        long now = NOW;
        p = step(p, new FetchFailed("e1"), now, FAILED, STOP_FETCHING, PERSIST, retryAt(now + 100));
        long[] delays = {100, 200, 400, 800, 1000, 1000, 1000};
        for (int i = 0; i < delays.length; i++) {
            assertEquals(i + 1, p.failures());
            assertEquals(now + delays[i], p.retryAtMs());
            now = p.retryAtMs();
            p = step(p, new RetryDue(), now - 1, FAILED);
            p = step(p, new RetryDue(), now, PREPARING, PERSIST, PREPARE);
            assertEquals(i + 1, p.failures(), "a retry is not progress");
            if (i + 1 < delays.length) {
                p = step(p, new PrepareFailed(p.generation(), "e" + (i + 2)), now, FAILED, PERSIST, retryAt(now + delays[i + 1]));
            }
        }
        p = step(p, new PrepareSucceeded(p.generation()), now, MIRRORING, START, PERSIST);
        assertEquals(7, p.failures());
        p = step(p, new MadeProgress(), now, MIRRORING, PERSIST);
        assertEquals(0, p.failures());
        assertNull(p.lastError());
        step(p, new FetchFailed("again"), now, FAILED, STOP_FETCHING, PERSIST, retryAt(now + 100));
    }

    @Test
    void stopFailureRetriesTheStop() {
        MirrorPartition p = leaderIn(STOPPING);
        p = step(p, new StopFailed(p.generation(), "append failed"), FAILED, PERSIST, retryAt(NOW + BASE));
        p = step(p, new RetryDue(), NOW + BASE, STOPPING, PERSIST, RUN_STOP);
        p = step(p, new StopSucceeded(p.generation()), STOPPED, PERSIST);
        assertEquals(0, p.failures());
        assertNull(p.lastError());
    }

    @Test
    void afterItsLastRetryAPartitionWaitsForARecoveryWhichStartsAFreshRunOfRetries() {
        PartitionStateMachine twice = machine(2);
        MirrorPartition p = leaderIn(MIRRORING);
        p = step(twice, p, new FetchFailed("e1"), NOW, FAILED, STOP_FETCHING, PERSIST, retryAt(NOW + BASE));
        p = step(twice, p, new RetryDue(), NOW + BASE, PREPARING, PERSIST, PREPARE);
        p = step(twice, p, new PrepareFailed(p.generation(), "e2"), NOW + BASE, FAILED, PERSIST, retryAt(NOW + 3 * BASE));
        p = step(twice, p, new RetryDue(), NOW + 3 * BASE, PREPARING, PERSIST, PREPARE);
        p = step(twice, p, new PrepareFailed(p.generation(), "e3"), NOW + 3 * BASE, FAILED, PERSIST);
        assertEquals(MirrorPartition.NO_RETRY, p.retryAtMs(), "no third retry");
        assertEquals(3, p.failures());
        assertTrue(p.lastError().startsWith("e3") && p.lastError().contains("--recover"), p.lastError());
        assertTrue(p.recoverable());
        p = step(twice, p, new RetryDue(), NOW + 100 * MAX, FAILED);

        p = step(twice, p, new RecoverRequested(), NOW + 100 * MAX, PREPARING, PERSIST, PREPARE);
        assertEquals(0, p.failures(), "a fresh run of retries");
        assertNull(p.lastError());
        step(twice, p, new PrepareFailed(p.generation(), "e4"), NOW, FAILED, PERSIST, retryAt(NOW + BASE));
    }

    @Test
    void aPartitionThatNeverRetriesByItselfStillRecovers() {
        PartitionStateMachine never = machine(0);
        MirrorPartition p = step(never, leaderIn(MIRRORING), new FetchFailed("e1"), NOW, FAILED, STOP_FETCHING, PERSIST);
        step(never, p, new RecoverRequested(), NOW, PREPARING, PERSIST, PREPARE);
    }

    @Test
    void aFailedStopRetriesWhateverTheBound() {
        PartitionStateMachine never = machine(0);
        MirrorPartition p = leaderIn(STOPPING);
        for (int i = 1; i <= 5; i++) {
            p = step(never, p, new StopFailed(p.generation(), "append failed"), NOW, FAILED, PERSIST, retryAt(NOW + Math.min(MAX, BASE << (i - 1))));
            p = step(never, p, new RetryDue(), NOW + MAX, STOPPING, PERSIST, RUN_STOP);
        }
        assertEquals(5, p.failures());
    }

    @Test
    void aPreparationTheSourceDidNotAnswerRetriesWhateverTheBound() {
        PartitionStateMachine never = machine(0);
        MirrorPartition p = leaderIn(PREPARING);
        for (int i = 1; i <= 5; i++) {
            p = step(never, p, new PrepareFailed(p.generation(), "TimeoutException", true), NOW, FAILED, PERSIST,
                retryAt(NOW + Math.min(MAX, BASE << (i - 1))));
            p = step(never, p, new RetryDue(), NOW + MAX, PREPARING, PERSIST, PREPARE);
        }
        step(never, p, new PrepareFailed(p.generation(), "MIRROR_LOOP: the source copies it from us"), NOW, FAILED, PERSIST);
    }

    @Test
    void aRecoveryRetriesOnlyAFailedLeader() {
        expect(new RecoverRequested(), Map.of(FAILED, to(PREPARING, PERSIST, PREPARE)));
        MirrorPartition follower = leaderIn(FAILED).asFollower();
        assertEquals(new Transition(follower, List.of()), machine.handle(follower, new RecoverRequested(), NOW));
    }

    @Test
    void noRecoveryCopiesAnotherTopicOverTheMirroredHistory() {
        MirrorPartition p = step(leaderIn(MIRRORING), new SourceTopicGone("SOURCE_TOPIC_ID_CHANGED: re-created"), FAILED, STOP_FETCHING,
            PERSIST);
        assertFalse(p.recoverable());
        step(p, new RecoverRequested(), FAILED);
        p = step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING, PERSIST, RUN_STOP);
        assertTrue(p.recoverable(), "only a FAILED partition is unrecoverable");
    }

    @Test
    void sourceRecordsLostUnderTheFailPolicyWaitForARecovery() {
        MirrorPartition p = step(leaderIn(MIRRORING), new SourceRecordsLost(10, 20, true), FAILED, STOP_FETCHING, PERSIST);
        assertTrue(p.recoverable() && p.lastError().contains("--recover"), p.lastError());
        step(p, new RecoverRequested(), PREPARING, PERSIST, PREPARE);
    }

    /**
     * Random walks over all events: whatever the order, only a MIRRORING leader is ever told to start
     * fetching, leaving MIRRORING as leader always stops the fetcher, a follower does nothing but stop its
     * fetcher, RunStop happens only in STOPPING and never together with StopFetching, a retry is pending
     * exactly in FAILED, and STOPPED is left only toward mirroring or out of the mirror.
     */
    @Test
    void invariantsHoldOnRandomWalks() {
        Random random = new Random(42);
        List<PartitionEvent> events = List.of(new BecameFollower(), new FetchFailed("x"), new MadeProgress(), new RetryDue(),
            new FetcherStopped(), new SourceDiverged(3, 40), new DesiredChanged(null), new DesiredChanged(DesiredState.MIRRORING),
            new DesiredChanged(DesiredState.PAUSED), new DesiredChanged(DesiredState.STOPPED), new FetchingStarted(),
            new ProgressSnapshotDue(), new LineageChanged(), new StateRecordLost(), new RecordedStateChanged(UNKNOWN), new RecordedStateChanged(PAUSED),
            new RecordedStateChanged(MIRRORING), new RecordedStateChanged(FAILED), new SourceRecordsLost(10, 20, false),
            new SourceRecordsLost(10, 20, true), new SourceTopicGone("SOURCE_TOPIC_DELETED: gone"),
            new SourceUnavailable("SOURCE_UNAVAILABLE: down"), new SourceAvailable(), new RecoverRequested());
        PartitionStateMachine fewRetries = machine(1);
        Map<PartitionState, Integer> seen = new HashMap<>();
        int usedUp = 0;
        for (int walk = 0; walk < 200; walk++) {
            MirrorPartition p = MirrorPartition.unknown("dr", TP, DesiredState.MIRRORING, 0);
            int epoch = 0;
            long now = 0;
            for (int i = 0; i < 200; i++) {
                int pick = random.nextInt(10);
                PartitionEvent event = pick == 0 ? new BecameLeader(random.nextBoolean() ? ++epoch : epoch, p.state(), random.nextBoolean())
                    : pick < 4 ? outcome(random.nextInt(OUTCOMES), p.generation() - random.nextInt(2))
                    : events.get(random.nextInt(events.size()));
                now += random.nextInt(500);
                Transition t = fewRetries.handle(p, event, now);
                MirrorPartition next = t.next();
                String where = "walk " + walk + " step " + i + ": " + p + " + " + event + " -> " + t;
                if (t.actions().contains(START)) {
                    assertTrue(next.fetching(), where);
                }
                if (p.fetching() && !next.fetching() || p.leader() && !next.leader() && p.state() == MIRRORING) {
                    assertTrue(t.actions().contains(STOP_FETCHING), where);
                }
                if (!p.leader() && !(event instanceof BecameLeader)) {
                    assertEquals(List.of(), t.actions(), where);
                }
                if (!next.leader()) {
                    assertTrue(t.actions().stream().allMatch(a -> a.equals(STOP_FETCHING)), where);
                }
                if (t.actions().contains(RUN_STOP) || t.actions().contains(STOP_UNMIRRORED)) {
                    assertEquals(STOPPING, next.state(), where);
                    assertFalse(t.actions().contains(STOP_FETCHING), "the stop waits for FetcherStopped: " + where);
                    assertEquals(next.mirroredInto(), t.actions().contains(RUN_STOP), "a barrier only after mirrored data: " + where);
                }
                if (p.leader() && next.leader() && p.leaderEpoch() == next.leaderEpoch() && p.mirroredInto()) {
                    assertTrue(next.mirroredInto(), "a leadership never forgets it fetched into the log: " + where);
                }
                if (t.actions().contains(PREPARE)) {
                    assertFalse(PartitionStateMachine.RECORDED_ALIGNED.contains(next.recorded()), "continues past PREPARING: " + where);
                }
                if (next.state() != FAILED) {
                    assertEquals(MirrorPartition.NO_RETRY, next.retryAtMs(), where);
                } else if (next.retryAtMs() == MirrorPartition.NO_RETRY && next.leader()) {
                    boolean cannotMend = next.lastError().startsWith("SOURCE_TOPIC_") || next.lastError().startsWith("SOURCE_RETENTION_OUTRUN");
                    boolean usedUpRetries = next.failures() > 1 && next.desired() != DesiredState.STOPPED;
                    usedUp += usedUpRetries && !cannotMend ? 1 : 0;
                    assertTrue(cannotMend || usedUpRetries, "only a failure no retry can mend, or one whose retries are used up, waits "
                        + "for the operator, and never a stop: " + where);
                }
                if (!next.recoverable()) {
                    assertTrue(next.lastError().startsWith("SOURCE_TOPIC_"), "only a gone source topic is beyond recovery: " + where);
                }
                if (event instanceof RecoverRequested && p.leader() && p.state() == FAILED && p.recoverable()) {
                    assertNotEquals(FAILED, next.state(), "a recovery tries at once: " + where);
                    assertEquals(0, next.failures(), where);
                }
                if (next.state() == FAILED) {
                    assertTrue(next.failures() >= 1 && next.lastError() != null, where);
                }
                if (p.state() == STOPPED && next.state() != STOPPED) {
                    assertTrue(next.desired() != DesiredState.STOPPED && next.desired() != DesiredState.PAUSED, where);
                }
                assertTrue(next.generation() >= p.generation(), where);
                if (t.actions().stream().anyMatch(PartitionStateMachineTest::isProcedure) || next.state() != p.state()
                        || next.leader() != p.leader() || next.leaderEpoch() != p.leaderEpoch()) {
                    assertEquals(p.generation() + 1, next.generation(), "a new generation: " + where);
                }
                if (event instanceof ProcedureOutcome o && o.generation() != p.generation()) {
                    assertEquals(p, next, "a late outcome changes nothing: " + where);
                    assertEquals(List.of(), t.actions(), where);
                }
                seen.merge(next.state(), 1, Integer::sum);
                p = next;
            }
        }
        assertEquals(PartitionState.values().length, seen.size(), "every state is reached: " + seen);
        assertTrue(usedUp > 0, "some walks use up their retries");
    }

    // ---- A STOP always completes, and no procedure issued before it acts afterwards.

    private static final int OUTCOMES = 6;

    /** Outcome {@code kind} (success and failure of Prepare, RepairDivergence, RunStop) of a procedure of {@code generation}. */
    private static PartitionEvent outcome(int kind, long generation) {
        return switch (kind) {
            case 0 -> new PrepareSucceeded(generation);
            case 1 -> new PrepareFailed(generation, "late");
            case 2 -> new RepairSucceeded(generation);
            case 3 -> new RepairFailed(generation, "late");
            case 4 -> new StopSucceeded(generation);
            case 5 -> new StopFailed(generation, "late");
            default -> throw new IllegalArgumentException("no outcome " + kind);
        };
    }

    private static boolean isProcedure(PartitionAction action) {
        return action instanceof Prepare || action instanceof RepairDivergence || action instanceof RunStop
            || action instanceof StopUnmirrored;
    }

    /**
     * Plays a well-behaved executor after a STOP reaches {@code start}: FetcherStopped right after each StopFetching, and
     * each stop succeeding once the events before it were handled. {@code late} (if any) is the outcome of a procedure
     * that was in flight when the STOP came; it arrives before the stop's own. Returns every transition, in order.
     */
    private List<Transition> runStop(MirrorPartition start, PartitionEvent late) {
        List<Transition> transitions = new ArrayList<>();
        ArrayDeque<PartitionEvent> events = new ArrayDeque<>();
        events.add(new DesiredChanged(DesiredState.STOPPED));
        if (start.state() == PAUSING) {
            events.add(new FetcherStopped()); // the fetcher the pause stopped
        }
        List<PartitionEvent> outcomes = new ArrayList<>();
        if (late != null) {
            outcomes.add(late);
        }
        if (start.state() == STOPPING) {
            outcomes.add(new StopSucceeded(start.generation())); // the stop already in flight
        }
        MirrorPartition p = start;
        while (!events.isEmpty() || !outcomes.isEmpty()) {
            assertTrue(transitions.size() < 10, "the stop settles: " + transitions);
            PartitionEvent event = events.isEmpty() ? outcomes.remove(0) : events.poll();
            Transition t = machine.handle(p, event, NOW);
            transitions.add(t);
            for (PartitionAction action : t.actions()) {
                if (action.equals(STOP_FETCHING)) {
                    events.add(new FetcherStopped());
                } else if (action.equals(RUN_STOP) || action.equals(STOP_UNMIRRORED)) {
                    outcomes.add(new StopSucceeded(t.next().generation()));
                }
            }
            p = t.next();
        }
        return transitions;
    }

    /** What a STOP can find: a leader in every state, with each desired state from before the STOP, at generation 7. */
    private static List<MirrorPartition> everyPartitionAStopCanFind() {
        List<MirrorPartition> out = new ArrayList<>();
        for (PartitionState state : PartitionState.values()) {
            for (DesiredState before : Arrays.asList(null, DesiredState.MIRRORING, DesiredState.PAUSED, DesiredState.STOPPED)) {
                boolean failed = state == FAILED;
                // MIRRORING and PAUSING follow a fetch: their log is always mirrored into.
                for (boolean mirroredInto : state == MIRRORING || state == PAUSING ? List.of(true) : List.of(true, false)) {
                    out.add(new MirrorPartition("dr", TP, state, true, EPOCH, before, failed ? 1 : 0,
                        failed ? NOW : MirrorPartition.NO_RETRY, failed ? "boom" : null, 7, UNKNOWN, mirroredInto, false));
                }
            }
        }
        return out;
    }

    /** No procedure in flight (null), or the outcomes the procedure in flight in {@code state} (generation 7) can report. */
    private static List<PartitionEvent> inFlightOutcomes(PartitionState state) {
        List<PartitionEvent> out = new ArrayList<>();
        out.add(null);
        switch (state) {
            case PREPARING -> out.addAll(List.of(new PrepareSucceeded(7), new PrepareFailed(7, "late")));
            case MIRRORING -> out.addAll(List.of(new RepairSucceeded(7), new RepairFailed(7, "late")));
            default -> {
            }
        }
        return out;
    }

    @Test
    void stopCompletesFromEveryStateAndNothingInFlightBeforeItActsAfterIt() {
        for (MirrorPartition start : everyPartitionAStopCanFind()) {
            for (PartitionEvent late : inFlightOutcomes(start.state())) {
                String where = start + " + STOP, then late " + late;
                List<Transition> transitions = runStop(start, late);
                MirrorPartition end = transitions.get(transitions.size() - 1).next();
                assertEquals(STOPPED, end.state(), where + ": " + transitions);
                PartitionAction expectedStop = start.mirroredInto() ? RUN_STOP : STOP_UNMIRRORED;
                long stops = transitions.stream().flatMap(t -> t.actions().stream())
                    .filter(a -> a.equals(RUN_STOP) || a.equals(STOP_UNMIRRORED)).count();
                assertTrue(transitions.stream().flatMap(t -> t.actions().stream())
                    .noneMatch(a -> (a.equals(RUN_STOP) || a.equals(STOP_UNMIRRORED)) && !a.equals(expectedStop)), where);
                assertEquals(start.state() == STOPPING || start.state() == STOPPED ? 0 : 1, stops, "one stop: " + where);
                for (Transition t : transitions) {
                    assertTrue(t.next().state() == STOPPING || t.next().state() == STOPPED, "straight to STOPPING: " + where);
                    assertFalse(t.actions().stream().anyMatch(a -> a.equals(START) || a.equals(PREPARE) || a instanceof RepairDivergence
                        || a instanceof ScheduleRetry), "nothing mirrors, aligns or retries once stopping: " + where);
                }
            }
        }
    }

    @Test
    void aStopInFlightCompletesWhateverTheDesiredStateDoesMeanwhile() {
        for (DesiredState meanwhile : Arrays.asList(DesiredState.MIRRORING, DesiredState.PAUSED, DesiredState.STOPPED)) {
            MirrorPartition p = step(leaderIn(STOPPING), new DesiredChanged(meanwhile), STOPPING);
            p = step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING);
            step(p, new StopSucceeded(p.generation()), STOPPED, PERSIST);
        }
    }

    @Test
    void lateOutcomesOfEveryProcedureAreIgnoredInEveryState() {
        for (MirrorPartition start : everyPartitionAStopCanFind()) {
            for (MirrorPartition p : List.of(start, start.asFollower())) {
                MirrorPartition next = p.nextGeneration();
                for (int kind = 0; kind < OUTCOMES; kind++) {
                    PartitionEvent late = outcome(kind, p.generation());
                    Transition t = machine.handle(next, late, NOW + MAX);
                    assertEquals(next, t.next(), next + " + " + late);
                    assertEquals(List.of(), t.actions(), next + " + " + late);
                }
            }
        }
    }

    @Test
    void stopWhilePreparingSupersedesThePreparation() {
        MirrorPartition p = MirrorPartition.unknown("dr", TP, DesiredState.MIRRORING, 0);
        p = step(p, new BecameLeader(EPOCH, UNKNOWN, false), PREPARING, PERSIST, PREPARE);
        long preparation = p.generation();
        // Never mirrored into: released without truncation or barrier, once the preparation's changes are done.
        p = step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING, PERSIST, STOP_UNMIRRORED);
        long stop = p.generation();
        assertTrue(stop > preparation);
        p = step(p, new PrepareSucceeded(preparation), STOPPING); // not MIRRORING: nothing fetches after the stop
        p = step(p, new PrepareFailed(preparation, "late"), STOPPING); // not FAILED: no retry prepares again
        p = step(p, new StopSucceeded(stop), STOPPED, PERSIST);
        assertEquals(stop + 1, p.generation());
    }

    @Test
    void stopWhileRepairingADivergenceSupersedesTheRepair() {
        MirrorPartition p = leaderIn(MIRRORING);
        p = step(p, new SourceDiverged(3, 40), MIRRORING, new RepairDivergence(3, 40));
        long repair = p.generation();
        p = step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING, STOP_FETCHING, PERSIST);
        p = step(p, new RepairSucceeded(repair), STOPPING); // would start fetching
        p = step(p, new FetcherStopped(), STOPPING, RUN_STOP);
        p = step(p, new RepairFailed(repair, "late"), STOPPING);
        step(p, new StopSucceeded(p.generation()), STOPPED, PERSIST);
    }

    @Test
    void stopDuringTheRetryBackoffCancelsTheRetry() {
        MirrorPartition p = step(leaderIn(MIRRORING), new FetchFailed("source down"), FAILED, STOP_FETCHING, PERSIST,
            retryAt(NOW + BASE));
        p = step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING, PERSIST, RUN_STOP);
        p = step(p, new RetryDue(), NOW + BASE, STOPPING);
        step(p, new StopSucceeded(p.generation()), STOPPED, PERSIST);
    }

    @Test
    void startAndStopInQuickSuccession() {
        MirrorPartition p = leaderIn(STOPPED);
        p = step(p, new DesiredChanged(DesiredState.MIRRORING), PREPARING, PERSIST, PREPARE);
        long firstPreparation = p.generation();
        p = step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING, PERSIST, RUN_STOP);
        long firstStop = p.generation();
        // Started again while the stop runs: the stop finishes first, then the partition prepares.
        p = step(p, new DesiredChanged(DesiredState.MIRRORING), STOPPING);
        p = step(p, new PrepareSucceeded(firstPreparation), STOPPING);
        p = step(p, new StopSucceeded(firstStop), PREPARING, PERSIST, PREPARE);
        long secondPreparation = p.generation();
        // Stopped again before that preparation reports: superseded too.
        p = step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING, PERSIST, RUN_STOP);
        p = step(p, new StopSucceeded(firstStop), STOPPING);
        p = step(p, new PrepareSucceeded(secondPreparation), STOPPING);
        step(p, new StopSucceeded(p.generation()), STOPPED, PERSIST);
    }

    @Test
    void aStopOfADeposedLeadershipIsRunAgainByTheNextOne() {
        MirrorPartition p = leaderIn(PAUSED);
        p = step(p, new DesiredChanged(DesiredState.STOPPED), STOPPING, PERSIST, RUN_STOP);
        long first = p.generation();
        p = step(p, new BecameFollower(), STOPPING);
        p = step(p, new StopSucceeded(first), STOPPING);
        p = step(p, new BecameLeader(EPOCH + 1, STOPPING, false), STOPPING, PERSIST, RUN_STOP);
        step(p, new StopSucceeded(p.generation()), STOPPED, PERSIST);
    }

    @Test
    void leavingTheMirrorOrTheLeadershipSupersedesAnyProcedure() {
        for (PartitionState state : List.of(PREPARING, MIRRORING, STOPPING)) {
            MirrorPartition p = leaderIn(state);
            assertTrue(machine.handle(p, new DesiredChanged(null), NOW).next().generation() > p.generation(), state.toString());
            assertTrue(machine.handle(p, new BecameFollower(), NOW).next().generation() > p.generation(), state.toString());
        }
    }

    private MirrorPartition step(MirrorPartition p, PartitionEvent event, PartitionState state, PartitionAction... actions) {
        return step(p, event, NOW, state, actions);
    }

    private MirrorPartition step(MirrorPartition p, PartitionEvent event, long now, PartitionState state,
                                 PartitionAction... actions) {
        return step(machine, p, event, now, state, actions);
    }

    private static MirrorPartition step(PartitionStateMachine on, MirrorPartition p, PartitionEvent event, long now, PartitionState state,
                                        PartitionAction... actions) {
        Transition t = on.handle(p, event, now);
        assertEquals(state, t.next().state(), p + " + " + event);
        assertEquals(List.of(actions), t.actions(), p + " + " + event);
        return t.next();
    }
}
