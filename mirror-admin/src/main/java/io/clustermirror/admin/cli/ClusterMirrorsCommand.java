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
import io.clustermirror.admin.StartPreview;
import io.clustermirror.admin.StopPreview;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigException;

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

    private ClusterMirrorsCommand() {
    }

    public static void main(String[] args) {
        System.exit(mainNoExit(args, System.out, System.err));
    }

    /** Runs the tool against a real cluster and returns its exit status instead of exiting. */
    public static int mainNoExit(String[] args, PrintStream out, PrintStream err) {
        return mainNoExit(args, out, err, ClusterMirrorAdmin::create);
    }

    /** Runs the tool and returns its exit status; the admin factory lets tests supply a client. */
    static int mainNoExit(String[] args, PrintStream out, PrintStream err,
                          Function<Properties, ClusterMirrorAdmin> adminFactory) {
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
            return run(options, admin, out);
        } catch (Exception e) {
            err.println(errorLine(e));
            return FAILED;
        } finally {
            admin.close(CLOSE_TIMEOUT);
        }
    }

    /** Runs the action and returns the exit status: {@link #OK}, or {@link #FAILED} when a verified partition differs. */
    static int run(CommandOptions options, ClusterMirrorAdmin admin, PrintStream out) throws Exception {
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
                    new DescribeClusterMirrorsOptions().timeoutMs(options.timeoutMs())).all().get().values();
                out.print(options.json() ? OutputFormatter.describeJson(descriptions)
                    : OutputFormatter.describeTable(descriptions));
            }
            case START -> {
                if (options.dryRun()) {
                    List<StartPreview> previews = admin.previewStartMirrorTopics(mirror, options.topics(), options.excludes(),
                        topicsOptions(options).sourceClientConfigs(options.sourceClientProperties())).partitions().get();
                    out.print(options.json() ? OutputFormatter.startPreviewJson(previews) : OutputFormatter.startPreviewTable(previews));
                } else {
                    printTopics(out, "Started", mirror,
                        admin.startMirrorTopics(mirror, options.topics(), options.excludes(), topicsOptions(options)));
                }
            }
            case STOP -> {
                if (options.dryRun()) {
                    List<StopPreview> previews = admin.previewStopMirrorTopics(mirror, options.topics(), options.excludes(),
                        topicsOptions(options)).partitions().get();
                    out.print(options.json() ? OutputFormatter.stopPreviewJson(previews) : OutputFormatter.stopPreviewTable(previews));
                } else if (options.planned()) {
                    plannedStop(options, admin, out);
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
                List<PartitionVerification> verifications = admin.verifyMirrorTopics(mirror, options.topics(), options.excludes(),
                    options.sourceClientProperties(), topicsOptions(options)).partitions().get();
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
    private static void plannedStop(CommandOptions options, ClusterMirrorAdmin admin, PrintStream out) throws Exception {
        String mirror = options.mirror();
        MirrorTopicsResult result = admin.stopMirrorTopics(mirror, options.topics(), options.excludes(),
            topicsOptions(options).planned(true).sourceClientConfigs(options.sourceClientProperties()));
        if (!options.json()) {
            printTopics(out, "Stopped", mirror, result);
            return;
        }
        try {
            out.print(OutputFormatter.plannedStopJson(mirror, result.topics().get(), List.of()));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof NotCaughtUpException notCaughtUp) {
                out.print(OutputFormatter.plannedStopJson(mirror, List.of(), notCaughtUp.behind()));
            }
            throw e;
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
