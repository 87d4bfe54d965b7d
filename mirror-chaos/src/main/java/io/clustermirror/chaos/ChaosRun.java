package io.clustermirror.chaos;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.broker.InjectedProductBug;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.LaunchedNode;
import io.clustermirror.testkit.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;

/**
 * One chaos run: starts the clusters, mirrors two topics while a workload writes to the source, applies the seeded
 * {@link FaultPlan} one fault after the other while a checker compares the destination's replicas with the source every
 * few seconds, then lets the clusters converge and checks the whole history ({@link HistoryChecker}).
 *
 * <p>Topics: {@value #MIRRORED_TOPIC} ({@value #MIRRORED_PARTITIONS} partitions) is mirrored for the whole run, with
 * pause/resume among the faults; {@value #FAILOVER_TOPIC} ({@value #FAILOVER_PARTITIONS} partitions) is stopped (failed
 * over) at the plan's random point, its producers move to the destination, and later it fails back: a mirror
 * {@value #FAILBACK_MIRROR} on the source copies it from the destination. The stop is checked against every write the
 * source acknowledged, the failback against every write the destination acknowledged.
 */
final class ChaosRun {
    private static final Logger log = LoggerFactory.getLogger(ChaosRun.class);
    static final String MIRROR = "chaos";
    static final String MIRRORED_TOPIC = "chaos-mirrored";
    static final int MIRRORED_PARTITIONS = 3;
    static final String FAILOVER_TOPIC = "chaos-failover";
    static final int FAILOVER_PARTITIONS = 2;
    /**
     * With a 3-broker source, the topic of the unclean elections: one partition on source brokers 2 and 3 only (broker 1,
     * the source's controller, is never killed) with {@code min.insync.replicas=1}, so that its leader acknowledges writes
     * alone once the ISR shrank; written by the idempotent producer only (a transaction marker lost in an unclean
     * election would leave a transaction hanging on the source, which no mirror can mend).
     */
    static final String UNCLEAN_TOPIC = "chaos-unclean";
    /** A mirrored topic whose old segments retention deletes under the workload, on both sides (30 s, segments of 10 s). */
    static final String RETENTION_TOPIC = "chaos-retention";
    private static final TopicPartition RETENTION_PARTITION = new TopicPartition(RETENTION_TOPIC, 0);
    private static final TopicPartition UNCLEAN_PARTITION = new TopicPartition(UNCLEAN_TOPIC, 0);
    private static final List<Integer> UNCLEAN_REPLICAS = List.of(2, 3);
    /** After an unclean election, how long the destination may still hold what the source lost before the mirror follows. */
    private static final Duration UNCLEAN_FOLLOW_BOUND = Duration.ofSeconds(60);
    /** The mirror on the source that copies the failover topic back from the destination. */
    static final String FAILBACK_MIRROR = "chaos-back";
    /** Records the moved producers write to each failed-over partition on the destination. */
    private static final int WRITES_AFTER_FAILOVER = 20;
    /** How long partitions may take to reach their requested state once the faults stopped. */
    static final Duration CONVERGENCE_BOUND = Duration.ofSeconds(120);
    private static final Duration COMMAND_BOUND = Duration.ofSeconds(120);
    private static final Duration CHECK_INTERVAL = Duration.ofSeconds(10);

    /**
     * What to run.
     *
     * @param home             the checkout ({@code bin/}, {@code config/}, built {@code mirror-server/target/lib})
     * @param workDir          where the nodes keep their data and logs
     * @param seed             the fault plan's seed
     * @param duration         how long faults are applied (startup and convergence come on top)
     * @param sourceBrokers    brokers of the source cluster (1 to 3)
     * @param injectCorruption test-only: flip one byte of a destination replica, to show the checker catches it
     * @param productBug       test-only: the known product bug every node runs with (one of {@link #PRODUCT_BUGS}), to
     *                         show the checker catches it
     */
    record Options(Path home, Path workDir, long seed, Duration duration, int sourceBrokers, boolean injectCorruption,
                   Optional<String> productBug) {
        /** The command that replays this run. */
        String replayCommand() {
            return "bin/chaos.sh --seed " + seed + " --duration " + duration.toSeconds() + "s"
                + (sourceBrokers != 1 ? " --source-brokers " + sourceBrokers : "") + (injectCorruption ? " --inject-corruption" : "")
                + productBug.map(b -> " --inject-product-bug " + b).orElse("");
        }

        /** The system properties every node runs with: the test-only product bug's, if any. */
        Map<String, String> nodeSystemProperties() {
            // A compile-time constant of the broker module, inlined: that module is not on the runner's class path.
            return productBug.map(b -> Map.of(InjectedProductBug.PROPERTY, b)).orElse(Map.of());
        }
    }

    /**
     * The product bugs a run can inject ({@code --inject-product-bug}): the names the broker's {@link InjectedProductBug}
     * knows, each with the check that must name it.
     */
    static final Map<String, String> PRODUCT_BUGS = Map.of("skip-producer-state-reset", HistoryChecker.PRODUCER_STATE);

    /** A fault as it was applied: the plan's entry, when it really started and ended, its target and what came of it. */
    record AppliedFault(FaultPlan.Fault planned, long startedAtMs, long endedAtMs, String target, String outcome) {
    }

    /** The figures of one partition at the end of the run. */
    record PartitionFigures(TopicPartition partition, DesiredState desired, PartitionState state, long sourceEnd, long destinationEnd,
                            long barrierOffset, long truncatedFrom, long truncatedTo, String lastError, HistoryChecker.WriteFigures writes,
                            Optional<Failback> failback) {
    }

    /** A failed-back partition: its state in the source's mirror, the cut that mirror reported, the destination's writes. */
    record Failback(PartitionState state, long truncatedFrom, long truncatedTo, HistoryChecker.WriteFigures writes) {
    }

    /** Everything the report shows. */
    record Result(Options options, List<FaultPlan.Fault> plan, List<AppliedFault> faults, List<PartitionFigures> partitions,
                  History history, long identityChecks, long batchesCompared, Map<String, String> clusters, long totalWrites,
                  Map<String, Long> extensionErrorLines) {
        boolean passed() {
            return history.violations().isEmpty();
        }
    }

    private final Options options;
    private final List<FaultPlan.Fault> plan;
    private final History history = new History();
    private final Map<TopicPartition, Long> barriers = new ConcurrentHashMap<>();
    private final List<AppliedFault> applied = new ArrayList<>();
    private volatile boolean stopRequested;
    // Set once the source's partitions of the failover topic mirror from the destination: from then on they are compared.
    private volatile boolean failedBack;
    private volatile boolean faultsOver;
    /** Partitions of the source that had an unclean election, with the time of the last one (run clock). */
    private final Map<TopicPartition, Long> uncleanElections = new ConcurrentHashMap<>();
    private ChaosClusters clusters;
    private ClusterMirrorAdmin mirrors;
    private ClusterMirrorAdmin sourceMirrors;
    private Workload workload;
    private MovingGroup group;
    private HistoryChecker checker;

    ChaosRun(Options options) {
        this.options = options;
        this.plan = FaultPlan.plan(options.seed(), options.duration(), options.sourceBrokers(), options.injectCorruption());
    }

    static List<TopicPartition> partitions(String topic, int count) {
        return IntStream.range(0, count).mapToObj(p -> new TopicPartition(topic, p)).toList();
    }

    /** The topics the mirror {@value #MIRROR} mirrors: {@value #UNCLEAN_TOPIC} too with a 3-broker source. */
    private List<String> mirroredTopics() {
        return options.sourceBrokers() == 3 ? List.of(MIRRORED_TOPIC, FAILOVER_TOPIC, RETENTION_TOPIC, UNCLEAN_TOPIC)
            : List.of(MIRRORED_TOPIC, FAILOVER_TOPIC, RETENTION_TOPIC);
    }

    private List<TopicPartition> allPartitions() {
        List<TopicPartition> all = new ArrayList<>(partitions(MIRRORED_TOPIC, MIRRORED_PARTITIONS));
        all.addAll(partitions(FAILOVER_TOPIC, FAILOVER_PARTITIONS));
        all.add(RETENTION_PARTITION);
        if (options.sourceBrokers() == 3) {
            all.add(UNCLEAN_PARTITION);
        }
        return all;
    }

    /** Runs everything and returns the result; violations are in it, not thrown. */
    Result run() throws Exception {
        log.info("Chaos run, seed {}, faults for {}; plan:\n{}", options.seed(), options.duration(), FaultPlan.table(plan));
        clusters = ChaosClusters.start(options.home(), options.workDir(), options.sourceBrokers(), options.nodeSystemProperties());
        checker = new HistoryChecker(clusters, history);
        try (Admin sourceAdmin = clusters.sourceAdmin();
             Admin destinationAdmin = clusters.destinationAdmin();
             ClusterMirrorAdmin mirrorAdmin = ClusterMirrorAdmin.create(mirrorAdminProperties(clusters.destinationBootstrapServers()));
             ClusterMirrorAdmin sourceMirrorAdmin = ClusterMirrorAdmin.create(mirrorAdminProperties(clusters.sourceBootstrapServers()))) {
            mirrors = mirrorAdmin;
            sourceMirrors = sourceMirrorAdmin;
            short rf = (short) Math.min(3, options.sourceBrokers());
            List<NewTopic> topics = new ArrayList<>(List.of(new NewTopic(MIRRORED_TOPIC, MIRRORED_PARTITIONS, rf),
                new NewTopic(FAILOVER_TOPIC, FAILOVER_PARTITIONS, rf),
                new NewTopic(RETENTION_TOPIC, 1, rf).configs(Map.of("retention.ms", "30000", "segment.ms", "10000"))));
            if (options.sourceBrokers() == 3) {
                // Unclean elections are the Admin call's alone: unclean.leader.election.enable stays false, so that the
                // controller does not elect the returning follower by itself first.
                topics.add(new NewTopic(UNCLEAN_TOPIC, Map.of(0, UNCLEAN_REPLICAS)).configs(Map.of("min.insync.replicas", "1")));
            }
            sourceAdmin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
            history.event("operator", "--create --mirror " + MIRROR + " (bootstrap.servers " + clusters.proxiedSourceBootstrapServers() + ")");
            // Group offsets sync every 10 s (30 s by default): the moving group's check allows several intervals.
            mirrors.createClusterMirror(MIRROR, clusters.mirrorConfig(Map.of(MirrorConfig.METADATA_REFRESH_INTERVAL_MS, "10000")))
                .all().get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS);
            history.event("operator", "--start --topics " + String.join(",", mirroredTopics()));
            mirrors.startMirrorTopics(MIRROR, mirroredTopics(), List.of()).all().get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS);
            history.startClock();
            workload = new Workload(clusters.sourceBootstrapServers(), allPartitions(), List.of(UNCLEAN_PARTITION), options.seed(), history);
            workload.start();
            group = new MovingGroup(clusters.sourceBootstrapServers(), FAILOVER_TOPIC, history);
            group.start();
            Thread checks = new Thread(() -> checkWhileFaulting(sourceAdmin, destinationAdmin), "chaos-checker");
            checks.setDaemon(true);
            checks.start();
            try {
                applyPlan(sourceAdmin, destinationAdmin);
            } finally {
                faultsOver = true;
                healAll();
                group.stop();
                workload.close();
                checks.join(TimeUnit.MINUTES.toMillis(2));
            }
            history.event("phase", "faults over; the workload stopped after " + workload.writes().size() + " writes");
            awaitConvergence(sourceAdmin, destinationAdmin);
            List<PartitionFigures> figures = finalChecks(sourceAdmin, destinationAdmin, workload.writes());
            Map<String, Long> extensionErrors = checker.checkExtensionLogs();
            Map<String, String> clusterInfo = new LinkedHashMap<>();
            clusterInfo.put("source", options.sourceBrokers() + " broker(s), Kafka 4.3.1 with the Cluster Mirror launcher (no mirror of "
                + "its own until failback), client listener through fault proxies " + clusters.proxiedSourceBootstrapServers());
            clusterInfo.put("destination", ChaosClusters.DESTINATION_BROKERS + " brokers + 1 dedicated controller, Cluster Mirror launcher, RF 3, "
                + "min.insync.replicas=2");
            clusterInfo.put("workDir", options.workDir().toString());
            return new Result(options, plan, List.copyOf(applied), figures, history, checker.identityChecks(), checker.batchesCompared(),
                clusterInfo, workload.writes().size(), extensionErrors);
        } finally {
            clusters.close();
        }
    }

    /** An operator's client: a command waits up to {@link #COMMAND_BOUND} for the mirror controller's answer. */
    private static Properties mirrorAdminProperties(String bootstrapServers) {
        Properties props = ChaosClusters.clientProperties(bootstrapServers);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) COMMAND_BOUND.toMillis());
        return props;
    }

    /** The periodic {@value HistoryChecker#IDENTITY} check while faults are applied. */
    private void checkWhileFaulting(Admin sourceAdmin, Admin destinationAdmin) {
        while (!faultsOver) {
            for (TopicPartition tp : allPartitions()) {
                try {
                    Long elected = uncleanElections.get(tp);
                    if (elected != null && history.nowMs() - elected < UNCLEAN_FOLLOW_BOUND.toMillis()) {
                        continue; // the destination may still hold what the source lost; checked again once the bound passed
                    }
                    if (tp.topic().equals(FAILOVER_TOPIC) && stopRequested) {
                        Long barrier = barriers.get(tp);
                        if (barrier != null) {
                            checker.checkIdentity(sourceAdmin, destinationAdmin, tp, barrier, false);
                        }
                    } else {
                        checker.checkIdentity(sourceAdmin, destinationAdmin, tp, Long.MAX_VALUE, false);
                    }
                    if (tp.topic().equals(FAILOVER_TOPIC) && failedBack) {
                        checker.checkFailbackIdentity(sourceAdmin, destinationAdmin, tp, Long.MAX_VALUE, false);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (Exception e) {
                    // A replica's metadata was unavailable (a node is down): the next round checks it.
                    log.debug("Identity check of {} skipped", tp, e);
                }
            }
            try {
                Thread.sleep(CHECK_INTERVAL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void applyPlan(Admin sourceAdmin, Admin destinationAdmin) throws Exception {
        for (FaultPlan.Fault fault : plan) {
            long wait = fault.atMs() - history.nowMs();
            if (wait > 0) {
                Thread.sleep(wait);
            }
            long started = history.nowMs();
            String[] target = {"-"};
            String outcome;
            try {
                outcome = apply(fault, sourceAdmin, destinationAdmin, target);
            } catch (TimeoutException e) {
                outcome = "timed out: " + e.getMessage();
                history.violation(HistoryChecker.CONVERGENCE, target[0], "fault #" + fault.index() + " " + fault.kind() + ": " + e.getMessage());
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                // The run did not do what its plan says: it cannot pass, but the rest of the plan and the checks still run.
                outcome = "failed: " + e;
                history.violation(HistoryChecker.CHECK_FAILED, target[0], "fault #" + fault.index() + " " + fault.kind() + " could not be applied: "
                    + e);
            }
            applied.add(new AppliedFault(fault, started, history.nowMs(), target[0], outcome));
        }
        long rest = options.duration().toMillis() - history.nowMs();
        if (rest > 0) {
            Thread.sleep(rest);
        }
    }

    /** Applies and heals one fault; returns what came of it and puts the resolved target into {@code target[0]}. */
    private String apply(FaultPlan.Fault fault, Admin sourceAdmin, Admin destinationAdmin, String[] target) throws Exception {
        switch (fault.kind()) {
            case KILL_LEADER, KILL_FOLLOWER, TERM_LEADER, TERM_FOLLOWER -> {
                TopicPartition tp = pickMirroringPartition(fault.pick());
                boolean leader = fault.kind() == FaultKind.KILL_LEADER || fault.kind() == FaultKind.TERM_LEADER;
                int broker = leader ? clusters.destinationLeader(destinationAdmin, tp) : pickFollower(destinationAdmin, tp, fault.pick());
                boolean kill = fault.kind() == FaultKind.KILL_LEADER || fault.kind() == FaultKind.KILL_FOLLOWER;
                target[0] = "destination broker " + broker + " (" + (leader ? "leader" : "follower") + " of " + tp + ")";
                history.event("fault", "#" + fault.index() + " " + (kill ? "kill -9" : "SIGTERM") + " of " + target[0]);
                LaunchedNode node = clusters.destinationBroker(broker);
                if (kill) {
                    node.kill();
                } else {
                    node.terminate();
                }
                Thread.sleep(fault.durationMs());
                node.start();
                clusters.awaitDestinationBrokerReady(broker);
                clusters.awaitDestinationFullyReplicated();
                history.event("heal", "#" + fault.index() + " destination broker " + broker + " restarted and back in sync");
                return "restarted";
            }
            case KILL_DESTINATION -> {
                target[0] = "every destination node";
                history.event("fault", "#" + fault.index() + " kill -9 of every destination node");
                List<LaunchedNode> nodes = new ArrayList<>(clusters.destinationBrokers().values());
                nodes.add(clusters.destinationController());
                for (LaunchedNode node : nodes) {
                    node.kill();
                }
                Thread.sleep(fault.durationMs());
                for (LaunchedNode node : nodes) {
                    node.start();
                }
                for (int broker : clusters.destinationBrokers().keySet()) {
                    clusters.awaitDestinationBrokerReady(broker);
                }
                clusters.awaitDestinationFullyReplicated();
                history.event("heal", "#" + fault.index() + " every destination node restarted and back in sync");
                return "restarted";
            }
            case PROXY_STALL, PROXY_DELAY -> {
                target[0] = "source proxies " + clusters.proxies().keySet();
                history.event("fault", "#" + fault.index() + " " + fault.kind() + (fault.delayMs() > 0 ? " " + fault.delayMs() + " ms" : "")
                    + " for " + fault.durationMs() / 1000.0 + " s");
                for (FaultProxy proxy : clusters.proxies().values()) {
                    if (fault.kind() == FaultKind.PROXY_STALL) {
                        proxy.stall();
                    } else {
                        proxy.delay(Duration.ofMillis(fault.delayMs()));
                    }
                }
                Thread.sleep(fault.durationMs());
                clusters.proxies().values().forEach(FaultProxy::pass);
                history.event("heal", "#" + fault.index() + " source proxies pass");
                return "healed";
            }
            case PROXY_THROTTLE -> {
                long rate = 16 * 1024L * (1 + fault.pick() % 8);
                target[0] = "source proxies " + clusters.proxies().keySet();
                history.event("fault", "#" + fault.index() + " throttle to " + rate + " bytes/s for " + fault.durationMs() / 1000.0 + " s");
                clusters.proxies().values().forEach(p -> p.throttle(rate));
                Thread.sleep(fault.durationMs());
                clusters.proxies().values().forEach(FaultProxy::pass);
                history.event("heal", "#" + fault.index() + " source proxies pass");
                return "healed";
            }
            case CORRUPT_FETCH -> {
                return corruptFetches(sourceAdmin, fault, target);
            }
            case PROXY_RESET -> {
                target[0] = "source proxies " + clusters.proxies().keySet();
                int reset = clusters.proxies().values().stream().mapToInt(FaultProxy::resetAll).sum();
                history.event("fault", "#" + fault.index() + " reset " + reset + " connection(s) of the source proxies");
                return reset + " connection(s) reset";
            }
            case PAUSE_RESUME -> {
                target[0] = "topic " + MIRRORED_TOPIC;
                command("--pause", DesiredState.PAUSED, () -> mirrors.pauseMirrorTopics(MIRROR, List.of(MIRRORED_TOPIC), List.of()).all()
                    .get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS));
                awaitStates(MIRRORED_TOPIC, PartitionState.PAUSED, COMMAND_BOUND);
                Thread.sleep(fault.durationMs());
                command("--resume", DesiredState.MIRRORING, () -> mirrors.resumeMirrorTopics(MIRROR, List.of(MIRRORED_TOPIC), List.of()).all()
                    .get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS));
                return "paused, resumed";
            }
            case STOP -> {
                // A third of the stops run with a node down: the leader of a partition being stopped, or the broker that
                // runs the mirror controller (the leader of __mirror_commands-0), killed just before the command.
                Optional<LaunchedNode> down = switch (fault.pick() % 3) {
                    case 1 -> Optional.of(clusters.destinationBroker(clusters.destinationLeader(destinationAdmin,
                        partitions(FAILOVER_TOPIC, FAILOVER_PARTITIONS).get((fault.pick() / 3) % FAILOVER_PARTITIONS))));
                    case 2 -> Optional.of(clusters.destinationBroker(clusters.destinationLeader(destinationAdmin,
                        new TopicPartition(InternalTopics.COMMANDS, 0))));
                    default -> Optional.empty();
                };
                target[0] = "topic " + FAILOVER_TOPIC + down.map(n -> ", with " + n + " killed (" + (fault.pick() % 3 == 1
                    ? "a leader of the topic" : "the mirror controller's broker") + ")").orElse("");
                if (down.isPresent()) {
                    history.event("fault", "#" + fault.index() + " kill -9 of " + down.get() + " before the stop");
                    down.get().kill();
                }
                stopRequested = true;
                long stopAtMs = history.nowMs();
                command("--stop", DesiredState.STOPPED, () -> mirrors.stopMirrorTopics(MIRROR, List.of(FAILOVER_TOPIC), List.of()).all()
                    .get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS));
                awaitStates(FAILOVER_TOPIC, PartitionState.STOPPED, COMMAND_BOUND);
                if (down.isPresent()) {
                    down.get().start();
                    clusters.awaitDestinationBrokerReady(down.get().id());
                    clusters.awaitDestinationFullyReplicated();
                    history.event("heal", "#" + fault.index() + " " + down.get() + " restarted and back in sync after the stop");
                }
                StringBuilder outcome = new StringBuilder("stopped:");
                for (MirrorPartitionDescription p : describe(FAILOVER_TOPIC).partitions()) {
                    barriers.put(new TopicPartition(FAILOVER_TOPIC, p.partition()), p.barrierOffset());
                    outcome.append(" p").append(p.partition()).append(" barrier ").append(p.barrierOffset())
                        .append(p.truncatedFromOffset() >= 0 ? " truncated [" + p.truncatedFromOffset() + ", " + p.truncatedToOffset() + ")" : "");
                }
                history.event("operator", "--stop done, " + outcome);
                Map<TopicPartition, Long> stopped = new LinkedHashMap<>();
                partitions(FAILOVER_TOPIC, FAILOVER_PARTITIONS).forEach(tp -> stopped.put(tp, barriers.get(tp)));
                workload.failOver(stopped, clusters.destinationBootstrapServers(), WRITES_AFTER_FAILOVER);
                history.event("workload", "the producers of " + FAILOVER_TOPIC + " moved to the destination and wrote " + WRITES_AFTER_FAILOVER
                    + " records to each partition there");
                moveGroup(destinationAdmin, group.stop(), stopAtMs);
                return outcome.toString();
            }
            case FAILBACK -> {
                target[0] = "topic " + FAILOVER_TOPIC + ", mirror " + FAILBACK_MIRROR + " on the source";
                history.event("operator", "on the source: --create --mirror " + FAILBACK_MIRROR + " (bootstrap.servers "
                    + clusters.destinationBootstrapServers() + "), --start --topics " + FAILOVER_TOPIC);
                retryUntil("--create --mirror " + FAILBACK_MIRROR + " on the source",
                    () -> sourceMirrors.listClusterMirrors().names().get(60, TimeUnit.SECONDS).contains(FAILBACK_MIRROR),
                    () -> sourceMirrors.createClusterMirror(FAILBACK_MIRROR, Map.of("bootstrap.servers", clusters.destinationBootstrapServers()))
                        .all().get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS));
                retryUntil("--start --topics " + FAILOVER_TOPIC + " on the source",
                    () -> describe(sourceMirrors, FAILBACK_MIRROR, FAILOVER_TOPIC) != null,
                    () -> sourceMirrors.startMirrorTopics(FAILBACK_MIRROR, List.of(FAILOVER_TOPIC), List.of()).all()
                        .get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS));
                awaitStates(sourceMirrors, FAILBACK_MIRROR, FAILOVER_TOPIC, PartitionState.MIRRORING, COMMAND_BOUND);
                failedBack = true;
                StringBuilder outcome = new StringBuilder("mirroring back:");
                for (MirrorPartitionDescription p : describe(sourceMirrors, FAILBACK_MIRROR, FAILOVER_TOPIC).partitions()) {
                    outcome.append(" p").append(p.partition()).append(p.truncatedFromOffset() >= 0
                        ? " cut [" + p.truncatedFromOffset() + ", " + p.truncatedToOffset() + ")" : " no cut");
                }
                history.event("operator", "failback started, " + outcome);
                return outcome.toString();
            }
            case CORRUPT_REPLICA_BYTE -> {
                return corruptReplicaByte(destinationAdmin, fault, target);
            }
            case SOURCE_KILL_LEADER -> {
                TopicPartition tp = partitions(MIRRORED_TOPIC, MIRRORED_PARTITIONS).get(fault.pick() % MIRRORED_PARTITIONS);
                Optional<Integer> leader = ChaosClusters.placement(sourceAdmin, tp).leader().filter(l -> l != ChaosClusters.SOURCE_CONTROLLER_ID);
                int broker = leader.orElse(2 + (fault.pick() / 7) % 2);
                target[0] = "source broker " + broker + " (" + (leader.isPresent() ? "leader of " + tp
                    : "follower of " + tp + ", whose leader is the controller") + ")";
                history.event("fault", "#" + fault.index() + " kill -9 of " + target[0]);
                LaunchedNode node = clusters.sourceNodes().get(broker);
                node.kill();
                Thread.sleep(fault.durationMs());
                node.start();
                clusters.awaitSourceBrokerReady(broker);
                clusters.awaitSourceFullyReplicated();
                history.event("heal", "#" + fault.index() + " source broker " + broker + " restarted and back in sync");
                return "restarted";
            }
            case SOURCE_UNCLEAN_ELECTION -> {
                return uncleanElection(sourceAdmin, fault, target);
            }
            default -> throw new IllegalStateException("unknown fault " + fault.kind());
        }
    }

    /**
     * The unclean election of {@link FaultKind#SOURCE_UNCLEAN_ELECTION} on {@link #UNCLEAN_PARTITION}: the follower is
     * killed and the ISR shrinks to the leader, which acknowledges the workload's writes alone for the fault's duration;
     * then the leader is killed, the follower started and elected with {@code Admin.electLeaders(UNCLEAN)}, and the old
     * leader started again (it truncates to the new leader's log). The source loses what only the old leader held.
     */
    private String uncleanElection(Admin sourceAdmin, FaultPlan.Fault fault, String[] target) throws Exception {
        TopicPartition tp = UNCLEAN_PARTITION;
        int leader = TestUtils.awaitValue(() -> ChaosClusters.placement(sourceAdmin, tp).leader(), COMMAND_BOUND, "a leader of " + tp);
        int follower = UNCLEAN_REPLICAS.stream().filter(r -> r != leader).findFirst().orElseThrow();
        LaunchedNode oldLeader = clusters.sourceNodes().get(leader);
        LaunchedNode newLeader = clusters.sourceNodes().get(follower);
        target[0] = tp + " on the source (leader broker " + leader + ", follower broker " + follower + ")";
        history.event("fault", "#" + fault.index() + " unclean election of " + target[0] + ": kill -9 of the follower");
        newLeader.kill();
        TestUtils.await(() -> ChaosClusters.isr(sourceAdmin, tp).equals(List.of(leader)), COMMAND_BOUND, "the ISR of " + tp + " to shrink to "
            + leader);
        Thread.sleep(fault.durationMs());
        long endBefore = endOffset(sourceAdmin, tp);
        history.event("fault", "#" + fault.index() + " kill -9 of the leader, broker " + leader + ", at log end " + endBefore
            + "; start of broker " + follower);
        oldLeader.kill();
        newLeader.start();
        clusters.awaitSourceBrokerReady(follower);
        retryUntil("--election-type unclean of " + tp, () -> ChaosClusters.placement(sourceAdmin, tp).leader().equals(Optional.of(follower)),
            () -> sourceAdmin.electLeaders(ElectionType.UNCLEAN, Set.of(tp)).partitions().get(30, TimeUnit.SECONDS));
        uncleanElections.put(tp, history.nowMs());
        long endAfter = endOffset(sourceAdmin, tp);
        history.event("fault", "#" + fault.index() + " broker " + follower + " elected uncleanly, log end " + endAfter + " (was " + endBefore
            + "): the source lost what the old leader held past it; starting broker " + leader);
        oldLeader.start();
        clusters.awaitSourceBrokerReady(leader);
        clusters.awaitSourceFullyReplicated();
        history.event("heal", "#" + fault.index() + " source broker " + leader + " restarted and back in sync");
        return "broker " + follower + " elected uncleanly; the source's log end went from " + endBefore + " to " + endAfter;
    }

    /**
     * {@link FaultKind#CORRUPT_FETCH}: the proxies corrupt the records of one mirrored partition in every fetch response
     * for the fault's duration. Checks {@value HistoryChecker#CORRUPT_FETCH}: the partition fails naming a corrupted
     * batch's offset, no other partition of the topic names a corruption, and it catches up once the corruption stops.
     */
    private String corruptFetches(Admin sourceAdmin, FaultPlan.Fault fault, String[] target) throws Exception {
        TopicPartition tp = partitions(MIRRORED_TOPIC, MIRRORED_PARTITIONS).get(fault.pick() % MIRRORED_PARTITIONS);
        Uuid topicId = sourceAdmin.describeTopics(Set.of(tp.topic())).allTopicNames().get(30, TimeUnit.SECONDS).get(tp.topic()).topicId();
        target[0] = "fetch responses of " + tp + " through the source proxies";
        Map<FaultProxy, Integer> before = new HashMap<>();
        clusters.proxies().values().forEach(p -> before.put(p, p.corruptedOffsets().size()));
        List<Long> corrupted = new ArrayList<>();
        history.event("fault", "#" + fault.index() + " corruption of the " + target[0] + " for " + fault.durationMs() / 1000.0 + " s");
        String named;
        try {
            clusters.proxies().values().forEach(p -> p.corruptFetches(new FetchCorruption.Target(topicId, tp.topic(), tp.partition())));
            named = TestUtils.awaitValue(() -> {
                corrupted.clear();
                before.forEach((p, n) -> corrupted.addAll(p.corruptedOffsets().subList(n, p.corruptedOffsets().size())));
                return describe(MIRRORED_TOPIC).partitions().stream().filter(p -> p.partition() == tp.partition())
                    .map(MirrorPartitionDescription::lastError).filter(e -> e != null && corrupted.stream()
                        .anyMatch(offset -> e.contains("corrupt batch at offsets " + offset + ".."))).findFirst();
            }, COMMAND_BOUND, "the partition " + tp + " to fail naming a corrupted batch");
            history.event("check", tp + " failed: " + named);
            for (MirrorPartitionDescription other : describe(MIRRORED_TOPIC).partitions()) {
                if (other.partition() != tp.partition() && other.lastError() != null && other.lastError().contains("corrupt")) {
                    history.violation(HistoryChecker.CORRUPT_FETCH, MIRRORED_TOPIC + "-" + other.partition(), "names a corruption while only "
                        + tp + " was corrupted: " + other.lastError());
                }
            }
            Thread.sleep(fault.durationMs());
        } catch (TimeoutException e) {
            history.violation(HistoryChecker.CORRUPT_FETCH, tp.toString(), "batches at offsets " + corrupted + " were corrupted in fetch "
                + "responses, but the partition did not fail naming one within " + COMMAND_BOUND.toSeconds() + " s: last error "
                + describe(tp).lastError());
            named = "not named";
        } finally {
            clusters.proxies().values().forEach(FaultProxy::stopCorrupting);
        }
        long sourceEnd = endOffset(sourceAdmin, tp);
        try (Admin destinationAdmin = clusters.destinationAdmin()) {
            TestUtils.await(() -> describe(tp).state() == PartitionState.MIRRORING
                && endOffset(destinationAdmin, tp) >= sourceEnd, COMMAND_BOUND, tp + " to mirror again and reach offset " + sourceEnd);
        } catch (TimeoutException e) {
            history.violation(HistoryChecker.CORRUPT_FETCH, tp.toString(), "did not mirror again up to offset " + sourceEnd + " within "
                + COMMAND_BOUND.toSeconds() + " s after the corruption stopped: " + describe(tp));
        }
        history.event("heal", "#" + fault.index() + " fetch responses pass unchanged; " + tp + " caught up");
        return corrupted.size() + " batch(es) corrupted, first at offset " + (corrupted.isEmpty() ? "-" : corrupted.get(0)) + "; " + named;
    }

    /**
     * Moves the group that stopped consuming on the source ({@code commits}: what it committed there) to the destination
     * and checks {@value HistoryChecker#GROUP_MOVE} on each partition of the failover topic.
     */
    private void moveGroup(Admin destinationAdmin, List<MovingGroup.Commit> commits, long stopAtMs) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> synced = destinationAdmin.listConsumerGroupOffsets(MovingGroup.GROUP)
            .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        history.event("workload", "group " + MovingGroup.GROUP + " stopped on the source after " + commits.size() + " commits; its offsets "
            + "on the destination: " + synced);
        List<TopicPartition> moved = partitions(FAILOVER_TOPIC, FAILOVER_PARTITIONS);
        Map<TopicPartition, Long> resumed = Map.of();
        if (moved.stream().allMatch(tp -> synced.get(tp) != null)) {
            try {
                resumed = MovingGroup.resumeOn(clusters.destinationBootstrapServers(), FAILOVER_TOPIC, FAILOVER_PARTITIONS);
            } catch (TimeoutException e) {
                history.violation(HistoryChecker.GROUP_MOVE, FAILOVER_TOPIC + " on the destination", e.getMessage());
                return;
            }
        }
        for (TopicPartition tp : moved) {
            long offset = Optional.ofNullable(synced.get(tp)).map(OffsetAndMetadata::offset).orElse(-1L);
            long first = offset < 0 ? -1 : MovingGroup.firstRecordFrom(clusters.destinationBootstrapServers(), tp, offset);
            HistoryChecker.groupMoveViolations(tp, commits, offset, resumed.getOrDefault(tp, -1L), first, barriers.get(tp), stopAtMs)
                .forEach(v -> history.violation(HistoryChecker.GROUP_MOVE, tp + " on the destination", v));
        }
        history.event("workload", "group " + MovingGroup.GROUP + " resumed on the destination at " + resumed);
    }

    /** A partition that is mirroring now: the failover topic's only until it is stopped. */
    private TopicPartition pickMirroringPartition(int pick) {
        List<TopicPartition> candidates = stopRequested ? partitions(MIRRORED_TOPIC, MIRRORED_PARTITIONS) : allPartitions();
        return candidates.get(pick % candidates.size());
    }

    private int pickFollower(Admin destinationAdmin, TopicPartition tp, int pick) throws Exception {
        int leader = clusters.destinationLeader(destinationAdmin, tp);
        List<Integer> followers = ChaosClusters.placement(destinationAdmin, tp).replicas().stream().filter(r -> r != leader).sorted().toList();
        return followers.get((pick / 7) % followers.size());
    }

    /**
     * Test-only fault: flips the last byte (inside the records) of a follower's first batch of a mirrored partition, in
     * its segment file. Kafka does not read it back (a follower serves nobody), so only the checker can notice.
     */
    private String corruptReplicaByte(Admin destinationAdmin, FaultPlan.Fault fault, String[] target) throws Exception {
        TopicPartition tp = partitions(MIRRORED_TOPIC, MIRRORED_PARTITIONS).get(fault.pick() % MIRRORED_PARTITIONS);
        int broker = pickFollower(destinationAdmin, tp, fault.pick());
        Path dir = clusters.destinationBroker(broker).partitionDir(tp);
        SegmentBatches.Batch batch = SegmentBatches.read(dir).stream().findFirst()
            .orElseThrow(() -> new IllegalStateException("no batch on broker " + broker + " of " + tp + " to corrupt"));
        long position = batch.position() + batch.bytes().length - 1;
        try (RandomAccessFile file = new RandomAccessFile(dir.resolve(batch.segment()).toFile(), "rw")) {
            file.seek(position);
            int value = file.read();
            file.seek(position);
            file.write(value ^ 0xFF);
        } catch (IOException e) {
            throw new IOException("corrupting " + dir.resolve(batch.segment()) + " failed", e);
        }
        target[0] = "destination broker " + broker + " (follower of " + tp + ")";
        String outcome = "flipped byte " + (batch.bytes().length - 1) + " of " + batch;
        history.event("fault", "#" + fault.index() + " TEST-ONLY corruption of " + target[0] + ": " + outcome);
        return outcome;
    }

    /** Runs an operator command until the topic's desired state is {@code desired} (a failed attempt may still be applied). */
    private void command(String name, DesiredState desired, CheckedAction action) throws Exception {
        String topic = desired == DesiredState.STOPPED ? FAILOVER_TOPIC : MIRRORED_TOPIC;
        history.event("operator", name + " --topics " + topic);
        retryUntil(name + " --topics " + topic, () -> describe(topic).desiredState() == desired, action);
    }

    /**
     * Runs an operator command again and again, as an operator would, until {@code done} (a command that failed, for
     * instance timed out, may still have been applied), or fails after {@link #COMMAND_BOUND}.
     */
    private void retryUntil(String name, Callable<Boolean> done, CheckedAction action) throws Exception {
        Callable<Boolean> checked = () -> {
            try {
                return done.call();
            } catch (Exception e) {
                return false;
            }
        };
        TestUtils.await(() -> {
            if (checked.call()) {
                return true;
            }
            try {
                action.run();
            } catch (Exception e) {
                history.event("operator", name + " failed, retrying: " + e);
            }
            return checked.call();
        }, COMMAND_BOUND, name + " to be accepted");
    }

    /** An operator command. */
    @FunctionalInterface
    private interface CheckedAction {
        void run() throws Exception;
    }

    private MirrorTopicDescription describe(String topic) throws Exception {
        return describe(mirrors, MIRROR, topic);
    }

    private MirrorPartitionDescription describe(TopicPartition tp) throws Exception {
        return describe(tp.topic()).partitions().stream().filter(p -> p.partition() == tp.partition()).findFirst()
            .orElseThrow(() -> new IllegalStateException("mirror " + MIRROR + " describes no partition " + tp));
    }

    private static MirrorTopicDescription describe(ClusterMirrorAdmin admin, String mirrorName, String topic) throws Exception {
        ClusterMirrorDescription mirror = admin.describeClusterMirrors(List.of(mirrorName)).all().get(60, TimeUnit.SECONDS).get(mirrorName);
        return mirror.topics().stream().filter(t -> t.topic().equals(topic)).findFirst()
            .orElseThrow(() -> new IllegalStateException("mirror " + mirrorName + " has no topic " + topic));
    }

    private void awaitStates(String topic, PartitionState state, Duration bound) throws Exception {
        awaitStates(mirrors, MIRROR, topic, state, bound);
    }

    private static void awaitStates(ClusterMirrorAdmin admin, String mirrorName, String topic, PartitionState state, Duration bound)
            throws Exception {
        TestUtils.await(() -> describe(admin, mirrorName, topic).partitions().stream().allMatch(p -> p.state() == state), bound,
            "every partition of " + topic + " in mirror " + mirrorName + " to be " + state);
    }

    /** Brings everything back: proxies pass, every node runs. */
    private void healAll() throws Exception {
        clusters.proxies().values().forEach(FaultProxy::pass);
        for (LaunchedNode node : clusters.sourceNodes().values()) {
            if (!node.alive()) {
                node.start();
                clusters.awaitSourceBrokerReady(node.id());
            }
        }
        for (LaunchedNode node : clusters.destinationBrokers().values()) {
            if (!node.alive()) {
                node.start();
                clusters.awaitDestinationBrokerReady(node.id());
            }
        }
        clusters.awaitDestinationFullyReplicated();
    }

    private static long endOffset(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get(30, TimeUnit.SECONDS).get(tp).offset();
    }

    /**
     * Checks {@value HistoryChecker#CONVERGENCE}: within {@link #CONVERGENCE_BOUND} every partition reaches the state its
     * topic's desired state asks for, and every mirroring one the source's end offset.
     */
    private void awaitConvergence(Admin sourceAdmin, Admin destinationAdmin) throws Exception {
        Map<TopicPartition, String> lagging = new HashMap<>();
        try {
            TestUtils.await(() -> {
                lagging.clear();
                for (String topic : mirroredTopics()) {
                    MirrorTopicDescription description = describe(topic);
                    PartitionState wanted = switch (description.desiredState()) {
                        case MIRRORING -> PartitionState.MIRRORING;
                        case PAUSED -> PartitionState.PAUSED;
                        case STOPPED -> PartitionState.STOPPED;
                    };
                    for (MirrorPartitionDescription p : description.partitions()) {
                        TopicPartition tp = new TopicPartition(topic, p.partition());
                        if (p.state() != wanted) {
                            lagging.put(tp, "state " + p.state() + " (requested " + wanted + "), last error " + p.lastError());
                        } else if (wanted == PartitionState.MIRRORING && endOffset(destinationAdmin, tp) != endOffset(sourceAdmin, tp)) {
                            lagging.put(tp, "end offset " + endOffset(destinationAdmin, tp) + ", source's " + endOffset(sourceAdmin, tp));
                        }
                    }
                }
                if (failedBack) {
                    for (MirrorPartitionDescription p : describe(sourceMirrors, FAILBACK_MIRROR, FAILOVER_TOPIC).partitions()) {
                        TopicPartition tp = new TopicPartition(FAILOVER_TOPIC, p.partition());
                        if (p.state() != PartitionState.MIRRORING) {
                            lagging.put(tp, "failback: state " + p.state() + " on the source (requested MIRRORING), last error " + p.lastError());
                        } else if (endOffset(sourceAdmin, tp) != endOffset(destinationAdmin, tp)) {
                            lagging.put(tp, "failback: source end offset " + endOffset(sourceAdmin, tp) + ", destination's "
                                + endOffset(destinationAdmin, tp));
                        }
                    }
                }
                return lagging.isEmpty();
            }, CONVERGENCE_BOUND, "every partition to reach its requested state");
            history.event("check", "every partition reached its requested state after the faults");
        } catch (TimeoutException e) {
            lagging.forEach((tp, why) -> history.violation(HistoryChecker.CONVERGENCE, tp.toString(),
                "not in its requested state " + CONVERGENCE_BOUND.toSeconds() + " s after the faults stopped: " + why));
        }
    }

    private List<PartitionFigures> finalChecks(Admin sourceAdmin, Admin destinationAdmin, List<Workload.Write> writes) throws Exception {
        List<PartitionFigures> figures = new ArrayList<>();
        for (String topic : mirroredTopics()) {
            MirrorTopicDescription description = describe(topic);
            for (MirrorPartitionDescription p : description.partitions()) {
                TopicPartition tp = new TopicPartition(topic, p.partition());
                try {
                    figures.add(finalChecks(sourceAdmin, destinationAdmin, writes, tp, description.desiredState(), p));
                } catch (Exception e) {
                    history.violation(HistoryChecker.CHECK_FAILED, tp.toString(), "the final checks failed: " + e);
                }
            }
        }
        return figures;
    }

    /** The final checks of one partition, by the state its topic was asked to reach; returns its figures. */
    private PartitionFigures finalChecks(Admin sourceAdmin, Admin destinationAdmin, List<Workload.Write> writes, TopicPartition tp,
                                         DesiredState desired, MirrorPartitionDescription p) throws Exception {
        long sourceEnd = endOffset(sourceAdmin, tp);
        long destinationEnd = endOffset(destinationAdmin, tp);
        String destination = clusters.destinationBootstrapServers();
        String source = clusters.sourceBootstrapServers();
        List<Workload.Write> sourceWrites = writes.stream().filter(w -> w.side() == Workload.Side.SOURCE).toList();
        List<Workload.Write> lostBySource = uncleanElections.containsKey(tp)
            ? checker.lostBySource(clusters.sourceBootstrapServers(), tp, sourceWrites, sourceEnd) : List.of();
        sourceWrites = sourceWrites.stream().filter(w -> !lostBySource.contains(w)).toList();
        HistoryChecker.WriteFigures writeFigures;
        long barrier = Optional.ofNullable(barriers.get(tp)).orElse(p.barrierOffset());
        if (desired != DesiredState.STOPPED) {
            checker.checkIdentity(sourceAdmin, destinationAdmin, tp, sourceEnd, true);
            writeFigures = checker.checkAckedWrites("destination", destination, source, tp, sourceWrites, Math.min(sourceEnd, destinationEnd), -1, -1);
        } else if (barrier < 0) {
            history.violation(HistoryChecker.BARRIER, tp.toString(), "stopped, but describe reports no barrier offset");
            writeFigures = checker.checkAckedWrites("destination", destination, source, tp, sourceWrites, destinationEnd, -1, -1);
        } else {
            checker.checkIdentity(sourceAdmin, destinationAdmin, tp, barrier, true);
            checker.checkBarrier(destinationAdmin, tp, barrier);
            checker.checkProducerState(destinationAdmin, tp, barrier);
            writeFigures = checker.checkAckedWrites("destination", destination, source, tp, sourceWrites, barrier, p.truncatedFromOffset(),
                p.truncatedToOffset());
        }
        writeFigures = writeFigures.withLostBySource(lostBySource.size());
        Optional<Failback> failback = Optional.empty();
        if (tp.topic().equals(FAILOVER_TOPIC) && failedBack) {
            MirrorPartitionDescription back = describe(sourceMirrors, FAILBACK_MIRROR, FAILOVER_TOPIC).partitions().stream()
                .filter(b -> b.partition() == tp.partition()).findFirst().orElseThrow();
            checker.checkFailbackIdentity(sourceAdmin, destinationAdmin, tp, destinationEnd, true);
            List<Workload.Write> destinationWrites = writes.stream().filter(w -> w.side() == Workload.Side.DESTINATION).toList();
            failback = Optional.of(new Failback(back.state(), back.truncatedFromOffset(), back.truncatedToOffset(), checker.checkAckedWrites(
                "source", source, destination, tp, destinationWrites, Math.min(sourceEnd, destinationEnd), -1, -1)));
        }
        return new PartitionFigures(tp, desired, p.state(), sourceEnd, destinationEnd, p.barrierOffset(), p.truncatedFromOffset(),
            p.truncatedToOffset(), p.lastError(), writeFigures, failback);
    }
}
