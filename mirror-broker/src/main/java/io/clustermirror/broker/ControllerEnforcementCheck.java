package io.clustermirror.broker;

import io.clustermirror.broker.ControllerEnforcement.Outcome;
import io.clustermirror.broker.ControllerEnforcement.Probe;
import io.clustermirror.broker.ControllerEnforcement.State;
import io.clustermirror.broker.auth.MirrorAwareAuthorizer;
import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.common.image.MirrorImage;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Metrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Proves on a running broker, end to end, that the controllers keep mirror topics read-only ({@link ControllerEnforcement}
 * says what the answers mean): once the broker's image holds a read-only mirror topic, and again every few minutes, it
 * sends a validateOnly CreatePartitions of that topic from its own local clients (a super user when ACLs are on) under a
 * client id that is not the metadata sync's. Accepted twice in a row: an ERROR naming the active controller and the fix,
 * and the gauge {@value #METRIC} (group {@code cluster-mirror}) at 1 until a later check is refused.
 */
final class ControllerEnforcementCheck implements AutoCloseable {
    static final String METRIC = "controller-enforcement-failed";
    private static final Logger log = LoggerFactory.getLogger(ControllerEnforcementCheck.class);
    private static final long REQUEST_TIMEOUT_MS = 30_000;

    private final LocalClients clients;
    private final int nodeId;
    private final Supplier<MirrorImage> image;
    private final Metrics metrics;
    private final MetricName metric;
    private final ScheduledExecutorService executor;
    private volatile State state = State.UNCHECKED;
    /** When the last ERROR was logged; -1 since the check last passed. Used by the check's thread only. */
    private long lastErrorMs = -1;

    private ControllerEnforcementCheck(LocalClients clients, int nodeId, Supplier<MirrorImage> image, Metrics metrics) {
        this.clients = clients;
        this.nodeId = nodeId;
        this.image = image;
        this.metrics = metrics;
        this.metric = metrics.metricName(METRIC, "cluster-mirror", "1 while the controllers accept changes of mirror topics "
            + "that the read-only rule forbids (a controller runs without the Cluster Mirror agent; the broker log names it), "
            + "0 otherwise");
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cluster-mirror-controller-enforcement-check-" + nodeId);
            t.setDaemon(true);
            return t;
        });
    }

    /** Registers the gauge and starts checking on its own thread. */
    static ControllerEnforcementCheck start(LocalClients clients, int nodeId, Supplier<MirrorImage> image, Metrics metrics) {
        ControllerEnforcementCheck check = new ControllerEnforcementCheck(clients, nodeId, image, metrics);
        metrics.addMetric(check.metric, (Gauge<Integer>) (config, now) -> check.state == State.UNENFORCED ? 1 : 0);
        check.executor.execute(check::checkAndReschedule);
        return check;
    }

    private void checkAndReschedule() {
        long delayMs;
        try {
            delayMs = check();
        } catch (RuntimeException e) {
            log.warn("Broker {} could not check that the controllers enforce the read-only rule of mirror topics; retrying in {} ms",
                nodeId, ControllerEnforcement.CONFIRM_DELAY_MS, e);
            delayMs = ControllerEnforcement.CONFIRM_DELAY_MS;
        }
        if (!executor.isShutdown()) {
            executor.schedule(this::checkAndReschedule, delayMs, TimeUnit.MILLISECONDS);
        }
    }

    /** One check, if there is a mirror topic to probe with; returns when to check next. */
    private long check() {
        Optional<Probe> probe = ControllerEnforcement.probe(image.get());
        if (probe.isEmpty()) {
            return ControllerEnforcement.CONFIRM_DELAY_MS;
        }
        Outcome outcome;
        String activeController;
        try (Admin admin = clients.admin("cluster-mirror-" + nodeId + "-controller-enforcement-check")) {
            outcome = ask(admin, probe.get());
            activeController = outcome == Outcome.ACCEPTED ? activeController(admin) : "";
        }
        State before = state;
        state = ControllerEnforcement.next(before, outcome);
        report(before, probe.get(), outcome, activeController);
        return ControllerEnforcement.delayMs(state, outcome);
    }

    private static Outcome ask(Admin admin, Probe probe) {
        CreatePartitionsOptions validateOnly = new CreatePartitionsOptions().validateOnly(true).timeoutMs((int) REQUEST_TIMEOUT_MS);
        try {
            admin.createPartitions(Map.of(probe.topic(), NewPartitions.increaseTo(probe.partitions() + 1)), validateOnly)
                .all().get(REQUEST_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            return ControllerEnforcement.outcome(null);
        } catch (ExecutionException e) {
            return ControllerEnforcement.outcome(e.getCause());
        } catch (TimeoutException e) {
            return ControllerEnforcement.outcome(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.INCONCLUSIVE;
        }
    }

    /** "node 1", the active controller, or a note that it could not be found. */
    private static String activeController(Admin admin) {
        try {
            return "node " + admin.describeMetadataQuorum().quorumInfo().get(REQUEST_TIMEOUT_MS, TimeUnit.MILLISECONDS).leaderId();
        } catch (ExecutionException | TimeoutException e) {
            return "unknown node (" + e + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown node";
        }
    }

    private void report(State before, Probe probe, Outcome outcome, String activeController) {
        if (outcome == Outcome.INCONCLUSIVE) {
            log.debug("Broker {} could not check the controllers with mirror topic '{}'; retrying in {} ms", nodeId, probe.topic(),
                ControllerEnforcement.CONFIRM_DELAY_MS);
            return;
        }
        switch (state) {
            case ENFORCED -> {
                lastErrorMs = -1;
                if (before != State.ENFORCED) {
                    log.info("Broker {} checked that the controllers enforce the read-only rule of mirror topics: a validateOnly "
                        + "CreatePartitions of mirror topic '{}' (mirror '{}') from a client other than the extension was refused",
                        nodeId, probe.topic(), probe.mirror());
                }
            }
            case SUSPECT -> log.info("Broker {}: the controllers accepted a validateOnly CreatePartitions of mirror topic '{}' (mirror "
                + "'{}'), which the read-only rule forbids; a controller may not have loaded the topic yet: checking again in {} ms",
                nodeId, probe.topic(), probe.mirror(), ControllerEnforcement.CONFIRM_DELAY_MS);
            case UNENFORCED -> {
                long now = System.currentTimeMillis();
                if (ControllerEnforcement.errorDue(lastErrorMs, now)) {
                    lastErrorMs = now;
                    logUnenforced(probe, activeController);
                }
            }
            case UNCHECKED -> { } // an inconclusive first probe, handled above
        }
    }

    private void logUnenforced(Probe probe, String activeController) {
        log.error("Broker {}: the active controller ({}) accepted a validateOnly CreatePartitions of mirror topic "
            + "'{}' (mirror '{}') from a client other than the extension: the controllers do not enforce the read-only rule of "
            + "mirror topics, so a client with the ACLs for it can delete a mirror topic, add partitions or change its configs. "
            + "Fix: start every controller node with the Cluster Mirror agent (-javaagent:<path to the cluster-mirror jar> in "
            + "KAFKA_OPTS, or bin/cluster-mirror-server-start.sh) and with authorizer.class.name unset or {}. The metric {} "
            + "(group cluster-mirror) is 1 until a check is refused; checking again every {} ms", nodeId, activeController,
            probe.topic(), probe.mirror(), MirrorAwareAuthorizer.class.getName(), METRIC, ControllerEnforcement.CONFIRM_DELAY_MS);
    }

    @Override
    public void close() {
        executor.shutdownNow();
        metrics.removeMetric(metric);
    }
}
