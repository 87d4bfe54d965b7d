package io.clustermirror.broker.auth;

import io.clustermirror.broker.ExtensionRegistry;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Kafka's {@link StandardAuthorizer} (ACLs in the metadata log, unchanged) plus the read-only rule of
 * mirror topics: until a mirror topic is STOPPED on every partition, clients may not write to it
 * (Produce, transactional adds), delete its records or the topic, add partitions, or change its configs.
 * Stock clients know no new error codes, so such a request fails with TOPIC_AUTHORIZATION_FAILED and
 * the broker logs a line naming the mirror. The extension's own appends do not pass through here.
 *
 * <p>The launcher installs it on every node of a destination cluster. Configured explicitly
 * ({@code authorizer.class.name=io.clustermirror.broker.auth.MirrorAwareAuthorizer}) it enforces ACLs as the
 * StandardAuthorizer does ({@code super.users}, {@code allow.everyone.if.no.acl.found}); installed by the launcher on a
 * node that configures no authorizer ({@value #ACLS_ENABLED_CONFIG}{@code =false}) it allows whatever a broker without
 * an authorizer allows, and only the read-only rule applies.
 */
public class MirrorAwareAuthorizer extends StandardAuthorizer {
    /**
     * Whether ACLs are enforced (default true). The launcher sets it to false when it installs this authorizer on a node
     * that configured none, so that the node allows what it allowed without one, mirror-topic writes aside.
     */
    public static final String ACLS_ENABLED_CONFIG = "cluster.mirror.authorizer.acls.enabled";

    private static final Logger log = LoggerFactory.getLogger(MirrorAwareAuthorizer.class);
    private static final Set<AclOperation> WRITE_OPERATIONS =
        Set.of(AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER, AclOperation.ALTER_CONFIGS);
    private static final long LOG_INTERVAL_MS = 10_000;
    static final String MISSING_AGENT = "authorizer.class.name=" + MirrorAwareAuthorizer.class.getName() + " is set but the "
        + "Cluster Mirror agent is missing: add -javaagent:<path to the cluster-mirror jar> to KAFKA_OPTS (or start the node "
        + "with bin/cluster-mirror-server-start.sh); without it this broker would refuse every client write";

    private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();
    private volatile String clusterId;
    private volatile int nodeId;
    /** This node serves clients' produce requests (a broker or combined node), so it must fail closed until ready. */
    private volatile boolean broker;
    private volatile boolean aclsEnabled = true;

    @Override
    public void configure(Map<String, ?> configs) {
        super.configure(configs);
        Object roles = configs.get("process.roles");
        broker = roles != null && roles.toString().contains("broker");
        if (broker && ExtensionRegistry.attacher().isEmpty()) {
            log.error(MISSING_AGENT);
            throw new ConfigException(MISSING_AGENT);
        }
        Object acls = configs.get(ACLS_ENABLED_CONFIG);
        aclsEnabled = acls == null || Boolean.parseBoolean(acls.toString().trim());
    }

    /** Whether an authorizer class of that name keeps mirror topics read-only: this class or a subclass of it. */
    public static boolean keepsMirrorTopicsReadOnly(String className) {
        try {
            return MirrorAwareAuthorizer.class.isAssignableFrom(Class.forName(className, false,
                MirrorAwareAuthorizer.class.getClassLoader()));
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** What the ACLs (or, without them, a broker without an authorizer) decide, before the read-only rule. */
    private List<AuthorizationResult> aclResults(AuthorizableRequestContext context, List<Action> actions) {
        return aclsEnabled ? super.authorize(context, actions)
            : new ArrayList<>(java.util.Collections.nCopies(actions.size(), AuthorizationResult.ALLOWED));
    }

    @Override
    public Map<org.apache.kafka.common.Endpoint, ? extends CompletionStage<Void>> start(AuthorizerServerInfo serverInfo) {
        clusterId = serverInfo.clusterResource().clusterId();
        nodeId = serverInfo.brokerId();
        return super.start(serverInfo);
    }

    /**
     * DeleteTopics skips the per-topic check when the principal may DELETE the CLUSTER. While read-only mirror
     * topics exist, that cluster-wide permission is withheld so the per-topic check runs; a topic DELETE is then
     * allowed to whoever had the cluster permission, exactly as before, unless the topic is a read-only mirror topic.
     */
    @Override
    public List<AuthorizationResult> authorize(AuthorizableRequestContext context, List<Action> actions) {
        List<AuthorizationResult> results = new ArrayList<>(aclResults(context, actions));
        if (broker && !ExtensionRegistry.ready(clusterId, nodeId)) {
            return refuseWritesUntilReady(context, actions, results);
        }
        Optional<MirrorImage> image = ExtensionRegistry.image(clusterId, nodeId);
        if (image.isEmpty() || image.get().topics().isEmpty()) {
            // no extension in this process, or no mirror topic: nothing to restrict
            return InternalOperations.allowInternal(context, actions, results);
        }
        for (int i = 0; i < actions.size(); i++) {
            Action action = actions.get(i);
            if (InternalOperations.isInternal(context, action)) {
                continue; // the extension's own operation: allowed below
            }
            if (isClusterDelete(action)) {
                if (results.get(i) == AuthorizationResult.ALLOWED && hasReadOnlyTopic(image.get())) {
                    results.set(i, AuthorizationResult.DENIED);
                }
            } else if (isTopicWrite(action)) {
                String topic = action.resourcePattern().name();
                Optional<String> mirror = readOnlyMirrorOf(image.get(), topic);
                if (mirror.isPresent()) {
                    if (results.get(i) == AuthorizationResult.ALLOWED && action.logIfDenied()) {
                        logDenial(context, action, topic, mirror.get());
                    }
                    results.set(i, AuthorizationResult.DENIED);
                } else if (action.operation() == AclOperation.WRITE && !ExtensionRegistry.producerStateClean(clusterId, nodeId, topic)) {
                    // A new leader of a stopped mirror topic could not remove the mirrored producers (it tried on this
                    // request): a local producer reusing one of their ids would be fenced or rejected.
                    if (results.get(i) == AuthorizationResult.ALLOWED && action.logIfDenied()) {
                        logRateLimited(topic, () -> log.info("Denied WRITE on topic '{}' to {} for now: broker {} could not remove "
                            + "mirrored producer state after a leader change; see the error above", topic, context.principal(), nodeId));
                    }
                    results.set(i, AuthorizationResult.DENIED);
                } else if (action.operation() == AclOperation.DELETE && results.get(i) == AuthorizationResult.DENIED
                        && aclResults(context, List.of(clusterAction(action))).get(0) == AuthorizationResult.ALLOWED) {
                    results.set(i, AuthorizationResult.ALLOWED);
                }
            }
        }
        return InternalOperations.allowInternal(context, actions, results);
    }

    /**
     * A broker that has just started serves clients before its extension is attached and has loaded the mirror
     * image, so it cannot tell mirror topics from others yet: until then it refuses client writes to every topic
     * (internal topics aside), failing closed. This lasts the seconds between the broker's start and the image
     * load; producers see TOPIC_AUTHORIZATION_FAILED then.
     */
    private List<AuthorizationResult> refuseWritesUntilReady(AuthorizableRequestContext context, List<Action> actions,
                                                             List<AuthorizationResult> results) {
        for (int i = 0; i < actions.size(); i++) {
            Action action = actions.get(i);
            if (isTopicWrite(action) && !action.resourcePattern().name().startsWith("__")
                    && results.get(i) == AuthorizationResult.ALLOWED && !InternalOperations.isInternal(context, action)) {
                results.set(i, AuthorizationResult.DENIED);
                if (action.logIfDenied()) {
                    logRateLimited(action.resourcePattern().name(), () -> log.info("Denied {} on topic '{}' to {} for now: broker {} is "
                        + "still loading the Cluster Mirror state, so it cannot yet tell mirror topics from others; retry in a few seconds",
                        action.operation(), action.resourcePattern().name(), context.principal(), nodeId));
                }
            }
        }
        return results;
    }

    private static boolean isClusterDelete(Action action) {
        return action.resourcePattern().resourceType() == ResourceType.CLUSTER && action.operation() == AclOperation.DELETE;
    }

    private static Action clusterAction(Action topicAction) {
        return new Action(AclOperation.DELETE, new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL),
            topicAction.resourceReferenceCount(), false, false);
    }

    private static boolean hasReadOnlyTopic(MirrorImage image) {
        return image.topics().keySet().stream().anyMatch(t -> readOnlyMirrorOf(image, t).isPresent());
    }

    private static boolean isTopicWrite(Action action) {
        return action.resourcePattern().resourceType() == ResourceType.TOPIC
            && action.resourcePattern().patternType() == PatternType.LITERAL
            && WRITE_OPERATIONS.contains(action.operation());
    }

    /** The mirror that keeps the topic read-only: the topic is in it and not STOPPED on every known partition. */
    static Optional<String> readOnlyMirrorOf(MirrorImage image, String topic) {
        Optional<MirrorTopicRecord> record = image.topic(topic);
        if (record.isEmpty()) {
            return Optional.empty();
        }
        MirrorTopicRecord t = record.get();
        boolean stopped = t.desired() == DesiredState.STOPPED
            && image.partitionStatesOf(t.mirror(), topic).size() == t.partitions()
            && image.partitionStatesOf(t.mirror(), topic).stream().allMatch(p -> p.state() == PartitionState.STOPPED);
        return stopped ? Optional.empty() : Optional.of(t.mirror());
    }

    private void logDenial(AuthorizableRequestContext context, Action action, String topic, String mirror) {
        logRateLimited(topic, () -> log.info("Denied {} on topic '{}' to {}: it is a read-only mirror topic of cluster mirror '{}' "
            + "until it is stopped (kafka-cluster-mirrors.sh --stop --mirror {} --topics {})", action.operation(), topic,
            context.principal(), mirror, mirror, topic));
    }

    /** At most one denial line per topic every {@link #LOG_INTERVAL_MS}: a retrying client must not flood the log. */
    private void logRateLimited(String topic, Runnable logLine) {
        long now = System.currentTimeMillis();
        Long last = lastLogged.get(topic);
        if (last == null || now - last >= LOG_INTERVAL_MS) {
            lastLogged.put(topic, now);
            logLine.run();
        }
    }
}
