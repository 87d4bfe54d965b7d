package io.clustermirror.chaos;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Locale;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * {@code bin/chaos.sh [--seed N] [--duration 10m] [--report DIR] [--source-brokers 1-3] [--cycles N]
 * [--inject-corruption] [--inject-product-bug NAME] [--keep]}:
 * one seeded chaos run (see {@link ChaosRun}) that writes its report to {@code DIR} and exits 0 only if the history
 * checker found no violation: 1 with violations, 2 on a wrong command line, 3 if the run itself could not be carried
 * out (a cluster did not start, ...). The nodes' directories are deleted after a passing run and kept otherwise.
 */
public final class ChaosMain {
    private static final Logger log = LoggerFactory.getLogger(ChaosMain.class);
    static final int EXIT_PASS = 0;
    static final int EXIT_VIOLATION = 1;
    static final int EXIT_USAGE = 2;
    static final int EXIT_ERROR = 3;
    private static final String USAGE = "usage: bin/chaos.sh [--seed N] [--duration 10m|90s] [--report DIR] [--source-brokers 1-3] "
        + "[--cycles N] [--inject-corruption] [--inject-product-bug " + String.join("|", new TreeSet<>(ChaosRun.PRODUCT_BUGS.keySet())) + "] [--keep]";

    private ChaosMain() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Parses the command line, runs, writes the report and returns the exit status. */
    static int run(String[] args) {
        long seed = System.nanoTime() & 0xFFFFFFFFL;
        Duration duration = Duration.ofMinutes(10);
        Path report = null;
        int sourceBrokers = 1;
        int maxCycles = Integer.MAX_VALUE;
        boolean inject = false;
        boolean keep = false;
        Optional<String> productBug = Optional.empty();
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--seed" -> seed = Long.parseLong(value(args, ++i));
                    case "--duration" -> duration = parseDuration(value(args, ++i));
                    case "--report" -> report = Path.of(value(args, ++i));
                    case "--source-brokers" -> sourceBrokers = Integer.parseInt(value(args, ++i));
                    case "--cycles" -> maxCycles = Integer.parseInt(value(args, ++i));
                    case "--inject-corruption" -> inject = true;
                    case "--inject-product-bug" -> productBug = Optional.of(value(args, ++i));
                    case "--keep" -> keep = true;
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (sourceBrokers < 1 || sourceBrokers > 3) {
                throw new IllegalArgumentException("--source-brokers must be 1, 2 or 3");
            }
            if (maxCycles < 0) {
                throw new IllegalArgumentException("--cycles must be 0 or more (0: no failover; without it, as many cycles as the duration holds)");
            }
            if (productBug.isPresent() && !ChaosRun.PRODUCT_BUGS.containsKey(productBug.get())) {
                throw new IllegalArgumentException("unknown product bug " + productBug.get() + "; known: " + ChaosRun.PRODUCT_BUGS.keySet());
            }
        } catch (IllegalArgumentException e) {
            System.err.println("Error: " + e.getMessage());
            System.err.println(USAGE);
            return EXIT_USAGE;
        }
        Path home = Path.of(System.getProperty("chaos.home", ".")).toAbsolutePath().normalize();
        if (report == null) {
            report = home.resolve("chaos/reports/seed-" + seed);
        }
        try {
            Path work = Files.createTempDirectory("cluster-mirror-chaos-" + seed + "-");
            ChaosRun.Options options = new ChaosRun.Options(home, work, seed, duration, sourceBrokers, inject, productBug, maxCycles);
            ChaosRun run = new ChaosRun(options);
            System.out.println("Chaos run, seed " + seed + ", faults for " + duration.toSeconds() + " s (replay: " + options.replayCommand() + ")");
            ChaosRun.Result result = run.run();
            ChaosReport.write(result, report);
            System.out.println(result.passed() ? "PASS: no violation" : "FAIL: " + result.history().violations().size()
                + " violation(s); first: " + result.history().violations().get(0));
            System.out.println("Report: " + report.resolve("report.md") + " and report.json");
            if (result.passed() && !keep) {
                deleteTree(work);
            } else {
                System.out.println("Node directories (data, logs) kept in " + work);
            }
            return result.passed() ? EXIT_PASS : EXIT_VIOLATION;
        } catch (Exception e) {
            log.error("The chaos run could not be carried out", e);
            System.err.println("ERROR: the chaos run could not be carried out: " + e);
            return EXIT_ERROR;
        }
    }

    private static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        return args[i];
    }

    /** {@code 90s}, {@code 10m}, {@code 1h} or plain seconds. */
    static Duration parseDuration(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        try {
            if (t.endsWith("h")) {
                return Duration.ofHours(Long.parseLong(t.substring(0, t.length() - 1)));
            } else if (t.endsWith("m")) {
                return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
            } else if (t.endsWith("s")) {
                return Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
            }
            return Duration.ofSeconds(Long.parseLong(t));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a duration: " + text + " (e.g. 90s, 10m, 1h)", e);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }
}
