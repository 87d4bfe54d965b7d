package io.clustermirror.chaos;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.MirrorTopicsResult;
import io.clustermirror.admin.StopTransactions;
import io.clustermirror.chaos.productbug.ProductBugAgent;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testsupport.FaultProxy;
import io.clustermirror.testsupport.FetchCorruption;
import io.clustermirror.testsupport.LaunchedNode;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.RetriableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * One chaos run: starts the clusters, mirrors two topics while a workload writes to the source, applies the seeded
 * {@link FaultPlan} one fault after the other while a checker compares the destination's replicas with the source every
 * few seconds, then lets the clusters converge and checks the whole history ({@link HistoryChecker}).
 *
 * <p>Topics: {@value #MIRRORED_TOPIC} ({@value #MIRRORED_PARTITIONS} partitions) is mirrored for the whole run, with
 * pause/resume among the faults; {@value #FAILOVER_TOPIC} ({@value #FAILOVER_PARTITIONS} partitions) goes through
 * {@link FailoverCycles} back to back on a thread of its own: stopped in the destination's mirror (its producers and
 * group move there), started in the mirror {@value #FAILBACK_MIRROR} on the source, stopped there (they move back) and
 * started again in the destination's mirror. Each stop is checked against every write the side that was writable
 * acknowledged; {@value #COMPACTED_TOPIC} is compacted on both sides while it mirrors.
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
    /** The partition whose leader runs the destination's mirror controller. */
    private static final TopicPartition COMMANDS_PARTITION = new TopicPartition(InternalTopics.COMMANDS, 0);
    /**
     * The prefix of the topics {@link FaultKind#DISCOVER_TOPIC} creates on the source during the run; the mirror's
     * {@code mirror.topics.include} matches it.
     */
    static final String DISCOVERED_TOPIC_PREFIX = "chaos-discovered-";
    private static final int DISCOVERED_TOPIC_RECORDS = 200;
    /** A mirrored topic whose old segments retention deletes under the workload, on both sides (30 s, segments of 10 s). */
    static final String RETENTION_TOPIC = "chaos-retention";
    private static final TopicPartition RETENTION_PARTITION = new TopicPartition(RETENTION_TOPIC, 0);
    private static final TopicPartition UNCLEAN_PARTITION = new TopicPartition(UNCLEAN_TOPIC, 0);
    private static final List<Integer> UNCLEAN_REPLICAS = List.of(2, 3);
    /** After an unclean election, how long the destination may still hold what the source lost before the mirror follows. */
    private static final Duration UNCLEAN_FOLLOW_BOUND = Duration.ofSeconds(60);
    /**
     * A compacted topic mirrored all along: small segments and a low dirty ratio, so that both clusters' cleaners rewrite
     * it during the run, each on its own schedule; keys from a small key space, some tombstones.
     */
    static final String COMPACTED_TOPIC = "chaos-compacted";
    static final int COMPACTED_PARTITIONS = 2;
    /** The mirror on the source that copies the failover topic back from the destination. */
    static final String FAILBACK_MIRROR = "chaos-back";
    /** How long partitions may take to reach their requested state once the faults stopped. */
    static final Duration CONVERGENCE_BOUND = Duration.ofSeconds(120);
    private static final Duration COMMAND_BOUND = Duration.ofSeconds(120);
    private static final Duration CHECK_INTERVAL = Duration.ofSeconds(10);
    /**
     * How often both mirrors sync group offsets (30 s by default): a cycle's mirroring phases last seconds, and the
     * group can only resume where it left off on the other side if a sync ran in between.
     */
    static final Duration GROUP_SYNC_INTERVAL = Duration.ofSeconds(2);

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
     * @param maxCycles        at most this many failover/failback cycles ({@link Integer#MAX_VALUE}: as many as the
     *                         duration holds)
     */
    record Options(Path home, Path workDir, long seed, Duration duration, int sourceBrokers, boolean injectCorruption,
                   Optional<String> productBug, int maxCycles) {
        /** The command that replays this run. */
        String replayCommand() {
            return "bin/chaos.sh --seed " + seed + " --duration " + duration.toSeconds() + "s"
                + (sourceBrokers != 1 ? " --source-brokers " + sourceBrokers : "") + (injectCorruption ? " --inject-corruption" : "")
                + productBug.map(b -> " --inject-product-bug " + b).orElse("") + (maxCycles != Integer.MAX_VALUE ? " --cycles " + maxCycles : "");
        }

        /**
         * The JVM options every node runs with: the test-only product-bug agent ({@link ProductBugAgent}) with the bug's name,
         * if any, else none.
         */
        String nodeJvmOptions() throws IOException {
            return productBug.isEmpty() ? "" : "-javaagent:" + productBugAgent(home) + "=" + productBug.get();
        }
    }

    /**
     * The product-bug agent jar that mirror-chaos builds next to its own.
     *
     * @throws IllegalStateException naming the build to run if it is missing
     */
    static Path productBugAgent(Path home) throws IOException {
        Path target = home.resolve("mirror-chaos/target");
        try (Stream<Path> files = Files.exists(target) ? Files.list(target) : Stream.empty()) {
            return files.filter(f -> f.getFileName().toString().matches("mirror-chaos-.*-product-bug-agent\\.jar")).findFirst()
                .orElseThrow(() -> new IllegalStateException("No product-bug agent jar in " + target + ": build mirror-chaos first "
                    + "(mvn -B install -DskipTests)"));
        }
    }

    /**
     * The product bugs a run can inject ({@code --inject-product-bug}): the names {@link ProductBugAgent} knows (a
     * compile-time constant, inlined: the agent's classes are not in the runner's jar), each with the check that must name it.
     */
    static final Map<String, String> PRODUCT_BUGS = Map.of(ProductBugAgent.SKIP_PRODUCER_STATE_RESET, HistoryChecker.PRODUCER_STATE);

    /** A fault as it was applied: the plan's entry, when it really started and ended, its target and what came of it. */
    record AppliedFault(FaultPlan.Fault planned, long startedAtMs, long endedAtMs, String target, String outcome) {
    }

    /** The figures of one partition at the end of the run. */
    record PartitionFigures(TopicPartition partition, DesiredState desired, PartitionState state, long sourceEnd, long destinationEnd,
                            long barrierOffset, long truncatedFrom, long truncatedTo, String lastError, HistoryChecker.WriteFigures writes) {
    }

    /** Everything the report shows. */
    record Result(Options options, List<FaultPlan.Fault> plan, List<AppliedFault> faults, List<PartitionFigures> partitions,
                  List<FailoverCycles.Cycle> cycles, History history, long identityChecks, long batchesCompared,
                  Map<String, String> clusters, long totalWrites, Map<String, Long> extensionErrorLines) {
        boolean passed() {
            return history.violations().isEmpty();
        }
    }

    private final Options options;
    private final List<FaultPlan.Fault> plan;
    private final History history = new History();
    private final List<AppliedFault> applied = new ArrayList<>();
    private final List<FailoverCycles.Cycle> cycles = new CopyOnWriteArrayList<>();
    /** Where the failover topic is in its cycle: which side is writable, and which mirrors which. */
    private enum Phase {
        /** The destination mirrors the source (at the start, and after {@link FailoverCycles.Step#RESTART}). */
        MIRRORING,
        /** Stopped in the destination's mirror: the destination is writable. */
        FAILED_OVER,
        /** The source mirrors the destination in {@value #FAILBACK_MIRROR}. */
        FAILED_BACK,
        /** Stopped in {@value #FAILBACK_MIRROR}: the source is writable, the destination mirrors nothing. */
        RETURNED
    }

    private volatile Phase phase = Phase.MIRRORING;
    /** Since when the mirroring side of the failover topic mirrors (and syncs group offsets from) the writable one. */
    private volatile long mirroringSinceMs;
    /** The barriers of the last stop, by partition. */
    private volatile Map<TopicPartition, Long> lastBarriers = Map.of();
    /** Where the copy of the other side ends below each barrier of {@link #lastBarriers} (the stop's cut, if it cut). */
    private volatile Map<TopicPartition, Long> lastMirroredEnds = Map.of();
    /** Held by a cycle's step while it changes the phase, and by the periodic check of the failover topic. */
    private final ReentrantReadWriteLock cycleLock = new ReentrantReadWriteLock();
    /**
     * Held while a fault of the plan is applied and healed, and by a stop under fire from before its command until its
     * killed leader is back: the two never take nodes down at once. Taken before {@link #cycleLock}.
     */
    private final ReentrantLock faultLock = new ReentrantLock();
    /** How many stops came under fire so far. */
    private int stopsUnderFire;
    /** The cycle step under way, named when a step fails (the cycles' thread alone uses it). */
    private FailoverCycles.Step currentStep;
    private volatile boolean faultsOver;
    /** Partitions of the source that had an unclean election, with the time of the last one (run clock). */
    private final Map<TopicPartition, Long> uncleanElections = new ConcurrentHashMap<>();
    /** The topics {@link FaultKind#DISCOVER_TOPIC} created and the mirror picked up, in order. */
    private final List<String> discoveredTopics = new CopyOnWriteArrayList<>();
    private ChaosClusters clusters;
    private ClusterMirrorAdmin mirrors;
    private ClusterMirrorAdmin sourceMirrors;
    private Admin sourceAdmin;
    private Admin destinationAdmin;
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

    /**
     * The topics the mirror {@value #MIRROR} was started with: {@value #UNCLEAN_TOPIC} too with a 3-broker source.
     */
    private List<String> startedTopics() {
        return options.sourceBrokers() == 3 ? List.of(MIRRORED_TOPIC, FAILOVER_TOPIC, RETENTION_TOPIC, COMPACTED_TOPIC, UNCLEAN_TOPIC)
            : List.of(MIRRORED_TOPIC, FAILOVER_TOPIC, RETENTION_TOPIC, COMPACTED_TOPIC);
    }

    /** The topics the mirror {@value #MIRROR} mirrors now: those it was started with and those it discovered. */
    private List<String> mirroredTopics() {
        List<String> topics = new ArrayList<>(startedTopics());
        topics.addAll(discoveredTopics);
        return topics;
    }

    /** The partitions written on the source for the whole run (and recorded). */
    private List<TopicPartition> fixedPartitions() {
        List<TopicPartition> fixed = new ArrayList<>(partitions(MIRRORED_TOPIC, MIRRORED_PARTITIONS));
        fixed.add(RETENTION_PARTITION);
        if (options.sourceBrokers() == 3) {
            fixed.add(UNCLEAN_PARTITION);
        }
        return fixed;
    }

    private List<TopicPartition> allPartitions() {
        List<TopicPartition> all = new ArrayList<>(fixedPartitions());
        all.addAll(partitions(FAILOVER_TOPIC, FAILOVER_PARTITIONS));
        all.addAll(partitions(COMPACTED_TOPIC, COMPACTED_PARTITIONS));
        discoveredTopics.forEach(topic -> all.add(new TopicPartition(topic, 0)));
        return all;
    }

    /** Runs everything and returns the result; violations are in it, not thrown. */
    Result run() throws Exception {
        log.info("Chaos run, seed {}, faults for {}; plan:\n{}", options.seed(), options.duration(), FaultPlan.table(plan));
        clusters = ChaosClusters.start(options.home(), options.workDir(), options.sourceBrokers(), options.nodeJvmOptions());
        checker = new HistoryChecker(clusters, history);
        try (Admin sourceClusterAdmin = clusters.sourceAdmin();
             Admin destinationClusterAdmin = clusters.destinationAdmin();
             ClusterMirrorAdmin mirrorAdmin = ClusterMirrorAdmin.create(mirrorAdminProperties(clusters.destinationBootstrapServers()));
             ClusterMirrorAdmin sourceMirrorAdmin = ClusterMirrorAdmin.create(mirrorAdminProperties(clusters.sourceBootstrapServers()))) {
            mirrors = mirrorAdmin;
            sourceMirrors = sourceMirrorAdmin;
            sourceAdmin = sourceClusterAdmin;
            destinationAdmin = destinationClusterAdmin;
            short rf = (short) Math.min(3, options.sourceBrokers());
            List<NewTopic> topics = new ArrayList<>(List.of(new NewTopic(MIRRORED_TOPIC, MIRRORED_PARTITIONS, rf),
                new NewTopic(FAILOVER_TOPIC, FAILOVER_PARTITIONS, rf),
                new NewTopic(RETENTION_TOPIC, 1, rf).configs(Map.of("retention.ms", "30000", "segment.ms", "10000")),
                new NewTopic(COMPACTED_TOPIC, COMPACTED_PARTITIONS, rf).configs(Map.of("cleanup.policy", "compact", "segment.ms", "5000",
                    "segment.bytes", "1048576", "min.cleanable.dirty.ratio", "0.01", "delete.retention.ms", "10000"))));
            if (options.sourceBrokers() == 3) {
                // Unclean elections are the Admin call's alone: unclean.leader.election.enable stays false, so that the
                // controller does not elect the returning follower by itself first.
                topics.add(new NewTopic(UNCLEAN_TOPIC, Map.of(0, UNCLEAN_REPLICAS)).configs(Map.of("min.insync.replicas", "1")));
            }
            sourceAdmin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
            history.event("operator", "--create --mirror " + MIRROR + " (bootstrap.servers " + clusters.proxiedSourceBootstrapServers() + ")");
            mirrors.createClusterMirror(MIRROR, clusters.mirrorConfig(Map.of(MirrorConfig.METADATA_REFRESH_INTERVAL_MS,
                    String.valueOf(GROUP_SYNC_INTERVAL.toMillis()), MirrorConfig.TOPICS_INCLUDE, DISCOVERED_TOPIC_PREFIX + ".*")))
                .all().get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS);
            history.event("operator", "--start --topics " + String.join(",", startedTopics()));
            mirrors.startMirrorTopics(MIRROR, startedTopics(), List.of()).all().get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS);
            history.startClock();
            workload = new Workload(clusters.sourceBootstrapServers(), clusters.destinationBootstrapServers(), fixedPartitions(),
                List.of(UNCLEAN_PARTITION), partitions(FAILOVER_TOPIC, FAILOVER_PARTITIONS), partitions(COMPACTED_TOPIC, COMPACTED_PARTITIONS),
                options.seed(), history);
            workload.start();
            group = new MovingGroup(FAILOVER_TOPIC, history);
            group.start(Workload.Side.SOURCE, clusters.sourceBootstrapServers());
            Thread checks = new Thread(this::checkWhileFaulting, "chaos-checker");
            checks.setDaemon(true);
            checks.start();
            Thread cycling = new Thread(this::runCycles, "chaos-cycles");
            cycling.setDaemon(true);
            cycling.start();
            try {
                applyPlan();
            } finally {
                // The cycle under way ends (the last one starts before the duration is over), then the faults are over.
                cycling.join(TimeUnit.MINUTES.toMillis(15));
                faultsOver = true;
                healAll();
                group.stop();
                workload.close();
                checks.join(TimeUnit.MINUTES.toMillis(2));
            }
            history.event("phase", "faults over; the workload stopped after " + workload.writes().size() + " writes");
            history.event("phase", cycles.size() + " failover/failback cycle(s) completed");
            awaitConvergence();
            List<PartitionFigures> figures = finalChecks(workload.writes());
            Map<String, Long> extensionErrors = checker.checkExtensionLogs();
            Map<String, String> clusterInfo = new LinkedHashMap<>();
            clusterInfo.put("source", options.sourceBrokers() + " broker(s), Kafka 4.3.1 with the Cluster Mirror launcher (no mirror of "
                + "its own until failback), client listener through fault proxies " + clusters.proxiedSourceBootstrapServers());
            clusterInfo.put("destination", ChaosClusters.DESTINATION_BROKERS + " brokers + 1 dedicated controller, Cluster Mirror launcher, RF 3, "
                + "min.insync.replicas=2");
            clusterInfo.put("workDir", options.workDir().toString());
            return new Result(options, plan, List.copyOf(applied), figures, List.copyOf(cycles), history, checker.identityChecks(),
                checker.batchesCompared(),
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
    private void checkWhileFaulting() {
        while (!faultsOver) {
            for (TopicPartition tp : allPartitions()) {
                try {
                    Long elected = uncleanElections.get(tp);
                    if (elected != null && history.nowMs() - elected < UNCLEAN_FOLLOW_BOUND.toMillis()) {
                        continue; // the destination may still hold what the source lost; checked again once the bound passed
                    }
                    if (tp.topic().equals(FAILOVER_TOPIC)) {
                        checkFailoverIdentity(tp);
                    } else {
                        checker.checkIdentity(sourceAdmin, destinationAdmin, tp, Long.MAX_VALUE, false);
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

    /**
     * The periodic {@value HistoryChecker#IDENTITY} check of a failover partition, by its phase (no step of a cycle
     * changes it meanwhile): the mirroring side is a prefix of the writable one, up to the barrier once stopped.
     */
    private void checkFailoverIdentity(TopicPartition tp) throws Exception {
        cycleLock.readLock().lock();
        try {
            long mirroredEnd = lastMirroredEnds.getOrDefault(tp, Long.MAX_VALUE);
            switch (phase) {
                case MIRRORING -> checker.checkIdentity(sourceAdmin, destinationAdmin, tp, Long.MAX_VALUE, false);
                case FAILED_OVER -> checker.checkIdentity(sourceAdmin, destinationAdmin, tp, mirroredEnd, false);
                case FAILED_BACK -> checker.checkFailbackIdentity(sourceAdmin, destinationAdmin, tp, Long.MAX_VALUE, false);
                case RETURNED -> checker.checkFailbackIdentity(sourceAdmin, destinationAdmin, tp, mirroredEnd, false);
                default -> throw new IllegalStateException("unknown phase " + phase);
            }
        } finally {
            cycleLock.readLock().unlock();
        }
    }

    /**
     * Applies the plan in order. Faults wait for the one before to heal, so a plan runs late: random faults still
     * unstarted when the duration is over are left out (the report says how many) instead of stretching the run by
     * the delay they piled up. An injected fault ({@link FaultKind#random} false) is always applied: a run asked for it.
     */
    private void applyPlan() throws Exception {
        int leftOut = 0;
        for (FaultPlan.Fault fault : plan) {
            if (fault.kind().random && history.nowMs() >= options.duration().toMillis()) {
                leftOut++;
                continue;
            }
            long wait = fault.atMs() - history.nowMs();
            if (wait > 0) {
                Thread.sleep(wait);
            }
            long started = history.nowMs();
            String[] target = {"-"};
            String outcome;
            faultLock.lock();
            try {
                outcome = apply(fault, target);
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
            } finally {
                faultLock.unlock();
            }
            applied.add(new AppliedFault(fault, started, history.nowMs(), target[0], outcome));
        }
        if (leftOut > 0) {
            history.event("phase", leftOut + " of the " + plan.size() + " planned faults not applied: the duration was over before their turn");
        }
        long rest = options.duration().toMillis() - history.nowMs();
        if (rest > 0) {
            Thread.sleep(rest);
        }
    }

    /** Applies and heals one fault; returns what came of it and puts the resolved target into {@code target[0]}. */
    private String apply(FaultPlan.Fault fault, String[] target) throws Exception {
        switch (fault.kind()) {
            case KILL_LEADER, KILL_FOLLOWER, TERM_LEADER, TERM_FOLLOWER, KILL_MIRROR_CONTROLLER -> {
                TopicPartition tp = fault.kind() == FaultKind.KILL_MIRROR_CONTROLLER ? COMMANDS_PARTITION : pickMirroringPartition(fault.pick());
                boolean leader = fault.kind() != FaultKind.KILL_FOLLOWER && fault.kind() != FaultKind.TERM_FOLLOWER;
                int broker = leader ? clusters.destinationLeader(destinationAdmin, tp) : pickFollower(tp, fault.pick());
                boolean kill = fault.kind() != FaultKind.TERM_LEADER && fault.kind() != FaultKind.TERM_FOLLOWER;
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
            case KILL_KRAFT_CONTROLLER -> {
                LaunchedNode controller = clusters.destinationController();
                target[0] = "destination KRaft controller " + controller.id();
                history.event("fault", "#" + fault.index() + " kill -9 of the " + target[0]);
                controller.kill();
                Thread.sleep(fault.durationMs());
                controller.start();
                TestUtils.await(() -> destinationAdmin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS).leaderId() == controller.id(),
                    ChaosClusters.START_TIMEOUT, "the restarted " + target[0] + " to lead the metadata quorum");
                clusters.awaitDestinationFullyReplicated();
                history.event("heal", "#" + fault.index() + " " + target[0] + " restarted and leading the quorum");
                return "restarted";
            }
            case MOVE_LEADER -> {
                return moveLeader(fault, target, destinationAdmin, "destination", pickMirroringPartition(fault.pick()));
            }
            case SOURCE_MOVE_LEADER -> {
                return moveLeader(fault, target, sourceAdmin, "source", partitions(MIRRORED_TOPIC, MIRRORED_PARTITIONS)
                    .get(fault.pick() % MIRRORED_PARTITIONS));
            }
            case DISCOVER_TOPIC -> {
                return discoverTopic(fault, target);
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
                return corruptFetches(fault, target);
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
            case CORRUPT_REPLICA_BYTE -> {
                return corruptReplicaByte(fault, target);
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
                return uncleanElection(fault, target);
            }
            default -> throw new IllegalStateException("unknown fault " + fault.kind());
        }
    }

    /**
     * {@link FaultKind#MOVE_LEADER} and {@link FaultKind#SOURCE_MOVE_LEADER}: another replica of {@code tp} becomes the
     * first of its assignment (the same replicas, reordered: nothing is copied) and is elected as the preferred leader,
     * while the old leader stays up.
     */
    private String moveLeader(FaultPlan.Fault fault, String[] target, Admin admin, String cluster, TopicPartition tp) throws Exception {
        ChaosClusters.Placement placement = ChaosClusters.placement(admin, tp);
        int leader = placement.leader().orElseThrow(() -> new IllegalStateException(tp + " has no leader on the " + cluster));
        int next = pickOtherReplica(placement.replicas(), leader, fault.pick());
        List<Integer> order = new ArrayList<>(List.of(next));
        placement.replicas().stream().filter(r -> r != next).forEach(order::add);
        target[0] = tp + " on the " + cluster + " (leader broker " + leader + " to broker " + next + ")";
        history.event("fault", "#" + fault.index() + " leader move of " + target[0] + ": replicas reordered to " + order);
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(order)))).all().get(30, TimeUnit.SECONDS);
        TestUtils.await(() -> admin.listPartitionReassignments(Set.of(tp)).reassignments().get(30, TimeUnit.SECONDS).isEmpty()
            && ChaosClusters.placement(admin, tp).replicas().equals(order), COMMAND_BOUND, "the reassignment of " + target[0] + " to complete");
        retryUntil("--election-type preferred of " + tp + " on the " + cluster,
            () -> ChaosClusters.placement(admin, tp).leader().equals(Optional.of(next)),
            () -> admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get(30, TimeUnit.SECONDS));
        history.event("heal", "#" + fault.index() + " broker " + next + " leads " + tp + " on the " + cluster);
        return "broker " + next + " leads, broker " + leader + " follows";
    }

    /**
     * {@link FaultKind#DISCOVER_TOPIC}: a new source topic matching the mirror's {@code mirror.topics.include}, with
     * records written and recorded; the mirror must start it by itself and copy it within {@link #COMMAND_BOUND}, else
     * {@value HistoryChecker#CONVERGENCE} names it. From then on it is checked like the other mirrored topics.
     */
    private String discoverTopic(FaultPlan.Fault fault, String[] target) throws Exception {
        String topic = DISCOVERED_TOPIC_PREFIX + fault.index();
        TopicPartition tp = new TopicPartition(topic, 0);
        target[0] = "topic " + topic + " on the source";
        history.event("fault", "#" + fault.index() + " new source topic " + topic + " (matches " + MirrorConfig.TOPICS_INCLUDE + ")");
        sourceAdmin.createTopics(List.of(new NewTopic(topic, 1, (short) Math.min(3, options.sourceBrokers())))).all().get(60, TimeUnit.SECONDS);
        workload.writeRecords(tp, DISCOVERED_TOPIC_RECORDS);
        long sourceEnd = endOffset(sourceAdmin, tp);
        long started = history.nowMs();
        try {
            TestUtils.await(() -> describe(tp).state() == PartitionState.MIRRORING && endOffset(destinationAdmin, tp) >= sourceEnd, COMMAND_BOUND,
                topic + " to be discovered and mirrored up to offset " + sourceEnd);
        } catch (TimeoutException e) {
            history.violation(HistoryChecker.CONVERGENCE, tp.toString(), "a new source topic matching " + MirrorConfig.TOPICS_INCLUDE
                + " was not mirrored up to offset " + sourceEnd + " within " + COMMAND_BOUND.toSeconds() + " s: " + e.getMessage());
        }
        discoveredTopics.add(topic);
        history.event("heal", "#" + fault.index() + " " + topic + " discovered and mirrored up to offset " + sourceEnd);
        return DISCOVERED_TOPIC_RECORDS + " record(s) written, mirrored " + (history.nowMs() - started) / 1000.0 + " s after the last write";
    }

    /**
     * The unclean election of {@link FaultKind#SOURCE_UNCLEAN_ELECTION} on {@link #UNCLEAN_PARTITION}: the follower is
     * killed and the ISR shrinks to the leader, which acknowledges the workload's writes alone for the fault's duration;
     * then the leader is killed, the follower started and elected with {@code Admin.electLeaders(UNCLEAN)}, and the old
     * leader started again (it truncates to the new leader's log). The source loses what only the old leader held.
     */
    private String uncleanElection(FaultPlan.Fault fault, String[] target) throws Exception {
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
    private String corruptFetches(FaultPlan.Fault fault, String[] target) throws Exception {
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
        try {
            TestUtils.await(() -> describe(tp).state() == PartitionState.MIRRORING
                && endOffset(destinationAdmin, tp) >= sourceEnd, COMMAND_BOUND, tp + " to mirror again and reach offset " + sourceEnd);
        } catch (TimeoutException e) {
            history.violation(HistoryChecker.CORRUPT_FETCH, tp.toString(), "did not mirror again up to offset " + sourceEnd + " within "
                + COMMAND_BOUND.toSeconds() + " s after the corruption stopped: " + describe(tp));
        }
        history.event("heal", "#" + fault.index() + " fetch responses pass unchanged; " + tp + " caught up");
        return corrupted.size() + " batch(es) corrupted, first at offset " + (corrupted.isEmpty() ? "-" : corrupted.get(0)) + "; " + named;
    }

    /** A partition mirrored now or later: the failover topic's may be stopped, its destination replicas are still there. */
    private TopicPartition pickMirroringPartition(int pick) {
        List<TopicPartition> candidates = allPartitions();
        return candidates.get(pick % candidates.size());
    }

    private int pickFollower(TopicPartition tp, int pick) throws Exception {
        return pickOtherReplica(ChaosClusters.placement(destinationAdmin, tp).replicas(), clusters.destinationLeader(destinationAdmin, tp), pick);
    }

    /** The replica a fault's seeded {@code pick} selects among {@code replicas} other than {@code leader}. */
    private static int pickOtherReplica(List<Integer> replicas, int leader, int pick) {
        List<Integer> others = replicas.stream().filter(r -> r != leader).sorted().toList();
        return others.get((pick / 7) % others.size());
    }

    /**
     * Test-only fault: flips the last byte (inside the records) of a follower's first batch of a mirrored partition, in
     * its segment file. Kafka does not read it back (a follower serves nobody), so only the checker can notice.
     */
    private String corruptReplicaByte(FaultPlan.Fault fault, String[] target) throws Exception {
        TopicPartition tp = partitions(MIRRORED_TOPIC, MIRRORED_PARTITIONS).get(fault.pick() % MIRRORED_PARTITIONS);
        int broker = pickFollower(tp, fault.pick());
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

    /**
     * Runs an operator command on {@value #MIRRORED_TOPIC} until its desired state is {@code desired} (a failed attempt may
     * still be applied).
     */
    private void command(String name, DesiredState desired, CheckedAction action) throws Exception {
        history.event("operator", name + " --topics " + MIRRORED_TOPIC);
        retryUntil(name + " --topics " + MIRRORED_TOPIC, () -> describe(MIRRORED_TOPIC).desiredState() == desired, action);
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
        if (!clusters.destinationController().alive()) {
            clusters.destinationController().start();
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
     * The operator's loop ({@link FailoverCycles}): whole cycles back to back, with seeded pauses, until the duration is
     * over or {@link Options#maxCycles()} cycles ran. A step that fails is a violation and ends the loop (the topic's
     * state is then unknown).
     */
    private void runCycles() {
        FailoverCycles draws = new FailoverCycles(options.seed());
        try {
            Thread.sleep(FailoverCycles.FIRST_CYCLE.toMillis());
            while (cycles.size() < options.maxCycles() && history.nowMs() < options.duration().toMillis()) {
                long started = history.nowMs();
                int index = cycles.size() + 1;
                history.event("cycle", "#" + index + " starts");
                List<FailoverCycles.StepFigures> steps = new ArrayList<>();
                for (FailoverCycles.Step step : FailoverCycles.Step.values()) {
                    currentStep = step;
                    long pause = draws.nextPauseMs();
                    if (step.stop) {
                        // As an operator would, let the mirror sync group offsets at least twice before the group moves:
                        // a side that was cut holds the group's stale commits from before the cut until a sync replaces them.
                        pause = Math.max(pause, mirroringSinceMs + 2 * GROUP_SYNC_INTERVAL.toMillis() - history.nowMs());
                    }
                    Optional<FailoverCycles.UnderFire> underFire = step == FailoverCycles.Step.FAILOVER
                        ? draws.nextStopUnderFire(stopsUnderFire == 0) : Optional.empty();
                    boolean planned = step.stop && underFire.isEmpty() && draws.nextStopPlanned();
                    boolean consistent = step.stop && !planned && draws.nextStopConsistent();
                    Thread.sleep(pause);
                    steps.add(step(step, planned, consistent, underFire));
                }
                cycles.add(new FailoverCycles.Cycle(index, started, history.nowMs(), List.copyOf(steps)));
                history.event("cycle", "#" + index + " done in " + (history.nowMs() - started) / 1000.0 + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (TimeoutException e) {
            // A client call's timeout has no message: the exception itself and the step say what timed out.
            history.violation(HistoryChecker.CONVERGENCE, FAILOVER_TOPIC, "cycle #" + (cycles.size() + 1) + ", step " + currentStep + ": " + e);
        } catch (Exception e) {
            history.violation(HistoryChecker.CHECK_FAILED, FAILOVER_TOPIC, "cycle #" + (cycles.size() + 1) + ", step " + currentStep
                + " could not be carried out: " + e);
        }
    }

    private ClusterMirrorAdmin mirrorsOn(Workload.Side side) {
        return side == Workload.Side.SOURCE ? sourceMirrors : mirrors;
    }

    private static String mirrorOn(Workload.Side side) {
        return side == Workload.Side.SOURCE ? FAILBACK_MIRROR : MIRROR;
    }

    private Admin adminOf(Workload.Side side) {
        return side == Workload.Side.SOURCE ? sourceAdmin : destinationAdmin;
    }

    private String bootstrapOf(Workload.Side side) {
        return side == Workload.Side.SOURCE ? clusters.sourceBootstrapServers() : clusters.destinationBootstrapServers();
    }

    /**
     * One step of a cycle: the command on the failover topic in the mirror of the step's side, run until every
     * partition reached its state, then the moves and checks that follow it.
     */
    private FailoverCycles.StepFigures step(FailoverCycles.Step step, boolean planned, boolean consistent,
                                            Optional<FailoverCycles.UnderFire> underFire) throws Exception {
        if (underFire.isEmpty()) {
            return commandStep(step, planned, consistent, underFire);
        }
        faultLock.lock(); // no fault of the plan takes a node down meanwhile
        try {
            stopsUnderFire++;
            return commandStep(step, planned, consistent, underFire);
        } finally {
            faultLock.unlock();
        }
    }

    /** {@link #step}, with the fault lock held for a stop under fire. */
    private FailoverCycles.StepFigures commandStep(FailoverCycles.Step step, boolean planned, boolean consistent,
                                                   Optional<FailoverCycles.UnderFire> underFire) throws Exception {
        ClusterMirrorAdmin admin = mirrorsOn(step.side);
        String mirror = mirrorOn(step.side);
        String name = (step.side == Workload.Side.SOURCE ? "on the source: " : "")
            + (step.stop ? (planned ? "--stop --planned" : consistent ? "--stop --consistent" : "--stop")
            : "--start --discard-local-writes") + " --mirror " + mirror + " --topics " + FAILOVER_TOPIC;
        if (planned) {
            // A planned failover: the operator stops the producers first (each finishes its batch or transaction).
            workload.parkFailover();
            history.event("workload", "the producers of " + FAILOVER_TOPIC + " stopped on the " + step.side.other().label()
                + " before a planned stop");
        }
        long started = history.nowMs();
        List<FailoverCycles.PartitionCut> cuts;
        Map<TopicPartition, Long> previousBarriers = lastBarriers;
        java.util.concurrent.atomic.AtomicReference<StopTransactions> consistentCut = new java.util.concurrent.atomic.AtomicReference<>();
        cycleLock.writeLock().lock();
        try {
            if (step == FailoverCycles.Step.FAILBACK) {
                retryUntil("--create --mirror " + FAILBACK_MIRROR + " on the source",
                    () -> sourceMirrors.listClusterMirrors().names().get(60, TimeUnit.SECONDS).contains(FAILBACK_MIRROR),
                    () -> sourceMirrors.createClusterMirror(FAILBACK_MIRROR, Map.of("bootstrap.servers", clusters.destinationBootstrapServers(),
                            MirrorConfig.METADATA_REFRESH_INTERVAL_MS, String.valueOf(GROUP_SYNC_INTERVAL.toMillis())))
                        .all().get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS));
            }
            Map<TopicPartition, Long> stableBefore = underFire.isPresent() ? lastStableOffsets(adminOf(step.side)) : Map.of();
            history.event("operator", name);
            DesiredState desired = step.stop ? DesiredState.STOPPED : DesiredState.MIRRORING;
            // A start is given --discard-local-writes: what the side wrote after the other side's barrier (lost at that
            // stop already) is cut, as an operator who fails back after an unplanned failover does.
            retryUntil(name, () -> describe(admin, mirror, FAILOVER_TOPIC).desiredState() == desired, () -> {
                MirrorTopicsResult result = step.stop
                    ? admin.stopMirrorTopics(mirror, List.of(FAILOVER_TOPIC), List.of(), new MirrorTopicsOptions().planned(planned)
                        .consistent(consistent))
                    : admin.startMirrorTopics(mirror, List.of(FAILOVER_TOPIC), List.of(), new MirrorTopicsOptions().discardLocalWrites(true));
                result.all().get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS);
                if (consistent) {
                    consistentCut.set(result.consistentCut().get(COMMAND_BOUND.toSeconds(), TimeUnit.SECONDS));
                }
            });
            if (consistent) {
                StopTransactions cut = consistentCut.get();
                history.event("operator", name + ": the source's transaction logs were " + (cut.sourceLogCurrent() ? "" : "not ")
                    + "read past the analysis" + (cut.limits().isEmpty() ? "" : "; not seen: " + cut.limits()));
            }
            if (underFire.isPresent()) {
                fireAtTheStop(underFire.get());
            }
            awaitStates(admin, mirror, FAILOVER_TOPIC, step.stop ? PartitionState.STOPPED : PartitionState.MIRRORING, COMMAND_BOUND);
            cuts = describe(admin, mirror, FAILOVER_TOPIC).partitions().stream().map(p -> FailoverCycles.PartitionCut.reported(p.partition(),
                step.stop, p.barrierOffset(), p.truncatedFromOffset(), p.truncatedToOffset(),
                previousBarriers.getOrDefault(new TopicPartition(FAILOVER_TOPIC, p.partition()), -1L))).toList();
            checkCutAtOrAboveTheStableOffsets(cuts, stableBefore, Optional.ofNullable(consistentCut.get()));
            phase = switch (step) {
                case FAILOVER -> Phase.FAILED_OVER;
                case FAILBACK -> Phase.FAILED_BACK;
                case RETURN -> Phase.RETURNED;
                case RESTART -> Phase.MIRRORING;
            };
            if (!step.stop) {
                mirroringSinceMs = history.nowMs();
            } else {
                Map<TopicPartition, Long> barriers = new LinkedHashMap<>();
                Map<TopicPartition, Long> mirroredEnds = new LinkedHashMap<>();
                cuts.forEach(c -> barriers.put(new TopicPartition(FAILOVER_TOPIC, c.partition()), c.barrier()));
                cuts.forEach(c -> mirroredEnds.put(new TopicPartition(FAILOVER_TOPIC, c.partition()), c.mirroredEnd()));
                lastBarriers = Map.copyOf(barriers);
                lastMirroredEnds = Map.copyOf(mirroredEnds);
            }
        } finally {
            cycleLock.writeLock().unlock();
        }
        long took = history.nowMs() - started;
        history.event("operator", name + " done in " + took / 1000.0 + " s: " + cuts.stream().map(c -> "p" + c.partition()
            + (c.barrier() >= 0 ? " barrier " + c.barrier() : "") + (c.truncatedFrom() >= 0 ? " cut [" + c.truncatedFrom() + ", "
            + c.truncatedTo() + ")" : " no cut")).toList());
        long[] splits = {0};
        // A consistent stop keeps every transaction whole that it could know of: all of them while the mirror had read the
        // source's transaction log past its analysis (the analysis waits for that while the source answers).
        boolean keepsWhole = planned || consistent && consistentCut.get() != null && consistentCut.get().sourceLogCurrent();
        HistoryChecker.WriteFigures writes = step.stop ? afterStop(step.side, cuts, started, keepsWhole, splits)
            : afterStart(step.side, previousBarriers);
        if (planned) {
            checkPlannedStop(step.side, cuts, writes);
        }
        return new FailoverCycles.StepFigures(step, planned, consistent, started, took, cuts, writes, splits[0]);
    }

    /** The last stable offset of each failover partition on a side: what read_committed consumers may read there now. */
    private static Map<TopicPartition, Long> lastStableOffsets(Admin admin) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
        partitions(FAILOVER_TOPIC, FAILOVER_PARTITIONS).forEach(tp -> latest.put(tp, OffsetSpec.latest()));
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get(30, TimeUnit.SECONDS)
            .forEach((tp, info) -> offsets.put(tp, info.offset()));
        return offsets;
    }

    /**
     * A stop under fire: the destination leader of the chosen failover partition is killed while the stop runs, a little
     * after its command was recorded, and started again a few seconds later.
     */
    private void fireAtTheStop(FailoverCycles.UnderFire fire) throws Exception {
        Thread.sleep(fire.afterMs());
        TopicPartition tp = new TopicPartition(FAILOVER_TOPIC, fire.partition());
        int broker = clusters.destinationLeader(destinationAdmin, tp);
        history.event("fault", "stop under fire: kill -9 of destination broker " + broker + " (leader of " + tp + ") " + fire.afterMs()
            + " ms after the stop command, started again after " + fire.downMs() + " ms");
        LaunchedNode node = clusters.destinationBroker(broker);
        node.kill();
        Thread.sleep(fire.downMs());
        node.start();
        clusters.awaitDestinationBrokerReady(broker);
        history.event("heal", "stop under fire: destination broker " + broker + " restarted");
    }

    /**
     * {@value HistoryChecker#BARRIER}: a stop never cuts below the last stable offset its side had before the command (all
     * below it is committed, or not in a transaction), whatever befell its leaders meanwhile; a consistent stop never below
     * the cut its analysis reported ({@code consistent}), which removes split transactions below that offset on purpose.
     */
    private void checkCutAtOrAboveTheStableOffsets(List<FailoverCycles.PartitionCut> cuts, Map<TopicPartition, Long> stableBefore,
                                                   Optional<StopTransactions> consistent) {
        for (FailoverCycles.PartitionCut cut : cuts) {
            TopicPartition tp = new TopicPartition(FAILOVER_TOPIC, cut.partition());
            Long stable = stableBefore.get(tp);
            if (stable == null) {
                continue;
            }
            Optional<StopTransactions.ConsistentCut> analysed = consistent.flatMap(t -> t.cuts().stream()
                .filter(c -> c.topic().equals(tp.topic()) && c.partition() == tp.partition()).findFirst());
            long floor = analysed.map(c -> Math.min(stable, c.offset())).orElse(stable);
            if (cut.mirroredEnd() < floor) {
                history.violation(HistoryChecker.BARRIER, tp + " on the destination", "the stop under fire cut at " + cut.mirroredEnd()
                    + ", below " + (analysed.isPresent() ? "its consistent cut " + floor + " and " : "") + "the last stable offset " + stable
                    + " read before the command: committed records [" + cut.mirroredEnd() + ", " + floor + ") were cut");
            }
        }
    }

    /**
     * What a planned stop promises beyond an unplanned one ({@value HistoryChecker#ACKED_WRITES}): with the producers
     * stopped first, it waited until the side made writable held everything, so it cut nothing and every acknowledged
     * write of the side left is on the side made writable.
     */
    private void checkPlannedStop(Workload.Side writable, List<FailoverCycles.PartitionCut> cuts, HistoryChecker.WriteFigures writes) {
        for (FailoverCycles.PartitionCut cut : cuts) {
            if (cut.truncatedFrom() >= 0) {
                history.violation(HistoryChecker.ACKED_WRITES, FAILOVER_TOPIC + "-" + cut.partition() + " on the " + writable.label(),
                    "a planned stop cut [" + cut.truncatedFrom() + ", " + cut.truncatedTo() + ") although the producers had stopped first");
            }
        }
        long lost = writes.lostInTruncatedRange() + writes.lostBeyondMirroredEnd();
        if (lost > 0) {
            history.violation(HistoryChecker.ACKED_WRITES, FAILOVER_TOPIC + " on the " + writable.label(), "a planned stop lost " + lost
                + " of " + writes.acked() + " acknowledged writes (" + writes.lostInTruncatedRange() + " in a truncated range, "
                + writes.lostBeyondMirroredEnd() + " beyond the mirrored end) although the producers had stopped first");
        }
    }

    /**
     * After a stop that made {@code writable} writable: producers and group move there; then every partition is checked
     * ({@value HistoryChecker#IDENTITY} up to the barrier, {@value HistoryChecker#BARRIER},
     * {@value HistoryChecker#PRODUCER_STATE}, and {@value HistoryChecker#ACKED_WRITES} for the writes the other side
     * acknowledged since the producers last moved). Returns the writes' figures, summed over the partitions.
     */
    /**
     * @param keepsTransactionsWhole the stop was planned or consistent: a committed transaction it splits is a violation
     * @param splits                 receives the number of committed transactions split
     */
    private HistoryChecker.WriteFigures afterStop(Workload.Side writable, List<FailoverCycles.PartitionCut> cuts, long stopAtMs,
                                                  boolean keepsTransactionsWhole, long[] splits) throws Exception {
        int stint = workload.moveFailover(writable, lastBarriers);
        history.event("workload", "the producers of " + FAILOVER_TOPIC + " moved to the " + writable.label());
        moveGroup(writable.other(), writable, stopAtMs);
        List<Workload.Write> finished = workload.writes().stream().filter(w -> w.stint() == stint - 1 && w.side() == writable.other()
            && w.partition().topic().equals(FAILOVER_TOPIC)).toList();
        HistoryChecker.WriteFigures[] total = {HistoryChecker.WriteFigures.NONE};
        Admin admin = adminOf(writable);
        checkInSync(writable, () -> {
            total[0] = HistoryChecker.WriteFigures.NONE;
            for (FailoverCycles.PartitionCut cut : cuts) {
                TopicPartition tp = new TopicPartition(FAILOVER_TOPIC, cut.partition());
                if (cut.barrier() < 0) {
                    history.violation(HistoryChecker.BARRIER, tp + " on the " + writable.label(), "stopped, but describe reports no barrier offset");
                    continue;
                }
                if (writable == Workload.Side.DESTINATION) {
                    checker.checkIdentity(sourceAdmin, destinationAdmin, tp, cut.mirroredEnd(), true);
                } else {
                    checker.checkFailbackIdentity(sourceAdmin, destinationAdmin, tp, cut.mirroredEnd(), true);
                }
                checker.checkBarrier(writable, admin, tp, cut.barrier());
                checker.checkProducerState(writable, admin, tp, cut.barrier());
                total[0] = total[0].plus(checker.checkAckedWrites(writable.label(), bootstrapOf(writable), bootstrapOf(writable.other()), tp,
                    finished, cut.mirroredEnd(), cut.truncatedFrom(), cut.truncatedTo()));
            }
            Map<TopicPartition, Long> mirroredEnds = new LinkedHashMap<>();
            cuts.forEach(c -> mirroredEnds.put(new TopicPartition(FAILOVER_TOPIC, c.partition()), c.mirroredEnd()));
            splits[0] = checker.checkTransactionsWhole(writable.label(), bootstrapOf(writable), bootstrapOf(writable.other()), finished,
                mirroredEnds, keepsTransactionsWhole);
        });
        return total[0];
    }

    /**
     * Runs a step's checks once every replica of {@code side} is in sync (a replica still catching up after a restart
     * is not complete yet); checks that could not be carried out (a node went down meanwhile) run again, at most
     * three times. A violation found stays recorded.
     */
    private void checkInSync(Workload.Side side, CheckedAction checks) throws Exception {
        for (int attempt = 1; ; attempt++) {
            awaitFullyReplicated(side);
            try {
                checks.run();
                return;
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                if (attempt == 3) {
                    throw e;
                }
                history.event("check", "the checks after a cycle step could not be carried out, again: " + e);
            }
        }
    }

    private void awaitFullyReplicated(Workload.Side side) throws Exception {
        if (side == Workload.Side.SOURCE) {
            clusters.awaitSourceFullyReplicated();
        } else {
            clusters.awaitDestinationFullyReplicated();
        }
    }

    /**
     * After a start on {@code mirroring}: it holds everything the writable side held below the barrier of the last stop
     * ({@value HistoryChecker#IDENTITY}, complete up to {@code barriers}).
     */
    private HistoryChecker.WriteFigures afterStart(Workload.Side mirroring, Map<TopicPartition, Long> barriers) throws Exception {
        checkInSync(mirroring, () -> {
            for (Map.Entry<TopicPartition, Long> barrier : barriers.entrySet()) {
                if (mirroring == Workload.Side.SOURCE) {
                    checker.checkFailbackIdentity(sourceAdmin, destinationAdmin, barrier.getKey(), barrier.getValue(), true);
                } else {
                    checker.checkIdentity(sourceAdmin, destinationAdmin, barrier.getKey(), barrier.getValue(), true);
                }
            }
        });
        return HistoryChecker.WriteFigures.NONE;
    }

    /**
     * Moves the group from {@code from} to {@code to} (the producers moved there already) and checks
     * {@value HistoryChecker#GROUP_MOVE} on each partition of the failover topic.
     */
    private void moveGroup(Workload.Side from, Workload.Side to, long stopAtMs) throws Exception {
        List<MovingGroup.Commit> commits = group.stop();
        Map<TopicPartition, OffsetAndMetadata> synced = syncedOffsets(to);
        group.start(to, bootstrapOf(to));
        Map<TopicPartition, Long> resumed;
        try {
            resumed = group.awaitFirstRead(FAILOVER_PARTITIONS);
        } catch (TimeoutException whileFaulty) {
            // The bound counts while the cluster is whole: a fault under way (every node killed, say) may have taken
            // the whole wait. Once every replica is back in sync the member gets the bound again.
            awaitFullyReplicated(to);
            try {
                resumed = group.awaitFirstRead(FAILOVER_PARTITIONS);
            } catch (TimeoutException e) {
                history.violation(HistoryChecker.GROUP_MOVE, FAILOVER_TOPIC + " on the " + to.label(), e.getMessage());
                return;
            }
        }
        for (TopicPartition tp : partitions(FAILOVER_TOPIC, FAILOVER_PARTITIONS)) {
            long offset = Optional.ofNullable(synced.get(tp)).map(OffsetAndMetadata::offset).orElse(-1L);
            long first = offset < 0 ? -1 : MovingGroup.firstRecordFrom(bootstrapOf(to), tp, offset);
            HistoryChecker.groupMoveViolations(tp, commits, from, offset, resumed.getOrDefault(tp, -1L), first,
                    lastBarriers.getOrDefault(tp, -1L), mirroringSinceMs, stopAtMs)
                .forEach(v -> history.violation(HistoryChecker.GROUP_MOVE, tp + " on the " + to.label(), v));
        }
        history.event("workload", "group " + MovingGroup.GROUP + " moved to the " + to.label() + ": committed there " + synced
            + ", first read " + resumed);
    }

    /**
     * The group's offsets on {@code side}, as the mirror synced them. As for the group's first read, every node of the side
     * may be down (killed just after the stop): a read that times out or finds no coordinator waits for the side to be
     * whole again and tries once more.
     */
    private Map<TopicPartition, OffsetAndMetadata> syncedOffsets(Workload.Side side) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return adminOf(side).listConsumerGroupOffsets(MovingGroup.GROUP).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            } catch (TimeoutException | ExecutionException e) {
                boolean whileFaulty = e instanceof TimeoutException || e.getCause() instanceof RetriableException;
                if (attempt == 2 || !whileFaulty) {
                    throw e;
                }
                awaitFullyReplicated(side);
            }
        }
    }

    /**
     * Checks {@value HistoryChecker#CONVERGENCE}: within {@link #CONVERGENCE_BOUND} every partition reaches the state its
     * topic's desired state asks for in each mirror, and every mirroring one the end offset of the side it copies.
     */
    private void awaitConvergence() throws Exception {
        Map<TopicPartition, String> lagging = new HashMap<>();
        try {
            TestUtils.await(() -> {
                lagging.clear();
                for (String topic : mirroredTopics()) {
                    converged(mirrors, MIRROR, topic, destinationAdmin, sourceAdmin, "", lagging);
                }
                if (sourceMirrors.listClusterMirrors().names().get(60, TimeUnit.SECONDS).contains(FAILBACK_MIRROR)) {
                    converged(sourceMirrors, FAILBACK_MIRROR, FAILOVER_TOPIC, sourceAdmin, destinationAdmin, "on the source: ", lagging);
                }
                return lagging.isEmpty();
            }, CONVERGENCE_BOUND, "every partition to reach its requested state");
            history.event("check", "every partition reached its requested state after the faults");
        } catch (TimeoutException e) {
            lagging.forEach((tp, why) -> history.violation(HistoryChecker.CONVERGENCE, tp.toString(),
                "not in its requested state " + CONVERGENCE_BOUND.toSeconds() + " s after the faults stopped: " + why));
        }
    }

    /** Adds to {@code lagging} each partition of {@code topic} in {@code mirror} not in its requested state or behind. */
    private static void converged(ClusterMirrorAdmin admin, String mirror, String topic, Admin mirroring, Admin copied, String prefix,
                                  Map<TopicPartition, String> lagging) throws Exception {
        MirrorTopicDescription description = describe(admin, mirror, topic);
        PartitionState wanted = switch (description.desiredState()) {
            case MIRRORING -> PartitionState.MIRRORING;
            case PAUSED -> PartitionState.PAUSED;
            case STOPPED -> PartitionState.STOPPED;
        };
        for (MirrorPartitionDescription p : description.partitions()) {
            TopicPartition tp = new TopicPartition(topic, p.partition());
            if (p.state() != wanted) {
                lagging.put(tp, prefix + "state " + p.state() + " (requested " + wanted + "), last error " + p.lastError());
            } else if (wanted == PartitionState.MIRRORING && endOffset(mirroring, tp) != endOffset(copied, tp)) {
                lagging.put(tp, prefix + "end offset " + endOffset(mirroring, tp) + ", copied side's " + endOffset(copied, tp));
            }
        }
    }

    private List<PartitionFigures> finalChecks(List<Workload.Write> writes) throws Exception {
        List<PartitionFigures> figures = new ArrayList<>();
        for (String topic : mirroredTopics()) {
            MirrorTopicDescription description = describe(topic);
            if (topic.equals(FAILOVER_TOPIC) && phase != Phase.MIRRORING) {
                // Only after a failed step: the cycles always end with the destination mirroring the source again.
                history.event("check", "final checks of " + topic + " left out: its cycles stopped in phase " + phase);
                continue;
            }
            for (MirrorPartitionDescription p : description.partitions()) {
                TopicPartition tp = new TopicPartition(topic, p.partition());
                try {
                    figures.add(finalChecks(writes, tp, description.desiredState(), p));
                } catch (Exception e) {
                    history.violation(HistoryChecker.CHECK_FAILED, tp.toString(), "the final checks failed: " + e);
                }
            }
        }
        return figures;
    }

    /**
     * The final checks of one mirroring (or paused) partition: identity with the source, and the source's writes since
     * the partition's producers last moved there; returns its figures.
     */
    private PartitionFigures finalChecks(List<Workload.Write> writes, TopicPartition tp, DesiredState desired, MirrorPartitionDescription p)
            throws Exception {
        long sourceEnd = endOffset(sourceAdmin, tp);
        long destinationEnd = endOffset(destinationAdmin, tp);
        int stint = tp.topic().equals(FAILOVER_TOPIC) ? workload.stint() : 0;
        List<Workload.Write> sourceWrites = writes.stream().filter(w -> w.side() == Workload.Side.SOURCE && w.stint() == stint).toList();
        List<Workload.Write> lostBySource = uncleanElections.containsKey(tp)
            ? checker.lostBySource(clusters.sourceBootstrapServers(), tp, sourceWrites, sourceEnd) : List.of();
        sourceWrites = sourceWrites.stream().filter(w -> !lostBySource.contains(w)).toList();
        checker.checkIdentity(sourceAdmin, destinationAdmin, tp, sourceEnd, true);
        HistoryChecker.WriteFigures writeFigures = checker.checkAckedWrites("destination", clusters.destinationBootstrapServers(),
            clusters.sourceBootstrapServers(), tp, sourceWrites, Math.min(sourceEnd, destinationEnd), -1, -1).withLostBySource(lostBySource.size());
        return new PartitionFigures(tp, desired, p.state(), sourceEnd, destinationEnd, p.barrierOffset(), p.truncatedFromOffset(),
            p.truncatedToOffset(), p.lastError(), writeFigures);
    }
}
