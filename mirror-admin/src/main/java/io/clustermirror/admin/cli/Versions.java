package io.clustermirror.admin.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** What {@code --version} prints: this tool's Cluster Mirror version and the Kafka client version it runs with. */
final class Versions {
    private static final String OWN = "version.properties";
    /** Where the kafka-clients jar keeps its version (a resource of the jar, read here without Kafka's internal classes). */
    private static final String KAFKA_CLIENTS = "/kafka/kafka-version.properties";

    private Versions() {
    }

    static String line() {
        return "Cluster Mirror " + read(Versions.class.getResourceAsStream(OWN), "cluster.mirror.version")
            + " (kafka-cluster-mirrors), Kafka clients " + read(Versions.class.getResourceAsStream(KAFKA_CLIENTS), "version");
    }

    private static String read(InputStream resource, String key) {
        if (resource == null) {
            return "unknown";
        }
        try (InputStream in = resource) {
            Properties props = new Properties();
            props.load(in);
            String value = props.getProperty(key, "unknown").trim();
            return value.startsWith("${") ? "unknown" : value;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the version resource " + key, e);
        }
    }
}
