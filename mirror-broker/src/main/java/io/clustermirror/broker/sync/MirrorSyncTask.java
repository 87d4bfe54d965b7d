package io.clustermirror.broker.sync;

import io.clustermirror.broker.node.ThreadHealth;
import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import io.clustermirror.common.records.MirrorTopicRecord;
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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The periodic metadata sync of one mirror, on its own thread ({@code cluster-mirror-sync-<mirror>}): every
 * {@code mirror.metadata.refresh.interval.ms} it reads the source (through an Admin client built from the
 * mirror's own client configs) and the destination, asks the {@link SyncPlanner} what to change, and has the
 * {@link SyncExecutor} do it. A slow or unreachable source delays only this mirror.
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
    private final ScheduledExecutorService thread;
    private final ThreadHealth health;
    // Owned by the task thread.
    private Admin source;
    private CommandSender commands;
    private volatile boolean closing;

    MirrorSyncTask(MirrorRecord record, BrokerClientConfigs clientConfigs, Supplier<MirrorImage> image, LocalClients clients,
                   Admin destination, String destinationClientId, Producer<byte[], byte[]> producer, Metrics metrics) {
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
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cluster-mirror-sync-" + record.name());
            t.setDaemon(true);
            return t;
        });
    }

    MirrorRecord record() {
        return record;
    }

    void start() {
        long interval = config.getLong(MirrorConfig.METADATA_REFRESH_INTERVAL_MS);
        thread.scheduleWithFixedDelay(this::runRound, 0, interval, TimeUnit.MILLISECONDS);
        log.info("Mirror '{}': metadata sync every {} ms (topic configs, partitions{}{}{})", record.name(), interval,
            config.patterns(MirrorConfig.GROUPS_INCLUDE).isEmpty() ? "" : ", consumer and share group offsets",
            config.patterns(MirrorConfig.ACL_INCLUDE).isEmpty() ? "" : ", ACLs",
            config.patterns(MirrorConfig.TOPICS_INCLUDE).isEmpty() ? "" : ", auto-discovery of new topics");
    }

    private void runRound() {
        try {
            round();
            health.working();
        } catch (RuntimeException e) {
            if (closing) {
                log.debug("Mirror '{}': sync round ended by close", record.name(), e);
            } else {
                // The next round comes at the sync interval, whatever the health's own backoff says.
                health.failed("the metadata sync of mirror '" + record.name() + "' at its next round", e);
            }
        }
    }

    /** One round: read, plan, execute. */
    void round() {
        MirrorImage current = image.get();
        Optional<MirrorRecord> mirror = current.mirror(record.name());
        if (mirror.isEmpty()) {
            return; // deleted; the manager stops this task
        }
        if (source == null) {
            source = BoundedClients.admin(sourceProperties(), clientConfigs.sourceResponseBound(record.name()));
        }
        if (commands == null) {
            commands = new CommandSender(producer, clients, "sync-commands-" + record.name());
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
        DestinationView destinationView = SyncReader.readDestination(destination, synced, groups, aclsNeeded, problems::report);
        if (Thread.currentThread().isInterrupted()) {
            return; // closing: the views may be incomplete
        }
        List<SyncAction> actions = SyncPlanner.plan(config, current, sourceView, destinationView, System.currentTimeMillis());
        new SyncExecutor(record.name(), destination, destinationClientId, producer, commands, image, problems).execute(actions);
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
        thread.shutdownNow();
        CommandSender c = commands;
        if (c != null) {
            c.wakeup();
        }
        try {
            if (!thread.awaitTermination(20, TimeUnit.SECONDS)) {
                log.warn("Mirror '{}': the metadata sync did not stop within 20 s", record.name());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (source != null) {
            source.close(Duration.ofSeconds(1));
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
