package io.clustermirror.common.compat;

import org.slf4j.Logger;

/**
 * What every log line of one component starts with (for example {@code "[ClusterMirror mirror=m node=1] "}), and the
 * loggers that put it there. Kafka's own clients made with it (network client, fetch session) log with the same prefix.
 */
public final class LogPrefix {
    /** Kafka's LogContext of the running line (its class moved package in 4.4). */
    private final Object logContext;

    private LogPrefix(String prefix) {
        this.logContext = KafkaClientShapes.logContext(prefix);
    }

    public static LogPrefix of(String prefix) {
        return new LogPrefix(prefix);
    }

    /** A logger for {@code owner} whose every line starts with this prefix. */
    public Logger logger(Class<?> owner) {
        return KafkaClientShapes.logger(logContext, owner);
    }

    /** Kafka's LogContext with this prefix, for the Kafka client classes of this package. */
    Object logContext() {
        return logContext;
    }
}
