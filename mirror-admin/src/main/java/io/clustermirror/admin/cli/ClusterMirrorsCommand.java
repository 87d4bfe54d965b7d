package io.clustermirror.admin.cli;

import io.clustermirror.admin.AlterClusterMirrorConfigsOptions;
import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.CreateClusterMirrorOptions;
import io.clustermirror.admin.DeleteClusterMirrorOptions;
import io.clustermirror.admin.DescribeClusterMirrorsOptions;
import io.clustermirror.admin.ListClusterMirrorsOptions;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.MirrorTopicsResult;
import io.clustermirror.admin.NotCaughtUpException;
import io.clustermirror.admin.PartitionVerification;
import io.clustermirror.admin.ProgressListener;
import io.clustermirror.admin.StartPreview;
import io.clustermirror.admin.PreviewStopResult;
import io.clustermirror.admin.StopPreview;
import io.clustermirror.admin.StopTransactions;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Time;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/**
 * {@code bin/kafka-cluster-mirrors.sh}: create, alter, delete, list and describe mirrors, and start, stop, pause and
 * resume their topics, and verify their integrity, through {@link ClusterMirrorAdmin}. Prints one line to stderr on
 * failure; exits with 0 on success, 1 if the operation failed (or a verified partition is not identical) and 2 if the
 * command line is wrong.
 */
public final class ClusterMirrorsCommand {
    static final int OK = 0;
    static final int FAILED = 1;
    static final int USAGE = 2;
    /**
     * Every operation has finished by the time the tool closes its client; only a command whose send timed out
     * can be pending, and the user has already been told it may or may not be applied.
     */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static final String CATCHING_UP = "Catching up";
    private static final String BEHIND = "behind";
    private static final String VERIFYING = "Verifying";
    private static final String TO_COMPARE = "to compare";

    private ClusterMirrorsCommand() {
    }

    public static void main(String[] args) {
        System.exit(mainNoExit(args, System.out, System.err));
    }

    /**
     * Runs the tool against a real cluster and returns its exit status instead of exiting. It shows progress in place
     * when it runs at a terminal: on Java 17 {@code System.console()} exists only when stdin and stdout both are one.
     */
    public static int mainNoExit(String[] args, PrintStream out, PrintStream err) {
        return mainNoExit(args, out, err, ClusterMirrorAdmin::create, System.console() != null, Time.SYSTEM);
    }

    /**
     * Runs the tool and returns its exit status; the admin factory lets tests supply a client, and {@code onTerminal} and
     * {@code time} say how progress shows ({@link ProgressReporter.Mode#of}).
     */
    static int mainNoExit(String[] args, PrintStream out, PrintStream err,
                          Function<Properties, ClusterMirrorAdmin> adminFactory, boolean onTerminal, Time time) {
        if (CommandOptions.isHelpRequested(args)) {
            out.print(CommandOptions.helpText());
            return OK;
        }
        if (CommandOptions.isVersionRequested(args)) {
            out.println(Versions.line());
            return OK;
        }
        CommandOptions options;
        try {
            options = CommandOptions.parse(args);
        } catch (UsageException e) {
            err.println("Error: " + e.getMessage());
            err.println(e.usage());
            return USAGE;
        }
        ClusterMirrorAdmin admin;
        try {
            admin = adminFactory.apply(options.clientProperties());
        } catch (Exception e) {
            err.println(errorLine(e));
            return FAILED;
        }
        try {
            return run(options, admin, out, new Progress(ProgressReporter.Mode.of(options.json(), onTerminal), err, time));
        } catch (Exception e) {
            err.println(errorLine(e));
            return FAILED;
        } finally {
            admin.close(CLOSE_TIMEOUT);
        }
    }

    /** Runs the action and returns the exit status: {@link #OK}, or {@link #FAILED} when a verified partition differs. */
    static int run(CommandOptions options, ClusterMirrorAdmin admin, PrintStream out, Progress progress) throws Exception {
        String mirror = options.mirror();
        switch (options.action()) {
            case CREATE -> {
                admin.createClusterMirror(mirror, options.mirrorConfigs(),
                    new CreateClusterMirrorOptions().timeoutMs(options.timeoutMs())).all().get();
                out.println("Created cluster mirror '" + mirror + "'.");
            }
            case ALTER -> {
                CommandOptions.ConfigChanges changes = options.configChanges();
                List<AlterConfigOp> ops = new ArrayList<>();
                changes.set().forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
                changes.deleted().forEach(k -> ops.add(new AlterConfigOp(new ConfigEntry(k, null), AlterConfigOp.OpType.DELETE)));
                admin.alterClusterMirrorConfigs(mirror, ops, new AlterClusterMirrorConfigsOptions().timeoutMs(options.timeoutMs()))
                    .all().get();
                out.println(OutputFormatter.mirrorConfigsAltered(mirror, changes.set().keySet(), changes.deleted()));
            }
            case DELETE -> {
                admin.deleteClusterMirror(mirror, new DeleteClusterMirrorOptions().timeoutMs(options.timeoutMs()))
                    .all().get();
                out.println("Deleted cluster mirror '" + mirror + "'.");
            }
            case LIST -> {
                var listings = admin.listClusterMirrors(new ListClusterMirrorsOptions().timeoutMs(options.timeoutMs()))
                    .listings().get();
                out.print(options.json() ? OutputFormatter.listJson(listings) : OutputFormatter.listText(listings));
            }
            case DESCRIBE -> {
                List<String> names = mirror != null ? List.of(mirror)
                    : admin.listClusterMirrors(new ListClusterMirrorsOptions().timeoutMs(options.timeoutMs()))
                        .names().get();
                Collection<ClusterMirrorDescription> descriptions = admin.describeClusterMirrors(names,
                    new DescribeClusterMirrorsOptions().timeoutMs(options.timeoutMs()).includeTransactions(options.transactions()))
                    .all().get().values();
                out.print(options.json() ? OutputFormatter.describeJson(descriptions)
                    : OutputFormatter.describeTable(descriptions));
            }
            case START -> {
                if (options.dryRun()) {
                    List<StartPreview> previews = admin.previewStartMirrorTopics(mirror, options.topics(), options.excludes(),
                        topicsOptions(options).sourceClientConfigs(options.sourceClientProperties())).partitions().get();
                    out.print(options.json() ? OutputFormatter.startPreviewJson(previews) : OutputFormatter.startPreviewTable(previews));
                } else if (options.waitUntilCaughtUp()) {
                    List<String> started = progress.await(CATCHING_UP, BEHIND, listener -> admin.startMirrorTopics(mirror,
                        options.topics(), options.excludes(), topicsOptions(options).waitUntilCaughtUp(true)
                            .sourceClientConfigs(options.sourceClientProperties()).progressListener(listener)).topics());
                    out.println(OutputFormatter.mirrorTopicsChanged("Started", mirror, started));
                    out.println("Every partition of them is MIRRORING and has caught up with the source.");
                } else {
                    printTopics(out, "Started", mirror,
                        admin.startMirrorTopics(mirror, options.topics(), options.excludes(), topicsOptions(options)));
                }
            }
            case STOP -> {
                if (options.dryRun()) {
                    PreviewStopResult preview = admin.previewStopMirrorTopics(mirror, options.topics(), options.excludes(),
                        topicsOptions(options));
                    List<StopPreview> previews = preview.partitions().get();
                    StopTransactions transactions = preview.transactions().get();
                    out.print(options.json() ? OutputFormatter.stopPreviewJson(previews, transactions)
                        : OutputFormatter.stopPreviewTable(previews, transactions));
                } else if (options.planned()) {
                    plannedStop(options, admin, out, progress);
                } else if (options.consistent()) {
                    MirrorTopicsResult result = admin.stopMirrorTopics(mirror, options.topics(), options.excludes(),
                        topicsOptions(options).consistent(true));
                    List<String> stopped = result.topics().get();
                    StopTransactions transactions = result.consistentCut().get();
                    out.print(options.json() ? OutputFormatter.consistentStopJson(mirror, stopped, transactions)
                        : OutputFormatter.mirrorTopicsChanged("Stopped", mirror, stopped) + "\n"
                            + OutputFormatter.transactionsText(transactions, true));
                } else {
                    printTopics(out, "Stopped", mirror,
                        admin.stopMirrorTopics(mirror, options.topics(), options.excludes(), topicsOptions(options)));
                }
            }
            case PAUSE -> printTopics(out, "Paused", mirror,
                admin.pauseMirrorTopics(mirror, options.topics(), options.excludes(), topicsOptions(options)));
            case RESUME -> printTopics(out, "Resumed", mirror,
                admin.resumeMirrorTopics(mirror, options.topics(), options.excludes(), topicsOptions(options)));
            case RECOVER -> out.println(OutputFormatter.recovered(mirror,
                admin.recoverMirrorTopics(mirror, options.topics(), options.excludes(), topicsOptions(options)).topics().get()));
            case APPLY_HELD -> out.println(OutputFormatter.heldChangesDecided("Applied", mirror,
                admin.applyHeldChanges(mirror, options.topics(), options.excludes(), topicsOptions(options)).topics().get()));
            case REJECT_HELD -> out.println(OutputFormatter.heldChangesDecided("Rejected", mirror,
                admin.rejectHeldChanges(mirror, options.topics(), options.excludes(), topicsOptions(options)).topics().get()));
            case VERIFY -> {
                List<PartitionVerification> verifications = progress.await(VERIFYING, TO_COMPARE, listener ->
                    admin.verifyMirrorTopics(mirror, options.topics(), options.excludes(), options.sourceClientProperties(),
                        topicsOptions(options).progressListener(listener)).partitions());
                out.print(options.json() ? OutputFormatter.verifyJson(verifications) : OutputFormatter.verifyText(verifications));
                return verifications.stream().allMatch(PartitionVerification::identical) ? OK : FAILED;
            }
        }
        return OK;
    }

    private static MirrorTopicsOptions topicsOptions(CommandOptions options) {
        return new MirrorTopicsOptions().timeoutMs(options.timeoutMs()).discardLocalWrites(options.discardLocalWrites());
    }

    /** --stop --planned; with --json, a timeout prints the partitions behind as JSON too (and still fails). */
    private static void plannedStop(CommandOptions options, ClusterMirrorAdmin admin, PrintStream out, Progress progress)
            throws Exception {
        String mirror = options.mirror();
        List<String> stopped;
        try {
            stopped = progress.await(CATCHING_UP, BEHIND, listener -> admin.stopMirrorTopics(mirror, options.topics(),
                options.excludes(), topicsOptions(options).planned(true).sourceClientConfigs(options.sourceClientProperties())
                    .progressListener(listener)).topics());
        } catch (ExecutionException e) {
            if (options.json() && e.getCause() instanceof NotCaughtUpException notCaughtUp) {
                out.print(OutputFormatter.plannedStopJson(mirror, List.of(), notCaughtUp.behind()));
            }
            throw e;
        }
        if (options.json()) {
            out.print(OutputFormatter.plannedStopJson(mirror, stopped, List.of()));
        } else {
            out.println(OutputFormatter.mirrorTopicsChanged("Stopped", mirror, stopped));
        }
    }

    /** How the tool shows the progress of its long operations: one per run, in the {@link ProgressReporter.Mode} chosen. */
    record Progress(ProgressReporter.Mode mode, PrintStream err, Time time) {
        /**
         * The result of a long operation, its progress shown while it runs and cleared before the result (or the error)
         * is printed.
         */
        <T> T await(String activity, String remainingWhat, Function<ProgressListener, KafkaFuture<T>> operation)
                throws Exception {
            try (ProgressReporter reporter = new ProgressReporter(mode, err, time, activity, remainingWhat)) {
                return operation.apply(reporter).get();
            }
        }
    }

    private static void printTopics(PrintStream out, String verb, String mirror, MirrorTopicsResult result)
            throws Exception {
        out.println(OutputFormatter.mirrorTopicsChanged(verb, mirror, result.topics().get()));
    }

    /**
     * The one line printed for a failure: {@code ERROR_NAME: what happened}. Kafka client errors are reported by
     * their root cause, which names the problem (e.g. an unresolvable bootstrap server).
     */
    static String errorLine(Throwable failure) {
        String line = null;
        for (Throwable t = failure; t != null && line == null; t = t.getCause()) {
            if (t instanceof ClusterMirrorException) {
                line = t.getMessage();
            }
        }
        if (line == null) {
            Throwable root = failure;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            line = root instanceof ConfigException ? MirrorError.INVALID_CONFIG.format(root.getMessage())
                : MirrorError.UNKNOWN_SERVER_ERROR.format(root.getClass().getSimpleName() + ": " + root.getMessage());
        }
        return line.replaceAll("\\s+", " ").trim();
    }
}
