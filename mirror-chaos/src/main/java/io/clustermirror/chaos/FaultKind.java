package io.clustermirror.chaos;

/** The faults and operator actions a chaos run applies, each healed by the runner after its duration. */
enum FaultKind {
    /** kill -9 of the destination broker leading a mirrored partition; started again after the duration. */
    KILL_LEADER(true),
    /** kill -9 of a destination broker following a mirrored partition; started again after the duration. */
    KILL_FOLLOWER(true),
    /** SIGTERM (clean shutdown) of the leader of a mirrored partition; started again after the duration. */
    TERM_LEADER(true),
    /** SIGTERM of a follower of a mirrored partition; started again after the duration. */
    TERM_FOLLOWER(true),
    /**
     * kill -9 of the destination broker leading {@code __mirror_commands-0}, where the mirror controller runs (a command
     * under way must be taken over by the next leader's controller); started again after the duration.
     */
    KILL_MIRROR_CONTROLLER(true),
    /** kill -9 of the destination's dedicated KRaft controller alone; started again after the duration. */
    KILL_KRAFT_CONTROLLER(true),
    /**
     * A clean leader move of a mirrored partition on the destination: another in-sync replica becomes the preferred one
     * (a reassignment that only reorders the replicas) and is elected ({@code Admin.electLeaders(PREFERRED)}); the old
     * leader stays up and becomes a follower. Instant: nothing to heal.
     */
    MOVE_LEADER(true),
    /**
     * A new source topic whose name matches the mirror's {@code mirror.topics.include}, with records written to it: the
     * mirror must pick it up without a command and mirror it (checked like the others from then on).
     */
    DISCOVER_TOPIC(true),
    /** kill -9 of every destination node (the three brokers and the controller) at once; all started again after the duration. */
    KILL_DESTINATION(true),
    /** The source's proxies forward nothing in either direction for the duration. */
    PROXY_STALL(true),
    /** The source's proxies delay every chunk, both ways, for the duration. */
    PROXY_DELAY(true),
    /** The source's proxies forward at a limited rate (16 to 128 KiB/s per connection and direction) for the duration. */
    PROXY_THROTTLE(true),
    /**
     * The source's proxies flip one byte of the record data of one mirrored partition in every fetch response for the
     * duration: the mirror must refuse the batch (CRC), fail that partition alone naming the offset, and recover.
     */
    CORRUPT_FETCH(true),
    /** The source's proxies reset every open connection. */
    PROXY_RESET(true),
    /** {@code --pause} of the mirrored topic, {@code --resume} after the duration. */
    PAUSE_RESUME(true),
    /**
     * kill -9 of the source broker leading a mirrored partition (a follower if the KRaft controller leads it, since the
     * source has a single controller); started again after the duration. Only with a 3-broker source.
     */
    SOURCE_KILL_LEADER(true, true),
    /** {@link #MOVE_LEADER} on the source, for a partition of the mirrored topic. Only with a 3-broker source. */
    SOURCE_MOVE_LEADER(true, true),
    /**
     * An unclean leader election on the source's {@value ChaosRun#UNCLEAN_TOPIC}: its follower is killed, the ISR shrinks
     * to the leader, which acknowledges writes alone for the duration; then the leader is killed, the follower started
     * and elected with {@code Admin.electLeaders(UNCLEAN)}: the source loses what only the old leader had, and the
     * mirror must follow the source's new log. Only with a 3-broker source.
     */
    SOURCE_UNCLEAN_ELECTION(true, true),
    /**
     * Test-only (never a product fault): one byte of a destination follower's segment file is flipped, to show that the
     * checker names such a violation. Planned only with {@code --inject-corruption}.
     */
    CORRUPT_REPLICA_BYTE(false);

    /** Whether the planner draws this kind at random (the others are placed once, on purpose). */
    final boolean random;
    /** Whether the kind needs a source of three brokers (the first one, the controller, is never killed). */
    final boolean threeSourceBrokers;

    FaultKind(boolean random) {
        this(random, false);
    }

    FaultKind(boolean random, boolean threeSourceBrokers) {
        this.random = random;
        this.threeSourceBrokers = threeSourceBrokers;
    }
}
