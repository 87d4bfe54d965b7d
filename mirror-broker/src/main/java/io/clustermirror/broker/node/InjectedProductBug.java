package io.clustermirror.broker.node;

import java.util.Optional;
import java.util.ServiceLoader;

/**
 * A seam through which a test build brings a known bug back into a running broker, to prove that a checker (the chaos
 * run's history checker) detects it. The product ships no implementation and reads no setting for it: a broker runs
 * with one only when a test puts an implementation on its class path ({@link ServiceLoader}; mirror-chaos's product-bug
 * agent), and then logs an ERROR at attach. Each method is one bug the seam can bring back.
 */
public interface InjectedProductBug {
    /** The bug's name, for the ERROR line. */
    String id();

    /**
     * Producer ids are allocated by each cluster on its own, so a destination producer may get the id of a mirrored one.
     * With this bug the MIRROR_PID_RESET barrier resets no producer state (neither the stop on the leader, nor the
     * followers' hygiene, nor a barrier mirrored from the source): the mirrored producers stay, and a destination producer
     * that gets one of their ids has its first writes refused as out of sequence or acknowledged as duplicates.
     */
    boolean skipsProducerStateReset();

    /** The bug this JVM's class path brings in, if any: none outside tests. */
    static Optional<InjectedProductBug> injected() {
        return ServiceLoader.load(InjectedProductBug.class, InjectedProductBug.class.getClassLoader()).findFirst();
    }
}
