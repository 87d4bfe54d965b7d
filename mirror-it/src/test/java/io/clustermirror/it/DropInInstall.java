package io.clustermirror.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * The drop-in install as docs/operations.md writes it: its {@code export CLASSPATH=...} and {@code export KAFKA_OPTS=...} lines,
 * with the guide's jar path replaced by this build's one jar, and the command line Kafka's {@code kafka-run-class.sh}
 * builds from them ({@code java <JVM options> -cp <CLASSPATH>:<Kafka's libs> <KAFKA_OPTS> <main class> <args>}). Tests
 * start nodes with it, so the guide's install lines cannot drift from what is tested.
 */
final class DropInInstall {
    /** Where the guide tells operators to put the jar. */
    static final String GUIDE_JAR = "/opt/cluster-mirror/cluster-mirror.jar";
    /** The guide whose drop-in lines these are. */
    static final String GUIDE = "docs/operations.md";

    private final String classpath;
    private final List<String> kafkaOpts;
    private final Path kafkaLibs;

    private DropInInstall(String classpath, List<String> kafkaOpts, Path kafkaLibs) {
        this.classpath = classpath;
        this.kafkaOpts = kafkaOpts;
        this.kafkaLibs = kafkaLibs;
    }

    /**
     * Reads the checkout's docs/operations.md and finds the built one jar ({@code mirror-server/target/cluster-mirror-*.jar}) and
     * a stock Kafka's libs ({@code mirror-server/target/kafka-libs}), both made by {@code mvn package}.
     */
    static DropInInstall fromGuide(Path checkout) throws IOException {
        Path target = checkout.resolve("mirror-server/target");
        Path kafkaLibs = target.resolve("kafka-libs");
        Path jar;
        try (Stream<Path> files = Files.list(target)) {
            jar = files.filter(f -> f.getFileName().toString().matches("cluster-mirror-.*\\.jar")).findFirst()
                .orElseThrow(() -> new IllegalStateException("No one jar in " + target + ": run 'mvn -B package -DskipTests' first"));
        }
        if (!Files.isDirectory(kafkaLibs)) {
            throw new IllegalStateException("No " + kafkaLibs + ": run 'mvn -B package -DskipTests' first");
        }
        List<String> guide = Files.readAllLines(checkout.resolve(GUIDE), StandardCharsets.UTF_8);
        String classpath = exported(guide, "CLASSPATH").replace(GUIDE_JAR, jar.toString());
        String kafkaOpts = exported(guide, "KAFKA_OPTS").replace(GUIDE_JAR, jar.toString());
        if (!classpath.contains(jar.toString()) || !kafkaOpts.contains("-javaagent:" + jar)) {
            throw new IllegalStateException(GUIDE + "'s drop-in lines no longer name " + GUIDE_JAR + " as the jar on CLASSPATH and "
                + "in -javaagent: CLASSPATH=" + classpath + ", KAFKA_OPTS=" + kafkaOpts);
        }
        return new DropInInstall(classpath, List.of(kafkaOpts.trim().split("\\s+")), kafkaLibs);
    }

    /** The same install on another stock Kafka installation, whose {@code libs/} is {@code kafkaLibs}. */
    DropInInstall on(Path otherKafkaLibs) {
        return new DropInInstall(classpath, kafkaOpts, otherKafkaLibs);
    }

    /** The value of the guide's first {@code export NAME=value} line, unquoted. */
    private static String exported(List<String> guide, String name) {
        String prefix = "export " + name + "=";
        String value = guide.stream().map(String::trim).filter(l -> l.startsWith(prefix)).findFirst()
            .orElseThrow(() -> new IllegalStateException(GUIDE + " has no '" + prefix + "' line"))
            .substring(prefix.length());
        return value.startsWith("\"") && value.endsWith("\"") ? value.substring(1, value.length() - 1) : value;
    }

    /** The guide's {@code KAFKA_OPTS} options. */
    List<String> kafkaOpts() {
        return kafkaOpts;
    }

    /**
     * The command {@code kafka-run-class.sh} runs: {@code java <jvmOptions> -cp <CLASSPATH>:<libs> <kafkaOpts> <main> <args>}.
     *
     * @param kafkaOpts the {@code KAFKA_OPTS} to use: {@link #kafkaOpts()}, or less to install only half of it
     */
    List<String> command(List<String> jvmOptions, List<String> kafkaOpts, String mainClass, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(classpath + ":" + kafkaLibs + "/*");
        command.addAll(kafkaOpts);
        command.add(mainClass);
        command.addAll(Arrays.asList(args));
        return command;
    }
}
