package io.clustermirror.admin;

import io.clustermirror.admin.internals.ControlPlaneReader;
import io.clustermirror.admin.internals.MirrorDescriptions;
import io.clustermirror.admin.internals.BatchComparison;
import io.clustermirror.admin.internals.MirrorVerifications;
import io.clustermirror.admin.internals.PlannedStops;
import io.clustermirror.admin.internals.StartPreviews;
import io.clustermirror.admin.internals.StopPreviews;
import io.clustermirror.admin.internals.KnownSourceLog;
import io.clustermirror.admin.internals.TransactionTails;
import io.clustermirror.admin.internals.VerificationProgress;
import io.clustermirror.common.ChunkedListOffsets;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.ListenerProbe;
import io.clustermirror.common.LogEnds;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.NamePatterns;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.compat.PendingFuture;
import io.clustermirror.common.compat.ResponseBound;
import io.clustermirror.common.fetch.RawLogReader;
import io.clustermirror.common.compat.SourceTransaction;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.image.MirrorImageReader;
import io.clustermirror.common.records.CommandLogEntry;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.ControllerProblem;
import io.clustermirror.common.records.MirrorCommand;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SealingKeyRecord;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import io.clustermirror.common.secrets.DestinationAcls;
import io.clustermirror.common.secrets.SealingKey;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AbstractOptions;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeProducersOptions;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The {@link ClusterMirrorAdmin} that talks to the destination cluster with Kafka's own clients: an
 * {@link Admin} for topic metadata and offsets, an idempotent producer for commands and a short-lived consumer
 * per operation for results and state.
 */
final class KafkaClusterMirrorAdmin implements ClusterMirrorAdmin {
    static final long DEFAULT_TIMEOUT_MS = 60_000;
    private static final String CHECK_EXTENSION =
        "check that the destination brokers run the Cluster Mirror extension (bin/cluster-mirror-server-start.sh)";
    private static final AtomicInteger CLIENT_SEQUENCE = new AtomicInteger();
    private static final long SEALING_KEY_POLL_MS = 250;
    private static final long CATCH_UP_POLL_MS = 500;
    /** How much older than the oldest open transaction a transaction that a stop could split may be. */
    private static final long TRANSACTION_WINDOW_MS = SourceTransaction.LONGEST_MS;
    /** A sync that read the source's coordinator logs to their end this recently before an analysis still follows them. */
    private static final long SOURCE_LOG_LIVE_MS = 10_000;
    /** How long an analysis waits at most for a sync that follows the logs to read past it (it reads every second). */
    private static final long SOURCE_LOG_WAIT_MS = 5_000;
    private static final long SOURCE_LOG_POLL_MS = 200;

    private final Properties clientProps;
    private final String clientId;
    private final long defaultTimeoutMs;
    private final Time time = Time.SYSTEM;
    private final ControlPlaneReader reader = new ControlPlaneReader(time, RecordCodec::decodeCommand);
    private final Admin admin;
    // One thread: operations run in call order, so a command called after another is written after it, and
    // the Kafka clients below are used by this thread only.
    private final ExecutorService executor;
    // Volatile: created on the executor thread, closed by the thread that closes the client.
    private volatile Producer<byte[], byte[]> producer;
    private int consumerSequence;

    private KafkaClusterMirrorAdmin(Properties clientProps, String clientId, Admin admin, long defaultTimeoutMs) {
        this.clientProps = clientProps;
        this.clientId = clientId;
        this.admin = admin;
        this.defaultTimeoutMs = defaultTimeoutMs;
        this.executor = Executors.newSingleThreadExecutor(r -> daemon(clientId + "-thread", r));
    }

    static KafkaClusterMirrorAdmin create(Properties props) {
        Properties clientProps = new Properties();
        clientProps.putAll(props);
        // Distinct client ids keep the clients' metrics apart when the caller sets one.
        String clientId = props.containsKey(CommonClientConfigs.CLIENT_ID_CONFIG)
            ? String.valueOf(props.get(CommonClientConfigs.CLIENT_ID_CONFIG))
            : "cluster-mirror-admin-" + CLIENT_SEQUENCE.incrementAndGet();
        Properties adminProps = new Properties();
        adminProps.putAll(clientProps);
        adminProps.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId);
        Admin admin = Admin.create(adminProps);
        Object timeout = props.get(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG);
        // Admin.create has validated the value's type.
        long defaultTimeoutMs = timeout == null ? DEFAULT_TIMEOUT_MS : Long.parseLong(timeout.toString().trim());
        return new KafkaClusterMirrorAdmin(clientProps, clientId, admin, defaultTimeoutMs);
    }

    @Override
    public CreateClusterMirrorResult createClusterMirror(String name, Map<String, String> configs,
                                                         CreateClusterMirrorOptions options) {
        Map<String, String> configsAtCall = Map.copyOf(configs);
        return new CreateClusterMirrorResult(submit(options, ClusterAccess.ALTER, deadline -> {
            execute(CommandOp.CREATE, name, sealInlineSecrets(name, configsAtCall, configsAtCall, deadline), List.of(), List.of(),
                false, deadline);
            return null;
        }));
    }

    @Override
    public AlterClusterMirrorConfigsResult alterClusterMirrorConfigs(String name, Collection<AlterConfigOp> ops,
                                                                     AlterClusterMirrorConfigsOptions options) {
        List<AlterConfigOp> opsAtCall = List.copyOf(ops);
        return new AlterClusterMirrorConfigsResult(submit(options, ClusterAccess.ALTER, deadline -> {
            Map<String, String> set = new HashMap<>();
            List<String> deleted = new ArrayList<>();
            for (AlterConfigOp op : opsAtCall) {
                String key = op.configEntry().name();
                if (op.opType() == AlterConfigOp.OpType.DELETE) {
                    deleted.add(key);
                } else if (op.opType() != AlterConfigOp.OpType.SET) {
                    throw new ClusterMirrorException(MirrorError.INVALID_REQUEST, "operation " + op.opType() + " on config '"
                        + key + "' is not supported: a mirror config is SET or DELETEd");
                } else if (op.configEntry().value() == null) {
                    throw new ClusterMirrorException(MirrorError.INVALID_CONFIG, "config '" + key + "' is SET without a value: "
                        + "give one, or DELETE the config to return it to its default");
                } else {
                    set.put(key, op.configEntry().value());
                }
            }
            Map<String, String> sealed = set;
            if (set.keySet().stream().anyMatch(key -> MirrorConfig.isInlineSecret(key, set.get(key)))) {
                // Sealed for the connection the mirror will have: a secret is bound to it (SealingKey.BOUND_CONFIGS).
                Map<String, String> after = new HashMap<>(readImage(deadline).mirror(name).orElseThrow(() -> new ClusterMirrorException(
                    MirrorError.UNKNOWN_CLUSTER_MIRROR, "no mirror named '" + name + "'")).configs());
                after.putAll(set);
                deleted.forEach(after::remove);
                sealed = sealInlineSecrets(name, set, after, deadline);
            }
            send(new MirrorCommand(UUID.randomUUID().toString(), CommandOp.ALTER, name, sealed, List.of(), List.of(),
                time.milliseconds(), false, deleted), deadline);
            return null;
        }));
    }

    @Override
    public DeleteClusterMirrorResult deleteClusterMirror(String name, DeleteClusterMirrorOptions options) {
        return new DeleteClusterMirrorResult(submit(options, ClusterAccess.ALTER, deadline -> {
            execute(CommandOp.DELETE, name, Map.of(), List.of(), List.of(), false, deadline);
            return null;
        }));
    }

    @Override
    public ListClusterMirrorsResult listClusterMirrors(ListClusterMirrorsOptions options) {
        return new ListClusterMirrorsResult(submit(options, ClusterAccess.DESCRIBE, deadline -> {
            MirrorImage image = readImage(deadline);
            return image.mirrors().values().stream()
                .map(mirror -> MirrorDescriptions.listing(image, mirror))
                .sorted((a, b) -> a.name().compareTo(b.name()))
                .collect(Collectors.toList());
        }));
    }

    @Override
    public DescribeClusterMirrorsResult describeClusterMirrors(Collection<String> names,
                                                               DescribeClusterMirrorsOptions options) {
        List<String> distinctNames = names.stream().distinct().collect(Collectors.toList());
        KafkaFuture<Snapshot> snapshot = submit(options, ClusterAccess.DESCRIBE, deadline -> {
            MirrorImage image = readImage(deadline);
            List<TopicPartition> partitions = distinctNames.stream()
                .filter(name -> image.mirror(name).isPresent())
                .flatMap(name -> MirrorDescriptions.reportedPartitionsOf(image, name).stream())
                .collect(Collectors.toList());
            Map<String, StopTransactions> transactions = new HashMap<>();
            if (options.includeTransactions()) {
                for (String name : distinctNames) {
                    List<TopicPartition> mirroring = image.topicsOf(name).stream().filter(t -> t.desired() != DesiredState.STOPPED)
                        .flatMap(t -> IntStream.range(0, t.partitions()).mapToObj(p -> new TopicPartition(t.topic(), p))).toList();
                    if (!mirroring.isEmpty()) {
                        transactions.put(name, stopTransactions(image, name, mirroring, deadline));
                    }
                }
            }
            return new Snapshot(image, destinationEndOffsets(partitions, IsolationLevel.READ_UNCOMMITTED, deadline), transactions);
        });
        // One read serves every name; a missing name fails only its own future.
        Map<String, KafkaFuture<ClusterMirrorDescription>> futures = new LinkedHashMap<>();
        for (String name : distinctNames) {
            futures.put(name, snapshot.thenApply(s -> {
                MirrorRecord mirror = s.image().mirror(name).orElseThrow(() ->
                    new ClusterMirrorException(MirrorError.UNKNOWN_CLUSTER_MIRROR, "no mirror named '" + name + "'"));
                ClusterMirrorDescription described = MirrorDescriptions.description(s.image(), mirror, s.destinationEndOffsets(),
                    time.milliseconds());
                StopTransactions transactions = s.transactions().get(name);
                return transactions == null ? described : described.withTransactions(transactions);
            }));
        }
        return new DescribeClusterMirrorsResult(futures);
    }

    @Override
    public MirrorTopicsResult startMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                Collection<String> excludes, MirrorTopicsOptions options) {
        return options.waitUntilCaughtUp() ? startAndWait(mirror, topicsOrRegexes, excludes, options)
            : mirrorTopics(CommandOp.START, mirror, topicsOrRegexes, excludes, options);
    }

    /**
     * A start that waits: starts the topics, then waits until every partition of the started topics is MIRRORING and
     * caught up, reading the image again at each check: their states move on (from PREPARING to MIRRORING) while it
     * waits.
     */
    private MirrorTopicsResult startAndWait(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                            MirrorTopicsOptions options) {
        List<String> topics = List.copyOf(topicsOrRegexes);
        List<String> excluded = excludes == null ? List.of() : List.copyOf(excludes);
        Properties sourceConfigs = options.sourceClientConfigs();
        boolean discardLocalWrites = options.discardLocalWrites();
        ProgressListener listener = options.progressListener();
        return new MirrorTopicsResult(submit(options, ClusterAccess.ALTER, deadline -> {
            checkPatterns(topics, excluded);
            List<String> started = execute(CommandOp.START, mirror, Map.of(), topics, excluded, discardLocalWrites, deadline)
                .topics();
            awaitCaughtUp(mirror, sourceConfigs, "-start-source", checkDeadline -> {
                MirrorImage image = readImage(checkDeadline);
                return new Selection(image, PlannedStops.partitionsOf(image, started));
            }, PartitionCatchUp::mirroringAndCaughtUp, listener, deadline,
                behind -> NotCaughtUpException.afterStart(behind, deadline.timeoutMs()));
            return started;
        }));
    }

    @Override
    public MirrorTopicsResult stopMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                               Collection<String> excludes, MirrorTopicsOptions options) {
        if (options.planned()) {
            return plannedStop(mirror, topicsOrRegexes, excludes, options);
        }
        return options.consistent() ? consistentStop(mirror, topicsOrRegexes, excludes, options)
            : mirrorTopics(CommandOp.STOP, mirror, topicsOrRegexes, excludes, options);
    }

    /**
     * A consistent stop: reads the ends of the selected partitions, chooses the cut of each where no committed transaction
     * seen there is split, and stops them with those cuts. Every partition read gets its cut, also where it equals the
     * last stable offset it had then: a later, higher offset there could keep a transaction whose commit reached that
     * partition only since, and that another partition cuts.
     */
    private MirrorTopicsResult consistentStop(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                              MirrorTopicsOptions options) {
        List<String> topics = List.copyOf(topicsOrRegexes);
        List<String> excluded = excludes == null ? List.of() : List.copyOf(excludes);
        KafkaFuture<ConsistentStop> done = submit(options, ClusterAccess.ALTER, deadline -> {
            checkPatterns(topics, excluded);
            MirrorImage image = readImage(deadline);
            List<TopicPartition> partitions = StopPreviews.partitionsToStop(image, mirror, topics, excluded);
            StopTransactions transactions = stopTransactions(image, mirror, partitions, deadline);
            List<MirrorCommand.PartitionCut> cuts = transactions.cuts().stream()
                .map(c -> new MirrorCommand.PartitionCut(c.topic(), c.partition(), c.offset(), groupOffsetsOf(transactions, c))).toList();
            CommandResult result = send(new MirrorCommand(UUID.randomUUID().toString(), CommandOp.STOP, mirror, Map.of(), topics,
                excluded, time.milliseconds(), false, List.of(), List.of(), cuts), deadline);
            return new ConsistentStop(result.topics(), transactions);
        });
        return new MirrorTopicsResult(done.thenApply(ConsistentStop::topics), done.thenApply(ConsistentStop::transactions));
    }

    private record ConsistentStop(List<String> topics, StopTransactions transactions) {
    }

    /** The offsets a consistent stop gives on one partition to groups that commit it inside transactions. */
    private static Map<String, Long> groupOffsetsOf(StopTransactions transactions, StopTransactions.ConsistentCut cut) {
        Map<String, Long> offsets = new HashMap<>();
        transactions.groupOffsets().stream()
            .filter(g -> g.offset() >= 0 && g.topic().equals(cut.topic()) && g.partition() == cut.partition())
            .forEach(g -> offsets.put(g.group(), g.offset()));
        return offsets;
    }

    /**
     * A planned failover: waits until every selected partition has caught up with the source, checking both sides'
     * offsets every {@link #CATCH_UP_POLL_MS}, then stops them with a fresh deadline for the command; stops nothing if the
     * options' timeout passes first.
     */
    private MirrorTopicsResult plannedStop(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                           MirrorTopicsOptions options) {
        List<String> topics = List.copyOf(topicsOrRegexes);
        List<String> excluded = excludes == null ? List.of() : List.copyOf(excludes);
        Properties sourceConfigs = options.sourceClientConfigs();
        ProgressListener listener = options.progressListener();
        return new MirrorTopicsResult(submit(options, ClusterAccess.ALTER, deadline -> {
            checkPatterns(topics, excluded);
            MirrorImage image = readImage(deadline);
            List<TopicPartition> partitions = StopPreviews.partitionsToStop(image, mirror, topics, excluded);
            PlannedStops.refusePaused(image, partitions);
            Selection selection = new Selection(image, partitions);
            awaitCaughtUp(mirror, sourceConfigs, "-planned-stop-source", checkDeadline -> selection, PartitionCatchUp::caughtUp,
                listener, deadline, behind -> new NotCaughtUpException(behind, deadline.timeoutMs()));
            return execute(CommandOp.STOP, mirror, Map.of(), topics, excluded, false,
                new Deadline(defaultTimeoutMs, time.milliseconds() + defaultTimeoutMs)).topics();
        }));
    }

    /**
     * Waits until {@code done} holds for every selected partition, checking both sides' offsets every
     * {@link #CATCH_UP_POLL_MS} and reporting each check to the listener.
     *
     * @param select      the image and the partitions to check, read for each check
     * @param notCaughtUp the failure when the deadline comes first, given the partitions not done at the last check
     */
    private void awaitCaughtUp(String mirror, Properties sourceConfigs, String sourceClientSuffix, SelectionReader select,
                               Predicate<PartitionCatchUp> done, ProgressListener listener, Deadline deadline,
                               Function<List<PartitionCatchUp>, ClusterMirrorException> notCaughtUp) throws Exception {
        Selection selection = select.read(deadline);
        checkSourceConfigs(selection.image(), mirror, sourceConfigs);
        try (Admin sourceAdmin = Admin.create(clientConfigs(sourceConfigs, clientId + sourceClientSuffix))) {
            List<PartitionCatchUp> checked = catchUp(selection.image(), mirror, selection.partitions(), sourceAdmin,
                sourceConfigs, deadline);
            while (true) {
                listener.onProgress(PlannedStops.progress(checked, done));
                List<PartitionCatchUp> behind = checked.stream().filter(done.negate()).toList();
                if (behind.isEmpty()) {
                    return;
                }
                if (deadline.remainingMs(time) <= CATCH_UP_POLL_MS) {
                    throw notCaughtUp.apply(behind);
                }
                time.sleep(CATCH_UP_POLL_MS);
                try {
                    selection = select.read(deadline);
                    checked = catchUp(selection.image(), mirror, selection.partitions(), sourceAdmin, sourceConfigs, deadline);
                } catch (Exception e) {
                    // A check the deadline cut short, whichever side it was waiting for, leaves the last complete check
                    // as the answer: the wait ran out of time with these partitions behind. Reporting how the final check
                    // failed instead would blame a cluster or the configs for the timeout the caller chose. "Cut short"
                    // uses the loop's own measure of a deadline too close for another check.
                    if (deadline.remainingMs(time) <= CATCH_UP_POLL_MS) {
                        throw notCaughtUp.apply(behind);
                    }
                    throw e;
                }
            }
        }
    }

    /** What a wait checks: the partitions, and the image their states are read from. */
    private record Selection(MirrorImage image, List<TopicPartition> partitions) {
    }

    @FunctionalInterface
    private interface SelectionReader {
        Selection read(Deadline deadline) throws Exception;
    }

    /** Both sides' offsets of the partitions, read now: the source's first, so the destination's are at least as recent. */
    private List<PartitionCatchUp> catchUp(MirrorImage image, String mirror, List<TopicPartition> partitions, Admin sourceAdmin,
                                           Properties sourceConfigs, Deadline deadline) throws InterruptedException {
        Map<TopicPartition, Long> sourceStable = offsets(sourceAdmin, partitions, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED,
            deadline);
        Map<TopicPartition, Long> sourceEnds = offsets(sourceAdmin, partitions, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED,
            deadline);
        if (sourceEnds.isEmpty() && !partitions.isEmpty()) {
            throw sourceUnreadable(sourceConfigs, "no offsets of " + partitions.get(0).topic() + " could be read within "
                + deadline.timeoutMs() + " ms", null);
        }
        return PlannedStops.catchUp(image, mirror, partitions, sourceStable, sourceEnds,
            destinationEndOffsets(partitions, IsolationLevel.READ_UNCOMMITTED, deadline),
            destinationEndOffsets(partitions, IsolationLevel.READ_COMMITTED, deadline), time.milliseconds());
    }

    @Override
    public MirrorTopicsResult pauseMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                Collection<String> excludes, MirrorTopicsOptions options) {
        return mirrorTopics(CommandOp.PAUSE, mirror, topicsOrRegexes, excludes, options);
    }

    @Override
    public MirrorTopicsResult resumeMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                 Collection<String> excludes, MirrorTopicsOptions options) {
        return mirrorTopics(CommandOp.RESUME, mirror, topicsOrRegexes, excludes, options);
    }

    @Override
    public MirrorTopicsResult recoverMirrorTopics(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                                  MirrorTopicsOptions options) {
        return mirrorTopics(CommandOp.RECOVER, mirror, topicsOrRegexes, excludes, options);
    }

    @Override
    public MirrorTopicsResult applyHeldChanges(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                               MirrorTopicsOptions options) {
        return mirrorTopics(CommandOp.APPLY_HELD, mirror, topicsOrRegexes, excludes, options);
    }

    @Override
    public MirrorTopicsResult rejectHeldChanges(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                                MirrorTopicsOptions options) {
        return mirrorTopics(CommandOp.REJECT_HELD, mirror, topicsOrRegexes, excludes, options);
    }

    @Override
    public PreviewStopResult previewStopMirrorTopics(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                                     MirrorTopicsOptions options) {
        List<String> topics = List.copyOf(topicsOrRegexes);
        List<String> excluded = excludes == null ? List.of() : List.copyOf(excludes);
        KafkaFuture<StopDryRun> dryRun = submit(options, ClusterAccess.DESCRIBE, deadline -> {
            MirrorImage image = readImage(deadline);
            List<TopicPartition> partitions = StopPreviews.partitionsToStop(image, mirror, topics, excluded);
            Map<TopicPartition, Long> ends = destinationEndOffsets(partitions, IsolationLevel.READ_UNCOMMITTED, deadline);
            Map<TopicPartition, Long> stable = destinationEndOffsets(partitions, IsolationLevel.READ_COMMITTED, deadline);
            Map<TopicPartition, List<Long>> open = openTransactions(partitions, deadline);
            List<StopPreview> previews = new ArrayList<>();
            for (TopicPartition tp : partitions) {
                long end = ends.getOrDefault(tp, (long) MirrorPartitionDescription.UNKNOWN);
                long lso = stable.getOrDefault(tp, end);
                long records = lso >= 0 && lso < end ? countRecords(tp, lso, end, deadline) : 0;
                previews.add(StopPreviews.preview(image, mirror, tp, end, lso, records, open.getOrDefault(tp, List.of()),
                    time.milliseconds()));
            }
            return new StopDryRun(previews, stopTransactions(image, mirror, partitions, deadline));
        });
        return new PreviewStopResult(dryRun.thenApply(StopDryRun::partitions), dryRun.thenApply(StopDryRun::transactions));
    }

    private record StopDryRun(List<StopPreview> partitions, StopTransactions transactions) {
    }

    /**
     * The split transactions and consistent cuts of the partitions a stop would cut together, read now, with what the
     * mirror's sync kept of the source's coordinator log.
     */
    private StopTransactions stopTransactions(MirrorImage image, String mirror, List<TopicPartition> partitions, Deadline deadline)
            throws InterruptedException {
        try (RawLogReader destination = new RawLogReader(admin, clientProps, clientId + "-stop-transactions",
                Duration.ofMillis(deadline.timeoutMs()))) {
            TransactionTails.Result found = new TransactionTails(destination,
                (tps, spec, isolation) -> offsets(admin, tps, spec, isolation, deadline), TRANSACTION_WINDOW_MS, time)
                .analyse(partitions, offsetsReadAtMs -> knownSourceLog(mirror, offsetsReadAtMs, deadline));
            return StopPreviews.transactions(image, mirror, found, time.milliseconds());
        }
    }

    /**
     * What the mirror's sync kept of the source's coordinator logs. While the sync follows them (it read them to their end
     * within {@link #SOURCE_LOG_LIVE_MS}), waits up to {@link #SOURCE_LOG_WAIT_MS} until it has read them past
     * {@code offsetsReadAtMs}: then every transaction that can lie below the offsets read is known, and a partition that
     * mirrored none of one is seen. Once the source is lost, what was kept is taken as it is.
     */
    private KnownSourceLog knownSourceLog(String mirror, long offsetsReadAtMs, Deadline deadline) throws InterruptedException {
        long waitUntil = Math.min(time.milliseconds() + SOURCE_LOG_WAIT_MS, time.milliseconds() + deadline.remainingMs(time));
        while (true) {
            TopicPartition log = new TopicPartition(InternalTopics.TRANSACTIONS, 0);
            long end = offsets(admin, List.of(log), OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED, deadline).getOrDefault(log, 0L);
            KnownSourceLog known;
            try (Consumer<byte[], byte[]> consumer = newConsumer(IsolationLevel.READ_UNCOMMITTED)) {
                known = KnownSourceLog.read(consumer, mirror, end, TRANSACTION_WINDOW_MS, () -> deadline.remainingMs(time));
            }
            boolean following = known.readUpToMs() >= offsetsReadAtMs - SOURCE_LOG_LIVE_MS;
            if (known.readUpToMs() >= offsetsReadAtMs || !following || time.milliseconds() >= waitUntil) {
                return known;
            }
            time.sleep(SOURCE_LOG_POLL_MS);
        }
    }

    @Override
    public PreviewStartResult previewStartMirrorTopics(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                                       MirrorTopicsOptions options) {
        List<String> topics = List.copyOf(topicsOrRegexes);
        List<String> excluded = excludes == null ? List.of() : List.copyOf(excludes);
        Properties sourceConfigs = options.sourceClientConfigs();
        return new PreviewStartResult(submit(options, ClusterAccess.DESCRIBE, deadline -> {
            MirrorImage image = readImage(deadline);
            if (image.mirror(mirror).isEmpty()) {
                throw new ClusterMirrorException(MirrorError.UNKNOWN_CLUSTER_MIRROR, "no mirror named '" + mirror + "'");
            }
            checkSourceConfigs(image, mirror, sourceConfigs);
            MirrorImage sourceImage;
            try {
                sourceImage = MirrorImageReader.read(clientConfigs(sourceConfigs, clientId + "-start-preview-source"),
                    new ResponseBound(BrokerClientConfigs.DEFAULT_SOURCE_MAX_RESPONSE_BYTES, "the source cluster",
                        "Check that the source's bootstrap.servers and security.protocol name a Kafka listener of that protocol."),
                    Duration.ofMillis(deadline.remainingMs(time)));
            } catch (KafkaException e) {
                throw sourceUnreadable(sourceConfigs, e.getMessage(), e);
            }
            String localClusterId = admin.describeCluster(new DescribeClusterOptions().timeoutMs(deadline.remainingTimeoutMs(time)))
                .clusterId().get();
            List<TopicPartition> partitions = StartPreviews.partitionsToStart(image, sourceImage, localClusterId, mirror, topics, excluded);
            Map<TopicPartition, Long> starts = offsets(admin, partitions, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED, deadline);
            Map<TopicPartition, Long> ends = destinationEndOffsets(partitions, IsolationLevel.READ_UNCOMMITTED, deadline);
            List<StartPreview> previews = new ArrayList<>();
            long unknown = MirrorPartitionDescription.UNKNOWN;
            for (TopicPartition tp : partitions) {
                StartPreview preview = StartPreviews.preview(image, sourceImage, localClusterId, mirror, tp,
                    starts.getOrDefault(tp, unknown), ends.getOrDefault(tp, unknown));
                previews.add(preview.truncates() ? preview.withRecordsToTruncate(countRecords(tp, preview.truncateFromOffset(),
                    preview.truncateToOffset(), deadline)) : preview);
            }
            return previews;
        }));
    }

    @Override
    public VerifyMirrorTopicsResult verifyMirrorTopics(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                                       Properties sourceClientConfigs, MirrorTopicsOptions options) {
        List<String> topics = List.copyOf(topicsOrRegexes);
        List<String> excluded = excludes == null ? List.of() : List.copyOf(excludes);
        Properties sourceConfigs = new Properties();
        sourceConfigs.putAll(sourceClientConfigs);
        ProgressListener listener = options.progressListener();
        return new VerifyMirrorTopicsResult(submit(options, ClusterAccess.DESCRIBE, deadline -> {
            MirrorImage image = readImage(deadline);
            List<MirrorVerifications.Target> targets = MirrorVerifications.partitionsToVerify(image, mirror, topics, excluded);
            checkSourceConfigs(image, mirror, sourceConfigs);
            List<String> selected = targets.stream().map(t -> t.partition().topic()).distinct().toList();
            Duration requestTimeout = Duration.ofMillis(deadline.timeoutMs());
            Properties sourceAdminConfigs = clientConfigs(sourceConfigs, clientId + "-verify-source");
            try (Admin sourceAdmin = Admin.create(sourceAdminConfigs);
                 RawLogReader source = new RawLogReader(sourceAdmin, sourceConfigs, clientId + "-verify-source", requestTimeout);
                 RawLogReader destination = new RawLogReader(admin, clientProps, clientId + "-verify", requestTimeout)) {
                Map<String, String> sourcePolicies;
                try {
                    sourcePolicies = cleanupPolicies(sourceAdmin, selected, deadline);
                } catch (ExecutionException | org.apache.kafka.common.errors.TimeoutException e) {
                    throw sourceUnreadable(sourceConfigs, String.valueOf(e.getCause() != null ? e.getCause() : e), e);
                }
                MirrorVerifications.refuseCompacted(Map.of("source", sourcePolicies,
                    "destination", cleanupPolicies(admin, selected, deadline)));
                VerificationProgress progress = new VerificationProgress(estimatedOffsets(targets, deadline), listener);
                List<PartitionVerification> verifications = new ArrayList<>();
                for (MirrorVerifications.Target target : targets) {
                    verifications.add(verify(target, source, destination, progress));
                    progress.partitionDone();
                }
                return verifications;
            }
        }));
    }

    /**
     * Completes the client configs for the mirror's source: {@code bootstrap.servers} defaults to the mirror's, and a TLS
     * listener reached in plaintext is refused with the settings to give.
     */
    private static void checkSourceConfigs(MirrorImage image, String mirror, Properties sourceConfigs) {
        if (!sourceConfigs.containsKey(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG)) {
            sourceConfigs.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                image.mirror(mirror).orElseThrow().configs().get(MirrorConfig.BOOTSTRAP_SERVERS));
        }
        try {
            ListenerProbe.check(sourceConfigs);
        } catch (ListenerProbe.TlsListenerException e) {
            throw sourceUnreadable(sourceConfigs, e.getMessage(), e);
        }
    }

    /** The source cannot be read with the configs given: names them by address only, and the way to give the right ones. */
    private static ClusterMirrorException sourceUnreadable(Properties sourceConfigs, String why, Exception cause) {
        return new ClusterMirrorException(MirrorError.INVALID_CONFIG, "cannot read the source cluster at "
            + sourceConfigs.getProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG) + " (" + why + "); give its client "
            + "configs (security settings) with --source-command-config: the mirror's stored source passwords are sealed "
            + "and this tool cannot read them", cause);
    }

    /** The offsets a check of each target would compare, estimated from the destination's logs now (two requests in all). */
    private List<Long> estimatedOffsets(List<MirrorVerifications.Target> targets, Deadline deadline) throws InterruptedException {
        List<TopicPartition> partitions = targets.stream().map(MirrorVerifications.Target::partition).toList();
        Map<TopicPartition, Long> starts = offsets(admin, partitions, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED, deadline);
        Map<TopicPartition, Long> ends = destinationEndOffsets(partitions, IsolationLevel.READ_UNCOMMITTED, deadline);
        long unknown = MirrorPartitionDescription.UNKNOWN;
        return targets.stream().map(target -> MirrorVerifications.estimatedOffsets(target,
            starts.getOrDefault(target.partition(), unknown), ends.getOrDefault(target.partition(), unknown))).toList();
    }

    /** Compares one partition; a partition that cannot be read is reported as not verified rather than failing the rest. */
    private static PartitionVerification verify(MirrorVerifications.Target target, RawLogReader source, RawLogReader destination,
                                                VerificationProgress progress) {
        TopicPartition tp = target.partition();
        long unknown = MirrorPartitionDescription.UNKNOWN;
        if (target.state() == PartitionState.STOPPING) {
            return new PartitionVerification(tp.topic(), tp.partition(), target.state(), unknown, unknown, false, unknown,
                "not verified: the stop has not finished (no barrier yet); verify again once --describe shows STOPPED", 0, 0);
        }
        MirrorVerifications.Range range = null;
        try {
            RawLogReader.LogRange sourceLog = source.range(tp);
            RawLogReader.LogRange destinationLog = destination.range(tp);
            range = MirrorVerifications.range(target, sourceLog.logStartOffset(), destinationLog.logStartOffset(),
                destinationLog.highWatermark());
            BatchComparison.Outcome outcome = BatchComparison.compare(
                progress.counting(source.stream(tp, range.from(), range.to()), range.from()),
                destination.stream(tp, range.from(), range.to()), range.from(), range.to());
            BatchComparison.Difference difference = outcome.difference();
            return new PartitionVerification(tp.topic(), tp.partition(), target.state(), outcome.verifiedFrom(),
                outcome.verifiedTo(), outcome.identical(), difference == null ? unknown : difference.offset(),
                difference == null ? null : difference.description(), outcome.batches(), outcome.bytes());
        } catch (KafkaException e) {
            return new PartitionVerification(tp.topic(), tp.partition(), target.state(), range == null ? unknown : range.from(),
                range == null ? unknown : range.to(), false, unknown, "not verified: " + e.getMessage(), 0, 0);
        }
    }

    /** The {@code cleanup.policy} of each topic on one cluster. */
    private Map<String, String> cleanupPolicies(Admin cluster, List<String> topics, Deadline deadline) throws Exception {
        List<ConfigResource> resources = topics.stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
        Map<String, String> policies = new HashMap<>();
        if (resources.isEmpty()) {
            return policies;
        }
        cluster.describeConfigs(resources, new DescribeConfigsOptions().timeoutMs(deadline.remainingTimeoutMs(time))).all()
            .get().forEach((resource, config) -> {
                ConfigEntry policy = config.get(TopicConfig.CLEANUP_POLICY_CONFIG);
                policies.put(resource.name(), policy == null ? null : policy.value());
            });
        return policies;
    }

    /** The producer ids with a transaction open on each partition (describeProducers of its leader). */
    private Map<TopicPartition, List<Long>> openTransactions(List<TopicPartition> partitions, Deadline deadline)
            throws InterruptedException {
        Map<TopicPartition, List<Long>> open = new HashMap<>();
        if (partitions.isEmpty()) {
            return open;
        }
        DescribeProducersResult result = admin.describeProducers(partitions,
            new DescribeProducersOptions().timeoutMs(deadline.remainingTimeoutMs(time)));
        for (TopicPartition tp : partitions) {
            try {
                open.put(tp, result.partitionResult(tp).get().activeProducers().stream()
                    .filter(p -> p.currentTransactionStartOffset().isPresent())
                    .map(ProducerState::producerId).sorted().toList());
            } catch (ExecutionException e) {
                // Left out: no open transaction is known.
            }
        }
        return open;
    }

    /** The data records in [from, to) of a destination partition, read as they are (aborted and open ones included). */
    private long countRecords(TopicPartition tp, long from, long to, Deadline deadline) {
        long count = 0;
        try (Consumer<byte[], byte[]> consumer = newConsumer(IsolationLevel.READ_UNCOMMITTED)) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, from);
            while (consumer.position(tp, Duration.ofMillis(deadline.remainingMs(time))) < to) {
                if (deadline.remainingMs(time) == 0) {
                    throw new ClusterMirrorException(MirrorError.UNKNOWN_SERVER_ERROR, "timed out counting the records of " + tp
                        + " in [" + from + ", " + to + "); retry with a longer --timeout-ms (timeoutMs in the options)");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(Math.min(500, deadline.remainingMs(time))))) {
                    if (r.offset() < to) {
                        count++;
                    }
                }
            }
        }
        return count;
    }

    private MirrorTopicsResult mirrorTopics(CommandOp op, String mirror, Collection<String> topicsOrRegexes,
                                            Collection<String> excludes, MirrorTopicsOptions options) {
        List<String> topics = List.copyOf(topicsOrRegexes);
        List<String> excluded = excludes == null ? List.of() : List.copyOf(excludes);
        boolean discardLocalWrites = op == CommandOp.START && options.discardLocalWrites();
        return new MirrorTopicsResult(submit(options, ClusterAccess.ALTER, deadline -> {
            checkPatterns(topics, excluded);
            return execute(op, mirror, Map.of(), topics, excluded, discardLocalWrites, deadline).topics();
        }));
    }

    /** Refused here rather than by the controller: an invalid pattern never reaches the command log. */
    private static void checkPatterns(List<String> topics, List<String> excluded) {
        for (String expression : concat(topics, excluded)) {
            try {
                NamePatterns.compile(expression.trim());
            } catch (IllegalArgumentException e) {
                throw new ClusterMirrorException(MirrorError.INVALID_REQUEST, e.getMessage());
            }
        }
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    @Override
    public void close(Duration timeout) {
        long timeoutMs = Math.max(0, timeout.toMillis());
        long nowMs = time.milliseconds();
        long deadlineMs = timeoutMs > Long.MAX_VALUE - nowMs ? Long.MAX_VALUE : nowMs + timeoutMs;
        executor.shutdown();
        try {
            if (!executor.awaitTermination(deadlineMs - time.milliseconds(), TimeUnit.MILLISECONDS)) {
                executor.shutdownNow().forEach(queued -> ((Operation<?>) queued).future.fail(
                    new ClusterMirrorException(MirrorError.UNKNOWN_SERVER_ERROR, "the admin client was closed")));
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        } finally {
            // Bounded too: a command whose send timed out must not hold the close up to delivery.timeout.ms.
            Duration remaining = Duration.ofMillis(Math.max(0, deadlineMs - time.milliseconds()));
            Producer<byte[], byte[]> commandProducer = producer;
            if (commandProducer != null) {
                Utils.closeQuietly(() -> commandProducer.close(remaining), "cluster mirror command producer");
            }
            Utils.closeQuietly(() -> admin.close(remaining), "cluster mirror admin");
        }
    }

    /**
     * The configs with their inline secrets sealed for the key the mirror controller published, before anything is
     * written: a secret never reaches {@code __mirror_commands} in clear. Refused, naming both ways out, when a
     * destination broker runs with ACLs off (the published key may be anyone's) or the controller has no
     * password-encoder secret.
     *
     * @param configsAfter the mirror's configs once the command applies: what the sealed values are bound to
     */
    private Map<String, String> sealInlineSecrets(String mirror, Map<String, String> configs, Map<String, String> configsAfter,
                                                  Deadline deadline) throws Exception {
        List<String> inline = configs.entrySet().stream().filter(e -> MirrorConfig.isInlineSecret(e.getKey(), e.getValue()))
            .map(Map.Entry::getKey).sorted().toList();
        if (inline.isEmpty()) {
            return configs;
        }
        List<String> aclsOff = brokersWithAclsOff(deadline);
        if (!aclsOff.isEmpty()) {
            throw DestinationAcls.inlineSecretRefused(inline.get(0), aclsOff);
        }
        ensureCommandsTopic(deadline);
        SealingKeyRecord published = awaitSealingKey(deadline);
        if (published.publicKey() == null) {
            throw SealingKey.inlineSecretRefused(inline.get(0));
        }
        return SealingKey.decode(published.publicKey()).sealInlineSecrets(mirror, configs, configsAfter);
    }

    /**
     * The ids of the destination brokers that run with ACLs off ({@link DestinationAcls}), asked of each broker itself:
     * nothing in the internal topics can be trusted there.
     */
    private List<String> brokersWithAclsOff(Deadline deadline) throws Exception {
        List<ConfigResource> brokers = admin.describeCluster(new DescribeClusterOptions().timeoutMs(deadline.remainingTimeoutMs(time)))
            .nodes().get().stream().map(node -> new ConfigResource(ConfigResource.Type.BROKER, node.idString())).toList();
        Map<ConfigResource, KafkaFuture<Config>> configs = admin.describeConfigs(brokers,
            new DescribeConfigsOptions().timeoutMs(deadline.remainingTimeoutMs(time))).values();
        List<String> aclsOff = new ArrayList<>();
        for (ConfigResource broker : brokers) {
            try {
                if (DestinationAcls.aclsOff(configs.get(broker).get())) {
                    aclsOff.add(broker.name());
                }
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof AuthorizationException)) {
                    throw e;
                }
                // Denied: this broker's authorizer enforces ACLs.
            }
        }
        return aclsOff;
    }

    /**
     * The sealing key the active controller published in {@code __mirror_metadata}; until the first controller has
     * published one (the internal topics are created on first use), reads again.
     */
    private SealingKeyRecord awaitSealingKey(Deadline deadline) throws Exception {
        TopicPartition metadata = new TopicPartition(InternalTopics.METADATA, 0);
        while (true) {
            AtomicReference<SealingKeyRecord> published = new AtomicReference<>();
            if (!partitionCounts(List.of(InternalTopics.METADATA), deadline).isEmpty()) {
                try (Consumer<byte[], byte[]> consumer = newConsumer(IsolationLevel.READ_COMMITTED)) {
                    LogEnds.readFromBeginning(consumer, List.of(metadata), time, deadline.deadlineMs(), record -> {
                        if (RecordCodec.SEALING_KEY.equals(RecordCodec.decodeKey(record.key())) && record.value() != null) {
                            published.set(RecordCodec.decodeSealingKey(record.value()));
                        }
                    });
                }
            }
            if (published.get() != null) {
                return published.get();
            }
            if (deadline.remainingMs(time) <= SEALING_KEY_POLL_MS) {
                throw new ClusterMirrorException(MirrorError.MIRROR_CONTROLLER_UNAVAILABLE, "no mirror controller published "
                    + "the key that encrypts the mirror config's secrets within " + deadline.timeoutMs() + " ms; " + CHECK_EXTENSION);
            }
            time.sleep(SEALING_KEY_POLL_MS);
        }
    }

    /** A command with a new id, sent ({@link #send}). */
    private CommandResult execute(CommandOp op, String mirror, Map<String, String> configs, List<String> topics,
                                  List<String> excludes, boolean discardLocalWrites, Deadline deadline) throws Exception {
        return send(new MirrorCommand(UUID.randomUUID().toString(), op, mirror, configs, topics, excludes, time.milliseconds(),
            discardLocalWrites), deadline);
    }

    /** Writes a command to {@code __mirror_commands} and waits for the controller's result for it. */
    private CommandResult send(MirrorCommand command, Deadline deadline) throws Exception {
        ensureCommandsTopic(deadline);
        byte[] key = RecordCodec.encodeKey(command.commandId());
        TopicPartition commands = new TopicPartition(InternalTopics.COMMANDS, 0);
        long offset;
        try {
            offset = producer()
                .send(new ProducerRecord<>(commands.topic(), commands.partition(), key, RecordCodec.encodeCommand(command)))
                .get(deadline.remainingMs(time), TimeUnit.MILLISECONDS)
                .offset();
        } catch (ExecutionException | org.apache.kafka.common.KafkaException e) {
            if (controlPlaneRefusal(e).isPresent()) {
                // Refused, the idempotent producer stays in a fatal state; a later command (once the principal holds the
                // permission) gets a new one.
                producer.close(Duration.ZERO);
                producer = null;
            }
            throw e;
        }
        CommandLogEntry answer;
        try (Consumer<byte[], byte[]> consumer = newConsumer(IsolationLevel.READ_COMMITTED)) {
            consumer.assign(List.of(commands));
            // The result is written after the command, so reading from the command's own offset cannot miss it.
            consumer.seek(commands, offset);
            answer = reader.awaitAnswer(consumer, key, deadline.deadlineMs()).orElseThrow(() ->
                new ClusterMirrorException(MirrorError.MIRROR_CONTROLLER_UNAVAILABLE, "no mirror controller answered within "
                    + deadline.timeoutMs() + " ms; " + CHECK_EXTENSION + "; command " + command.commandId()
                    + " stays queued and may still be applied"));
        }
        if (answer instanceof ControllerProblem problem) {
            throw new ClusterMirrorException(MirrorError.MIRROR_CONTROLLER_UNAVAILABLE, "the mirror controller on broker "
                + problem.nodeId() + " cannot work: " + problem.problem() + " (fix that, then see the mirror controller's lines in "
                + "cluster-mirror.log on broker " + problem.nodeId() + "); command " + command.commandId()
                + " stays queued and is applied once a controller works");
        }
        CommandResult result = (CommandResult) answer;
        if (!result.succeeded()) {
            throw new ClusterMirrorException(result.error(), result.message());
        }
        return result;
    }

    /**
     * The command log is created by the first command (the internal topics are created on first use); the
     * MirrorController, on the broker that comes to lead it, creates the others.
     */
    private void ensureCommandsTopic(Deadline deadline) throws Exception {
        if (!partitionCounts(List.of(InternalTopics.COMMANDS), deadline).isEmpty()) {
            return;
        }
        int brokers = admin.describeCluster(new DescribeClusterOptions().timeoutMs(deadline.remainingTimeoutMs(time)))
            .nodes().get().size();
        try {
            admin.createTopics(List.of(InternalTopics.newTopic(InternalTopics.COMMANDS, brokers)),
                new CreateTopicsOptions().timeoutMs(deadline.remainingTimeoutMs(time))).all().get();
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
    }

    /**
     * Replays {@code __mirror_metadata} and {@code __mirror_state} up to their current ends into an image.
     * Before the first command they do not exist yet: no mirrors.
     */
    private MirrorImage readImage(Deadline deadline) throws Exception {
        List<TopicPartition> partitions = new ArrayList<>();
        partitionCounts(List.of(InternalTopics.METADATA, InternalTopics.STATE), deadline).forEach((topic, count) ->
            IntStream.range(0, count).forEach(p -> partitions.add(new TopicPartition(topic, p))));
        if (partitions.isEmpty()) {
            return MirrorImage.EMPTY;
        }
        try (Consumer<byte[], byte[]> consumer = newConsumer(IsolationLevel.READ_COMMITTED)) {
            return MirrorImageReader.replayFromBeginning(consumer, partitions, time, deadline.deadlineMs(), MirrorDelta::replay)
                .orElseThrow(() -> new ClusterMirrorException(MirrorError.MIRROR_CONTROLLER_UNAVAILABLE, "could not read "
                    + InternalTopics.METADATA + " and " + InternalTopics.STATE + " to their ends within "
                    + deadline.timeoutMs() + " ms"));
        }
    }

    /** The partition counts of those of the given internal topics that exist. */
    private Map<String, Integer> partitionCounts(List<String> topics, Deadline deadline) throws Exception {
        Map<String, KafkaFuture<TopicDescription>> futures = admin.describeTopics(topics,
            new DescribeTopicsOptions().timeoutMs(deadline.remainingTimeoutMs(time))).topicNameValues();
        Map<String, Integer> counts = new HashMap<>();
        for (String topic : topics) {
            try {
                counts.put(topic, futures.get(topic).get().partitions().size());
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                    throw e;
                }
            }
        }
        return counts;
    }

    /**
     * The destination partitions' ends as consumers of that isolation level see them: the high watermark, or the last
     * stable offset for read_committed. A partition whose offsets cannot be read now (no leader, topic not created yet)
     * is left out.
     */
    private Map<TopicPartition, Long> destinationEndOffsets(List<TopicPartition> partitions, IsolationLevel isolation,
                                                           Deadline deadline) throws InterruptedException {
        return offsets(admin, partitions, OffsetSpec.latest(), isolation, deadline);
    }

    /** The partitions' offsets of that spec on a cluster; a partition whose offset cannot be read now is left out. */
    private Map<TopicPartition, Long> offsets(Admin cluster, List<TopicPartition> partitions, OffsetSpec spec,
                                              IsolationLevel isolation, Deadline deadline) throws InterruptedException {
        if (partitions.isEmpty()) {
            return Map.of();
        }
        Map<TopicPartition, KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo>> results = ChunkedListOffsets.partitionResults(
            cluster, partitions.stream().collect(Collectors.toMap(tp -> tp, tp -> spec, (a, b) -> a)),
            new ListOffsetsOptions(isolation).timeoutMs(deadline.remainingTimeoutMs(time)));
        Map<TopicPartition, Long> offsets = new HashMap<>();
        for (TopicPartition tp : partitions) {
            try {
                // Bounded by the operation's deadline too: Kafka's admin client can leave a partition's result pending past
                // the call's own timeout (seen while a destination node restarted), and describe must answer.
                offsets.put(tp, results.get(tp).get(deadline.remainingMs(time), TimeUnit.MILLISECONDS).offset());
            } catch (ExecutionException | TimeoutException e) {
                // Left out: shown as unknown.
            }
        }
        return offsets;
    }

    private Producer<byte[], byte[]> producer() {
        if (producer == null) {
            Properties props = clientConfigs(clientId + "-producer");
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, defaultTimeoutMs);
            producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
        }
        return producer;
    }

    /** A consumer of the destination without a group, at that isolation level (read_committed for the control plane). */
    private Consumer<byte[], byte[]> newConsumer(IsolationLevel isolation) {
        Properties props = clientConfigs(clientId + "-consumer-" + (++consumerSequence));
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation.toString());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        // Reading must never create an internal topic with default settings.
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private Properties clientConfigs(String clientId) {
        return clientConfigs(clientProps, clientId);
    }

    private static Properties clientConfigs(Properties cluster, String clientId) {
        Properties props = new Properties();
        props.putAll(cluster);
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        return props;
    }

    private <T> KafkaFuture<T> submit(AbstractOptions<?> options, ClusterAccess access, Call<T> call) {
        long timeoutMs = options.timeoutMs() != null ? options.timeoutMs() : defaultTimeoutMs;
        // As with Kafka's Admin, the timeout counts from the call, including time queued behind other operations.
        Operation<T> operation = new Operation<>(call, access, new Deadline(timeoutMs, time.milliseconds() + timeoutMs));
        try {
            executor.execute(operation);
        } catch (RejectedExecutionException e) {
            operation.future.fail(
                new ClusterMirrorException(MirrorError.UNKNOWN_SERVER_ERROR, "the admin client is closed"));
        }
        return operation.future.future();
    }

    /**
     * Maps a failure to the {@link ClusterMirrorException} that futures fail with. The brokers refuse a principal without
     * {@code access} as they refuse any client: on the internal topics (TOPIC_AUTHORIZATION_FAILED) or, for the command
     * producer's id, on the cluster; both become CLUSTER_AUTHORIZATION_FAILED naming the missing permission.
     */
    static ClusterMirrorException toMirrorException(Throwable failure, long timeoutMs, ClusterAccess access) {
        Throwable cause = failure;
        while ((cause instanceof ExecutionException || cause instanceof CompletionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof ClusterMirrorException e) {
            return e;
        }
        Optional<Throwable> refusal = controlPlaneRefusal(cause);
        if (refusal.isPresent()) {
            return new ClusterMirrorException(MirrorError.CLUSTER_AUTHORIZATION_FAILED, access.what + " need " + access.operation
                + " on the cluster resource, which this client's principal lacks (kafka-acls.sh --add --allow-principal "
                + "<principal> --operation " + access.operation + " --cluster)", refusal.get());
        }
        if (cause instanceof TimeoutException || cause instanceof org.apache.kafka.common.errors.TimeoutException) {
            return new ClusterMirrorException(MirrorError.MIRROR_CONTROLLER_UNAVAILABLE, "the destination cluster did "
                + "not answer within " + timeoutMs + " ms; check bootstrap.servers and the client's security settings",
                cause);
        }
        return new ClusterMirrorException(MirrorError.UNKNOWN_SERVER_ERROR,
            cause.getClass().getSimpleName() + ": " + cause.getMessage(), cause);
    }

    /**
     * The brokers' refusal of the control plane somewhere in {@code failure}'s causes: on the cluster (the command producer's
     * id) or on the internal topics. A producer refused once fails its later sends with a KafkaException whose cause is
     * that refusal, so the whole chain counts.
     */
    private static Optional<Throwable> controlPlaneRefusal(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ClusterAuthorizationException
                    || t instanceof TopicAuthorizationException topics && InternalTopics.ALL.containsAll(topics.unauthorizedTopics())) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }

    @FunctionalInterface
    private interface Call<T> {
        T run(Deadline deadline) throws Exception;
    }

    /** The permission on the CLUSTER resource an operation needs, as kafka-acls.sh names it. */
    enum ClusterAccess {
        ALTER("Alter", "mirror commands"),
        DESCRIBE("Describe", "listing and describing mirrors");

        private final String operation;
        private final String what;

        ClusterAccess(String operation, String what) {
            this.operation = operation;
            this.what = what;
        }
    }

    private record Deadline(long timeoutMs, long deadlineMs) {
        long remainingMs(Time time) {
            return Math.max(0, deadlineMs - time.milliseconds());
        }

        /** The remaining time as a Kafka Admin option, which takes an int. */
        int remainingTimeoutMs(Time time) {
            return (int) Math.min(Integer.MAX_VALUE, remainingMs(time));
        }
    }

    private record Snapshot(MirrorImage image, Map<TopicPartition, Long> destinationEndOffsets, Map<String, StopTransactions> transactions) {
    }

    private static final class Operation<T> implements Runnable {
        private final Call<T> call;
        private final ClusterAccess access;
        private final Deadline deadline;
        private final PendingFuture<T> future = new PendingFuture<>();

        Operation(Call<T> call, ClusterAccess access, Deadline deadline) {
            this.call = call;
            this.access = access;
            this.deadline = deadline;
        }

        @Override
        public void run() {
            try {
                future.complete(call.run(deadline));
            } catch (Throwable t) {
                future.fail(toMirrorException(t, deadline.timeoutMs(), access));
            }
        }
    }

    /**
     * The admin's worker thread: a daemon, so an application that forgets to close the admin can still exit. (Kafka's
     * own helper for this moved package in Kafka 4.4.)
     */
    private static Thread daemon(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        return thread;
    }
}
