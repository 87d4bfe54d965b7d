package io.clustermirror.broker.bridge;

import io.clustermirror.common.compat.Reflection;

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
        Reflection.invoke(dumpLogSegmentsMain(), null, (Object) args);
    }

    private static Method dumpLogSegmentsMain() {
        try {
            return Reflection.method(Reflection.firstClass("log dump tool", DUMP_LOG_SEGMENTS), "main", String[].class);
        } catch (IllegalStateException e) {
            throw new IllegalStateException(e.getMessage() + "; is kafka-tools on the classpath?", e);
        }
    }
}
