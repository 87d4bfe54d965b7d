package io.clustermirror.chaos.productbug;

import java.util.Set;

/**
 * TEST-ONLY: the java agent that brings a known product bug into a chaos run's nodes
 * ({@code -javaagent:mirror-chaos-*-product-bug-agent.jar=NAME}). The agent jar holds only this package and the
 * {@link io.clustermirror.broker.node.InjectedProductBug} registration of {@link AgentProductBug}: as an agent it joins the
 * node's class path, where the broker's seam finds the bug. A product install has neither the jar nor any other way to
 * turn the bug on.
 */
public final class ProductBugAgent {
    /** The bugs the agent can inject, by the name the agent's argument gives. */
    public static final String SKIP_PRODUCER_STATE_RESET = "skip-producer-state-reset";
    public static final Set<String> BUGS = Set.of(SKIP_PRODUCER_STATE_RESET);

    private static volatile String injected;

    private ProductBugAgent() {
    }

    /**
     * Runs before the node's main class: records the bug to inject.
     *
     * @throws IllegalArgumentException for an unknown bug, so that the node does not start without it
     */
    public static void premain(String bug) {
        if (bug == null || !BUGS.contains(bug.trim())) {
            throw new IllegalArgumentException("unknown test-only product bug '" + bug + "' after -javaagent:...product-bug-agent.jar=; known: "
                + BUGS);
        }
        injected = bug.trim();
    }

    /** The bug {@link #premain} recorded; null if the jar is not running as an agent. */
    static String injected() {
        return injected;
    }
}
