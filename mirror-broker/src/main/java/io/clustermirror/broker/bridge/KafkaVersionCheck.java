package io.clustermirror.broker.bridge;

import org.apache.kafka.common.utils.AppInfoParser;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The one Kafka release this build of Cluster Mirror runs on. The bridge reaches into Kafka's internal classes, whose
 * shapes change between releases without notice, so a node refuses to start on any other release rather than fail
 * later, half attached.
 */
public final class KafkaVersionCheck {
    private static final String BUILD_PROPERTIES = "build.properties";

    private KafkaVersionCheck() {
    }

    /** The Kafka version this build was compiled against (the build's {@code kafka.version}). */
    public static String builtFor() {
        return buildProperty("kafka.version");
    }

    /** This build's own version. */
    public static String clusterMirrorVersion() {
        return buildProperty("cluster.mirror.version");
    }

    /** The version of the Kafka jars this JVM runs. */
    public static String running() {
        return AppInfoParser.getVersion();
    }

    /**
     * @throws IllegalStateException naming both versions, if the running Kafka is not the one this build is for
     */
    public static void requireBuiltFor() {
        require(builtFor(), running());
    }

    static void require(String builtFor, String running) {
        if (!builtFor.equals(running)) {
            throw new IllegalStateException("Cluster Mirror " + clusterMirrorVersion() + " is built for Kafka " + builtFor
                + " but this node runs Kafka " + running + ": install the Cluster Mirror release built for Kafka " + running
                + ", or run Kafka " + builtFor);
        }
    }

    private static String buildProperty(String key) {
        try (InputStream in = KafkaVersionCheck.class.getResourceAsStream(BUILD_PROPERTIES)) {
            if (in == null) {
                throw new IllegalStateException("Cluster Mirror's " + BUILD_PROPERTIES + " is missing from its jar: a broken build");
            }
            Properties props = new Properties();
            props.load(in);
            String value = props.getProperty(key);
            if (value == null || value.isBlank() || value.startsWith("${")) {
                throw new IllegalStateException("Cluster Mirror's " + BUILD_PROPERTIES + " has no " + key + ": a broken build");
            }
            return value.trim();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read Cluster Mirror's " + BUILD_PROPERTIES, e);
        }
    }
}
