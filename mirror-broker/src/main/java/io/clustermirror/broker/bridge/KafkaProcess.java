package io.clustermirror.broker.bridge;

import io.clustermirror.common.compat.Reflection;
import org.slf4j.Logger;

import java.util.Locale;

/**
 * What a node process borrows from Kafka's own: the handler that logs the signal that ends it. The handler's class
 * moved from {@code org.apache.kafka.common.utils} to {@code ...utils.internals} in 4.4, so it is found by name.
 */
public final class KafkaProcess {
    private static final String[] SIGNAL_HANDLER_CLASSES = {
        "org.apache.kafka.common.utils.internals.LoggingSignalHandler",
        "org.apache.kafka.common.utils.LoggingSignalHandler",
    };

    private KafkaProcess() {
    }

    /**
     * Logs the signal (TERM, INT, HUP) that ends the process, as a Kafka broker does. Left out where Kafka leaves it
     * out (Windows, IBM's JDK, whose signal API differs); a failure to register is logged and otherwise ignored.
     */
    public static void logTerminatingSignals(Logger log) {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String vendor = System.getProperty("java.vendor", "");
        if (os.startsWith("windows") || vendor.contains("IBM")) {
            return;
        }
        try {
            Class<?> handler = Reflection.firstClass("LoggingSignalHandler", SIGNAL_HANDLER_CLASSES);
            handler.getMethod("register").invoke(handler.getConstructor().newInstance());
        } catch (ReflectiveOperationException | RuntimeException e) {
            log.warn("Failed to register the optional signal handler that logs a message when the process is "
                + "terminated by a signal: {}", e.toString(), e);
        }
    }
}
