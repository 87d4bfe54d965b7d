package io.clustermirror.broker.sync;

import io.clustermirror.broker.node.ThreadHealth;
import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SourceLogReadRecord;
import io.clustermirror.common.records.SourceOffsetCommitRecord;
import io.clustermirror.common.InternalTopics;
import org.apache.kafka.clients.producer.ProducerRecord;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.CommonClientConfigs;
import io.clustermirror.common.compat.BoundedClients;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.metrics.Metrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The periodic metadata sync of one mirror, on its own thread ({@code cluster-mirror-sync-<mirror>}): every
 * {@code mirror.metadata.refresh.interval.ms} it reads the source (through an Admin client built from the
 * mirror's own client configs) and the destination, asks the {@link SyncPlanner} what to change, and has the
 * {@link SyncExecutor} do it. A slow or unreachable source delays only this mirror.
 *
 * <p>Rounds and the waits within them are tasks on the mirror's {@link SyncScheduler}; the next round starts the
 * interval after the previous one ended, its waits included, so that rounds never overlap. Once closed, no round starts.
 */
final class MirrorSyncTask implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MetadataSyncManager.class);

    private final MirrorRecord record;
    private final MirrorConfig config;
    private final BrokerClientConfigs clientConfigs;
    private final Supplier<MirrorImage> image;
    private final LocalClients clients;
    private final Admin destination;
    private final String destinationClientId;
    private final Producer<byte[], byte[]> producer;
    private final ProblemLog problems;
    private final SyncScheduler scheduler;
    private final ThreadHealth health;
    /** How often the source's transaction log is read. */
    static final long TRANSACTIONS_STEP_MS = 1_000;
    // Owned by the scheduler's thread.
    private Admin source;
    private CommandSender commands;
    private TransactionLogFollower transactions;
    private GroupCommitFollower groupCommits;
    /** The consumer groups the last round copied (or would copy) the offsets of: the ones whose commits are followed. */
    private volatile Set<String> syncedGroups = Set.of();
    private volatile boolean closing;

    /** @param scheduler where the rounds run; the task owns it and shuts it down on close */
    MirrorSyncTask(MirrorRecord record, BrokerClientConfigs clientConfigs, Supplier<MirrorImage> image, LocalClients clients,
                   Admin destination, String destinationClientId, Producer<byte[], byte[]> producer, Metrics metrics,
                   SyncScheduler scheduler) {
        this.record = record;
        this.config = MirrorConfig.validate(record.name(), record.configs());
        this.clientConfigs = clientConfigs;
        this.image = image;
        this.clients = clients;
        this.destination = destination;
        this.destinationClientId = destinationClientId;
        this.producer = producer;
        this.problems = new ProblemLog(record.name());
        this.health = new ThreadHealth(metrics, log, "sync-" + record.name());
        this.scheduler = scheduler;
    }

    MirrorRecord record() {
        return record;
    }

    void start() {
        long interval = config.getLong(MirrorConfig.METADATA_REFRESH_INTERVAL_MS);
        scheduler.after(0, () -> runRound(interval));
        scheduler.after(0, this::followTransactions);
        log.info("Mirror '{}': metadata sync every {} ms (topic configs, partitions{}{}{})", record.name(), interval,
            config.patterns(MirrorConfig.GROUPS_INCLUDE).isEmpty() ? "" : ", consumer and share group offsets",
            config.patterns(MirrorConfig.ACL_INCLUDE).isEmpty() ? "" : ", ACLs",
            config.patterns(MirrorConfig.TOPICS_INCLUDE).isEmpty() ? "" : ", auto-discovery of new topics");
    }

    /**
     * Follows the source's transaction log every {@link #TRANSACTIONS_STEP_MS}, between the rounds' own tasks: what the
     * source's coordinator prepares is kept within about that long, for a stop's analysis once the source is lost.
     */
    private void followTransactions() {
        if (transactions == null) {
            transactions = new TransactionLogFollower(record.name(), () -> BoundedClients.consumer(transactionLogProperties(),
                clientConfigs.sourceResponseBound(record.name())), producer,
                () -> image.get().topicsOf(record.name()).stream().map(MirrorTopicRecord::topic).collect(java.util.stream.Collectors.toSet()),
                problems, scheduler.time());
        }
        if (groupCommits == null) {
            Properties props = transactionLogProperties();
            groupCommits = new GroupCommitFollower(record.name(), () -> BoundedClients.admin(sourceProperties(),
                clientConfigs.sourceResponseBound(record.name())), props, props.getProperty(CommonClientConfigs.CLIENT_ID_CONFIG), producer,
                () -> image.get().topicsOf(record.name()).stream().map(MirrorTopicRecord::topic).collect(java.util.stream.Collectors.toSet()),
                () -> syncedGroups, problems, scheduler.time());
        }
        long startMs = scheduler.time().milliseconds();
        boolean transactionsRead = transactions.step();
        if (groupCommits.step() && transactionsRead) {
            // Tells a stop's analysis that what the source prepared before startMs is known: with the source reachable,
            // it need not guess what a lagging partition never mirrored.
            ProducerRecord<byte[], byte[]> read = new ProducerRecord<>(InternalTopics.TRANSACTIONS,
                record.name().getBytes(StandardCharsets.UTF_8), RecordCodec.encodeSourceLogRead(new SourceLogReadRecord(record.name(), startMs)));
            read.headers().add(SourceOffsetCommitRecord.KIND_HEADER, SourceLogReadRecord.KIND.getBytes(StandardCharsets.UTF_8));
            producer.send(read);
        }
        scheduler.after(TRANSACTIONS_STEP_MS, this::followTransactions);
    }

    private Properties transactionLogProperties() {
        Properties props = sourceProperties();
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, props.getProperty(CommonClientConfigs.CLIENT_ID_CONFIG) + "-transactions");
        props.remove(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG);
        props.put(org.apache.kafka.clients.consumer.ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(org.apache.kafka.clients.consumer.ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        props.put(org.apache.kafka.clients.consumer.ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 4 * 1024 * 1024);
        // A busy source prepares thousands of transactions a second; a new follower reads 15 minutes of them.
        props.put(org.apache.kafka.clients.consumer.ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        return props;
    }

    /** Runs a round, and once it is done schedules the next one {@code intervalMs} later. */
    private void runRound(long intervalMs) {
        CompletableFuture<Void> round;
        try {
            round = round();
        } catch (RuntimeException e) {
            round = CompletableFuture.failedFuture(e);
        }
        round.whenComplete((ignored, e) -> {
            if (e == null) {
                health.working();
            } else if (closing) {
                log.debug("Mirror '{}': sync round ended by close", record.name(), e);
            } else {
                // The next round comes at the sync interval, whatever the health's own backoff says.
                health.failed("the metadata sync of mirror '" + record.name() + "' at its next round", e);
            }
            scheduler.after(intervalMs, () -> runRound(intervalMs));
        });
    }

    /** One round: read, plan, then the actions; the result completes once they are done. */
    private CompletableFuture<Void> round() {
        MirrorImage current = image.get();
        Optional<MirrorRecord> mirror = current.mirror(record.name());
        if (mirror.isEmpty()) {
            return CompletableFuture.completedFuture(null); // deleted; the manager stops this task
        }
        if (source == null) {
            source = BoundedClients.admin(sourceProperties(), clientConfigs.sourceResponseBound(record.name()));
        }
        if (commands == null) {
            commands = new CommandSender(producer, clients, "sync-commands-" + record.name(), scheduler);
        }
        List<String> synced = SyncPlanner.syncedTopics(current, record.name()).stream().map(MirrorTopicRecord::topic).toList();
        boolean discovering = !config.patterns(MirrorConfig.TOPICS_INCLUDE).isEmpty();
        boolean[] refused = {false};
        SourceView sourceView = SyncReader.readSource(source, config, synced, discovering, (what, cause) -> {
            refused[0] |= cause instanceof AuthenticationException;
            problems.report(what, cause);
        });
        if (refused[0]) {
            // Kafka's Admin client fails every later call with that error, even once the source takes the credentials
            // again: the next round gets a new one.
            source.close(Duration.ZERO);
            source = null;
        }
        boolean aclsNeeded = sourceView.acls() != null || !current.aclsOf(record.name()).isEmpty();
        List<SyncedGroup> groups = sourceView.groupOffsets() == null ? List.of() : List.copyOf(sourceView.groupOffsets().keySet());
        if (sourceView.groupOffsets() != null) {
            syncedGroups = groups.stream().filter(g -> g.kind() == SyncedGroup.Kind.CONSUMER && SyncPlanner.groupIncluded(config, g.id()))
                .map(SyncedGroup::id).collect(java.util.stream.Collectors.toUnmodifiableSet());
        }
        DestinationView destinationView = SyncReader.readDestination(destination, synced, groups, aclsNeeded, problems::report);
        if (scheduler.isShutDown()) {
            return CompletableFuture.completedFuture(null); // closing: the views may be incomplete
        }
        List<SyncAction> actions = SyncPlanner.plan(config, current, sourceView, destinationView, scheduler.time().milliseconds());
        return new SyncExecutor(record.name(), destination, destinationClientId, producer, commands, image, problems, scheduler)
            .execute(actions);
    }

    private Properties sourceProperties() {
        Properties props = clientConfigs.clientProperties(config);
        String configured = props.getProperty(CommonClientConfigs.CLIENT_ID_CONFIG);
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, (configured == null || configured.isBlank()
            ? "cluster-mirror-" + record.name() : configured) + "-sync");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) SyncReader.TIMEOUT_MS);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) SyncReader.TIMEOUT_MS);
        io.clustermirror.common.ListenerProbe.check(props);
        return props;
    }

    @Override
    public void close() {
        closing = true;
        scheduler.shutdown();
        CommandSender c = commands;
        if (c != null) {
            c.wakeup();
        }
        try {
            if (!scheduler.awaitTermination(TimeUnit.SECONDS.toMillis(20))) {
                log.warn("Mirror '{}': the metadata sync did not stop within 20 s", record.name());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (source != null) {
            source.close(Duration.ofSeconds(1));
        }
        if (transactions != null) {
            transactions.close();
        }
        if (groupCommits != null) {
            groupCommits.close();
        }
        if (commands != null) {
            try {
                commands.close();
            } catch (RuntimeException e) {
                log.debug("Closing the command consumer of mirror '{}'", record.name(), e);
            }
        }
        health.close();
    }
}
