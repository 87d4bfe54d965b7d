package io.clustermirror.broker.bridge;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * Kafka's command-line tools that ours run unchanged. Kafka's log dump tool was the Scala object
 * {@code kafka.tools.DumpLogSegments} up to 4.2 and is the Java class {@code org.apache.kafka.tools.DumpLogSegments}
 * from 4.3; both take the same arguments and print the same lines, so it is found by name.
 */
public final class KafkaTools {
    private static final String[] DUMP_LOG_SEGMENTS = {"org.apache.kafka.tools.DumpLogSegments", "kafka.tools.DumpLogSegments"};

    private KafkaTools() {
    }

    /** Runs Kafka's {@code kafka-dump-log.sh} with {@code args}, printing to {@code System.out}. */
    public static void dumpLogSegments(String[] args) {
        Method main = dumpLogSegmentsMain();
        try {
            main.invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("Cannot run " + main, e);
        }
    }

    private static Method dumpLogSegmentsMain() {
        try {
            return MovedClasses.first("Kafka's log dump tool", DUMP_LOG_SEGMENTS).getMethod("main", String[].class);
        } catch (ClassNotFoundException | NoSuchMethodException e) {
            throw new IllegalStateException("This Kafka has no usable log dump tool: " + e.getMessage()
                + "; is kafka-tools on the classpath?", e);
        }
    }
}
