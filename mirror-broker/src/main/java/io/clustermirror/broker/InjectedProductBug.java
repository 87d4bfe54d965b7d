package io.clustermirror.broker;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * TEST-ONLY: a known bug a test brings back into a running broker, to prove that a checker (the chaos run's history
 * checker) detects it. Never an operator setting: it is read only from the JVM system property {@value #PROPERTY}, whose
 * name says so, never from a broker, mirror or client configuration; a broker that runs with one logs an ERROR.
 */
public enum InjectedProductBug {
    /**
     * Producer ids are allocated by each cluster on its own, so a destination producer may get the id of a mirrored one.
     * With this bug the MIRROR_PID_RESET barrier resets no producer state (neither the stop on the leader, nor the
     * followers' hygiene, nor a barrier mirrored from the source): the mirrored producers stay, and a destination producer
     * that gets one of their ids has its first writes refused as out of sequence or acknowledged as duplicates.
     */
    SKIP_PRODUCER_STATE_RESET("skip-producer-state-reset");

    /** The JVM system property that names the bug to inject; test-only. */
    public static final String PROPERTY = "clustermirror.testonly.inject.product.bug";
    private static final Optional<InjectedProductBug> INJECTED = parse(System.getProperty(PROPERTY));

    private final String id;

    InjectedProductBug(String id) {
        this.id = id;
    }

    /** The name the property takes. */
    public String id() {
        return id;
    }

    /** True if this JVM runs with this bug injected. */
    public boolean injected() {
        return INJECTED.filter(this::equals).isPresent();
    }

    /** The bug this JVM runs with, if any. */
    public static Optional<InjectedProductBug> injectedBug() {
        return INJECTED;
    }

    /**
     * The bug named {@code value} (absent or blank: none).
     *
     * @throws IllegalArgumentException naming the known bugs if the name is unknown
     */
    public static Optional<InjectedProductBug> parse(String value) {
        if (value == null || value.isBlank()) {
            return Optional.empty();
        }
        String name = value.trim().toLowerCase(Locale.ROOT);
        return Optional.of(Arrays.stream(values()).filter(b -> b.id.equals(name)).findFirst().orElseThrow(() ->
            new IllegalArgumentException("unknown test-only product bug '" + value + "' in -D" + PROPERTY + "; known: "
                + Arrays.stream(values()).map(InjectedProductBug::id).collect(Collectors.joining(", "))
                + " (remove the property outside tests)")));
    }
}
