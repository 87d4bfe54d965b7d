package io.clustermirror.broker.sync;

import io.clustermirror.broker.node.ThreadHealth;
import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.metrics.Metrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The metadata sync of every mirror, run on the broker where the MirrorController runs, so
 * that exactly one broker syncs each mirror (during a controller move two may overlap briefly: every action is
 * idempotent or goes through the controller). A supervisor thread compares the image with the running tasks once
 * a second and starts a {@link MirrorSyncTask} per mirror (restarting it, with new source clients, if the mirror was
 * recreated or its configs changed), stopping
 * the tasks of deleted mirrors.
 *
 * <p>Shared by the tasks: one Admin client to the destination with an internal client id
 * ({@link InternalOperations}) and one idempotent producer (commands, the mirror's ACL records in
 * {@code __mirror_state}).
 */
public final class MetadataSyncManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MetadataSyncManager.class);
    private static final long SUPERVISE_INTERVAL_MS = 1_000;

    private final LocalClients clients;
    private final BrokerClientConfigs clientConfigs;
    private final Supplier<MirrorImage> image;
    private final String destinationClientId;
    private final Admin destination;
    private final KafkaProducer<byte[], byte[]> producer;
    private final ScheduledExecutorService supervisor;
    private final Metrics metrics;
    private final ThreadHealth health;
    private final Map<String, MirrorSyncTask> tasks = new HashMap<>(); // supervisor thread only
    private final Map<String, MirrorRecord> unusable = new HashMap<>(); // supervisor thread only

    private MetadataSyncManager(LocalClients clients, int nodeId, Supplier<MirrorImage> image, BrokerClientConfigs clientConfigs,
                                Metrics metrics) {
        this.clients = clients;
        this.metrics = metrics;
        this.health = new ThreadHealth(metrics, log, "sync-supervisor-" + nodeId);
        this.clientConfigs = clientConfigs;
        this.image = image;
        this.destinationClientId = InternalOperations.newClientId("cluster-mirror-" + nodeId + "-sync");
        this.destination = clients.admin(destinationClientId);
        this.producer = clients.producer("sync", null);
        this.supervisor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cluster-mirror-sync-supervisor-" + nodeId);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts syncing every mirror of the image; returns at once.
     *
     * @param metrics the broker's metrics registry, for the health of the sync threads ({@link ThreadHealth})
     */
    public static MetadataSyncManager start(LocalClients clients, int nodeId, Supplier<MirrorImage> image,
                                            BrokerClientConfigs clientConfigs, Metrics metrics) {
        MetadataSyncManager manager = new MetadataSyncManager(clients, nodeId, image, clientConfigs, metrics);
        manager.supervisor.scheduleWithFixedDelay(manager::supervise, 0, SUPERVISE_INTERVAL_MS, TimeUnit.MILLISECONDS);
        return manager;
    }

    private void supervise() {
        try {
            Map<String, MirrorRecord> running = new HashMap<>();
            tasks.forEach((name, task) -> running.put(name, task.record()));
            SyncSupervision changes = SyncSupervision.of(running, image.get().mirrors(), unusable);
            changes.stop().forEach((name, reason) -> {
                tasks.remove(name).close();
                log.info("Mirror '{}': metadata sync stopped ({})", name, reason);
            });
            for (MirrorRecord record : changes.start()) {
                String name = record.name();
                try {
                    MirrorSyncTask task = new MirrorSyncTask(record, clientConfigs, image, clients, destination, destinationClientId,
                        producer, metrics, SyncScheduler.onNewThread("cluster-mirror-sync-" + name));
                    tasks.put(name, task);
                    task.start();
                } catch (RuntimeException e) {
                    unusable.put(name, record);
                    log.error("Mirror '{}': cannot start its metadata sync: {}", name, e.getMessage());
                }
            }
            health.working();
        } catch (RuntimeException e) {
            health.failed("supervising the mirrors' metadata syncs in " + SUPERVISE_INTERVAL_MS + " ms", e);
        }
    }

    @Override
    public void close() {
        supervisor.shutdown();
        try {
            supervisor.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        tasks.values().forEach(MirrorSyncTask::close);
        tasks.clear();
        producer.close(Duration.ofSeconds(5));
        destination.close(Duration.ofSeconds(5));
        health.close();
    }
}
