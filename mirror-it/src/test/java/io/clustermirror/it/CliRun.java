package io.clustermirror.it;

import io.clustermirror.admin.cli.ClusterMirrorsCommand;
import io.clustermirror.testsupport.LaunchedNode;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** What one run of the command line tool ({@code kafka-cluster-mirrors.sh}) printed and returned. */
record CliRun(int exit, String out, String err) {
    /** How long a launched tool may take: a command waits for the mirror controller's answer, 60 s at most. */
    private static final long LAUNCHED_TIMEOUT_S = 120;

    /** Runs the tool in this JVM against the destination cluster at {@code bootstrapServers}. */
    static CliRun run(String bootstrapServers, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = ClusterMirrorsCommand.mainNoExit(withBootstrap(bootstrapServers, args),
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new CliRun(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /**
     * Runs {@code bin/kafka-cluster-mirrors.sh} as its own process on the Kafka installation whose {@code libs/} is
     * {@code kafkaLibs} ({@code KAFKA_LIBS}): the tool, and the {@code ClusterMirrorAdmin} it is built on, with that
     * release's {@code kafka-clients}, as an operator runs it from a Kafka installation.
     */
    static CliRun launched(Path kafkaLibs, String bootstrapServers, String... args) throws IOException, InterruptedException {
        return launch(toolCommand(bootstrapServers, args), Map.of("KAFKA_LIBS", kafkaLibs.toString()), args);
    }

    /**
     * Runs {@code bin/kafka-cluster-mirrors.sh} of this checkout as its own process with stdout and stderr piped (to
     * files), as a script or a log collector runs it: no terminal.
     */
    static CliRun piped(String bootstrapServers, String... args) throws IOException, InterruptedException {
        return launch(toolCommand(bootstrapServers, args), Map.of(), args);
    }

    /**
     * Runs {@code bin/kafka-cluster-mirrors.sh} of this checkout on a pseudo-terminal, as a person at a terminal runs it:
     * under util-linux {@code script}, which gives the tool a terminal for stdin, stdout and stderr. {@link #out} is what
     * the terminal received, stdout and stderr together as a screen shows them (the terminal turns each newline into
     * {@code \r\n}); {@link #err} is what {@code script} itself complained of.
     */
    static CliRun onTerminal(String bootstrapServers, String... args) throws IOException, InterruptedException {
        String command = toolCommand(bootstrapServers, args).stream().map(CliRun::shellQuoted).collect(Collectors.joining(" "));
        return launch(List.of("script", "--quiet", "--return", "--flush", "--command", command, "/dev/null"), Map.of(), args);
    }

    private static List<String> toolCommand(String bootstrapServers, String... args) {
        List<String> command = new ArrayList<>();
        command.add(LaunchedNode.findCheckout().resolve("bin/kafka-cluster-mirrors.sh").toString());
        command.addAll(List.of(withBootstrap(bootstrapServers, args)));
        return command;
    }

    private static CliRun launch(List<String> command, Map<String, String> environment, String... args)
            throws IOException, InterruptedException {
        Path out = Files.createTempFile("cli-out-", ".txt");
        Path err = Files.createTempFile("cli-err-", ".txt");
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            builder.environment().putAll(environment);
            builder.environment().put("LOG_DIR", LaunchedNode.findCheckout().resolve("mirror-it/target/cli-logs").toString());
            Process process = builder.start();
            if (!process.waitFor(LAUNCHED_TIMEOUT_S, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("kafka-cluster-mirrors.sh " + String.join(" ", args) + " did not end within "
                    + LAUNCHED_TIMEOUT_S + " s; it printed:\n" + Files.readString(out) + Files.readString(err));
            }
            return new CliRun(process.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** The word as a POSIX shell reads it back whole: in single quotes, each of its own quotes closed, escaped and reopened. */
    private static String shellQuoted(String word) {
        return "'" + word.replace("'", "'\\''") + "'";
    }

    private static String[] withBootstrap(String bootstrapServers, String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "--bootstrap-server";
        all[1] = bootstrapServers;
        System.arraycopy(args, 0, all, 2, args.length);
        return all;
    }

    /** This run, for an assertion message. */
    String describe() {
        return "exit " + exit + "\n--- out ---\n" + out + "\n--- err ---\n" + err;
    }
}
