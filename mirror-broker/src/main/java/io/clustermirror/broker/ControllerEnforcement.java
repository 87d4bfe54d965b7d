package io.clustermirror.broker;

import io.clustermirror.broker.auth.MirrorAwareAuthorizer;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.TopicAuthorizationException;

import java.util.Optional;

/**
 * What the end-to-end check of the controllers' read-only rule means (pure; {@link ControllerEnforcementCheck} sends the
 * requests). The controllers authorize CreatePartitions, DeleteTopics and topic config changes; a controller that runs
 * without the extension (no agent, or another authorizer) accepts them for mirror topics, and nothing on a broker can
 * tell. So a broker asks: a validateOnly CreatePartitions of a read-only mirror topic, from a client that is not the
 * extension's metadata sync, must be refused. It changes nothing either way.
 *
 * <p>A controller loads a new mirror topic a moment after brokers do, so one acceptance only makes the check suspect;
 * the verdict is {@link State#UNENFORCED} once the request is accepted again {@link #CONFIRM_DELAY_MS} later.
 */
final class ControllerEnforcement {
    /**
     * How soon the check is repeated until the controllers refuse the probe: a suspect result is confirmed, and a fixed
     * controller clears the alarm within seconds.
     */
    static final long CONFIRM_DELAY_MS = 10_000;
    /**
     * How often the check is repeated once refused (controllers can be replaced or restarted without the agent at any
     * time), and how often the ERROR is repeated while the rule is not enforced.
     */
    static final long RECHECK_INTERVAL_MS = 300_000;

    /** Where the check stands. */
    enum State {
        /** No read-only mirror topic to probe with yet. */
        UNCHECKED,
        /** The controllers refused the probe: they enforce the rule. */
        ENFORCED,
        /** Accepted once: confirm before alerting. */
        SUSPECT,
        /** Accepted twice in a row: the controllers do not enforce the rule. */
        UNENFORCED
    }

    /** What one probe answered. */
    enum Outcome {
        REFUSED,
        ACCEPTED,
        /** Neither (a timeout, no controller, the topic gone): says nothing about the rule. */
        INCONCLUSIVE
    }

    /** The mirror topic a probe asks to grow by one partition. */
    record Probe(String topic, String mirror, int partitions) {
    }

    private ControllerEnforcement() {
    }

    /** A read-only mirror topic of the image to probe with (the first by name), if it has one. */
    static Optional<Probe> probe(MirrorImage image) {
        return image.topics().values().stream()
            .filter(t -> MirrorAwareAuthorizer.readOnlyMirrorOf(image, t.topic()).isPresent())
            .min(java.util.Comparator.comparing(MirrorTopicRecord::topic))
            .map(t -> new Probe(t.topic(), t.mirror(), t.partitions()));
    }

    /**
     * What a validateOnly CreatePartitions answered. Too few partitions asked for (the topic grew meanwhile) is answered
     * after authorization, so it means accepted too.
     *
     * @param failure the request's failure, null if it succeeded
     */
    static Outcome outcome(Throwable failure) {
        if (failure == null || failure instanceof InvalidPartitionsException) {
            return Outcome.ACCEPTED;
        }
        return failure instanceof TopicAuthorizationException ? Outcome.REFUSED : Outcome.INCONCLUSIVE;
    }

    /** The state after a probe, from the state before it. */
    static State next(State before, Outcome outcome) {
        return switch (outcome) {
            case REFUSED -> State.ENFORCED;
            case ACCEPTED -> before == State.SUSPECT || before == State.UNENFORCED ? State.UNENFORCED : State.SUSPECT;
            case INCONCLUSIVE -> before;
        };
    }

    /** How long until the next probe, after one that left the check in {@code state} with that outcome. */
    static long delayMs(State state, Outcome outcome) {
        return state == State.ENFORCED && outcome == Outcome.REFUSED ? RECHECK_INTERVAL_MS : CONFIRM_DELAY_MS;
    }

    /**
     * Whether a probe that left the check {@link State#UNENFORCED} is logged as an ERROR: the first one, then one every
     * {@link #RECHECK_INTERVAL_MS} while it lasts.
     *
     * @param lastErrorMs when the last ERROR was logged, or a negative value if none was since the check last passed
     */
    static boolean errorDue(long lastErrorMs, long nowMs) {
        return lastErrorMs < 0 || nowMs - lastErrorMs >= RECHECK_INTERVAL_MS;
    }
}
