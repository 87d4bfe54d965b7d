package io.clustermirror.broker.auth;

import io.clustermirror.broker.node.ExtensionRegistry;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.secrets.DestinationAcls;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.Resource;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Kafka's {@link StandardAuthorizer} (ACLs in the metadata log, unchanged) plus two rules of Cluster Mirror.
 *
 * <p>The control plane ({@link ControlPlaneRules}): a mirror command needs ALTER on the CLUSTER; reading the control
 * plane's topics needs DESCRIBE on the CLUSTER; only the extension (one of {@code super.users}, or {@link InternalOperations}
 * in this JVM) writes {@code __mirror_metadata} and {@code __mirror_state} and uses the controller's transactional id and
 * group.
 *
 * <p>The read-only rule: until a mirror topic is STOPPED on every partition, no client writes to it, deletes its records
 * or the topic, adds partitions or changes its configs; such a request fails with TOPIC_AUTHORIZATION_FAILED (stock
 * clients know no new error code). On a controller-only node the rule is {@link ControllerTopicRule}'s, on the node's own
 * view of the mirror topics, failing closed until it has loaded. The extension's own appends do not pass through here.
 *
 * <p>With {@value #ACLS_ENABLED_CONFIG}{@code =false} (set by the launcher where no authorizer is configured) every
 * decision but the read-only rule's is Kafka's for a node without an authorizer. Cluster-wide CREATE and DELETE are never
 * granted as such: each topic is checked, so that a rule can keep it.
 *
 * <p>How operators configure it, what each refusal logs and how to read Kafka's authorizer log: {@code docs/security.md}
 * and {@code docs/operations.md} ("Destination brokers").
 */
public class MirrorAwareAuthorizer extends StandardAuthorizer {
    /**
     * Whether ACLs are enforced (default true). The launcher sets it to false when it installs this authorizer on a node
     * that configured none, so that the node allows what it allowed without one, mirror-topic writes aside.
     */
    public static final String ACLS_ENABLED_CONFIG = DestinationAcls.ACLS_ENABLED_CONFIG;

    private static final Logger log = LoggerFactory.getLogger(MirrorAwareAuthorizer.class);
    private static final Set<AclOperation> WRITE_OPERATIONS =
        Set.of(AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER, AclOperation.ALTER_CONFIGS);
    /** The cluster permissions that let a request skip the check of each topic. */
    private static final Set<AclOperation> CLUSTER_SHORTCUTS = Set.of(AclOperation.CREATE, AclOperation.DELETE);
    private static final long LOG_INTERVAL_MS = 10_000;
    private static final String MISSING_AGENT = "authorizer.class.name=" + MirrorAwareAuthorizer.class.getName() + " is set but "
        + "the Cluster Mirror agent is missing: add -javaagent:<path to the cluster-mirror jar> to KAFKA_OPTS (or start the node "
        + "with bin/cluster-mirror-server-start.sh); without it this ";
    /** What a half-installed node would do, by role: why it must not start. */
    private static final String MISSING_AGENT_ON_BROKER = "broker would refuse every client write";
    private static final String MISSING_AGENT_ON_CONTROLLER = "controller would not know the mirror topics and would accept "
        + "their deletion and new partitions";

    private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();
    private volatile String clusterId;
    private volatile int nodeId;
    /** This node serves clients' produce requests (a broker or combined node), so it must fail closed until ready. */
    private volatile boolean broker;
    private volatile boolean aclsEnabled = true;
    private volatile Set<String> controllerListeners = Set.of();
    private volatile long startupHoldMaxMs = StartupHold.HOLD_MAX_MS_DEFAULT;
    /** {@code super.users} as {@code type:name}, as StandardAuthorizer compares them. */
    private volatile Set<String> superUsers = Set.of();

    @Override
    public void configure(Map<String, ?> configs) {
        super.configure(configs);
        Object roles = configs.get("process.roles");
        broker = roles != null && roles.toString().contains("broker");
        if (ExtensionRegistry.attacher().isEmpty()) {
            // Either role fails closed: a broker without the extension never learns which topics it may open, and a
            // controller without it never learns which topics to protect.
            String missing = MISSING_AGENT + (broker ? MISSING_AGENT_ON_BROKER : MISSING_AGENT_ON_CONTROLLER);
            log.error(missing);
            throw new ConfigException(missing);
        }
        aclsEnabled = aclsEnabled(configs.get(ACLS_ENABLED_CONFIG));
        Object controllers = configs.get("controller.listener.names");
        controllerListeners = controllers == null ? Set.of() : Arrays.stream(controllers.toString().split(","))
            .map(String::trim).filter(name -> !name.isEmpty()).collect(Collectors.toUnmodifiableSet());
        startupHoldMaxMs = startupHoldMaxMs(configs.get(StartupHold.HOLD_MAX_MS_CONFIG));
        superUsers = superUsers(configs.get(SUPER_USERS_CONFIG));
        if (!aclsEnabled) {
            log.info("ACLs are off ({}=false, set by the launcher because authorizer.class.name is not configured): any "
                + "client may run mirror commands and write the mirror control plane's topics; only mirror topics are "
                + "read-only. To restrict them, set authorizer.class.name={} and super.users (including the principal of "
                + "cluster.mirror.local.*)", ACLS_ENABLED_CONFIG, MirrorAwareAuthorizer.class.getName());
        }
    }

    /** Whether a node enforces ACLs, by its {@value #ACLS_ENABLED_CONFIG} value (null: unset, which enforces them). */
    public static boolean aclsEnabled(Object configured) {
        return configured == null || Boolean.parseBoolean(configured.toString().trim());
    }

    /** {@code super.users} as {@code type:name} entries, as StandardAuthorizer reads the list (null: none). */
    static Set<String> superUsers(Object configured) {
        return configured == null ? Set.of() : Arrays.stream(configured.toString().split(";"))
            .map(String::trim).filter(user -> !user.isEmpty()).collect(Collectors.toUnmodifiableSet());
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

    private static long startupHoldMaxMs(Object configured) {
        if (configured == null) {
            return StartupHold.HOLD_MAX_MS_DEFAULT;
        }
        try {
            long ms = Long.parseLong(configured.toString().trim());
            if (ms >= 0) {
                return ms;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new ConfigException(StartupHold.HOLD_MAX_MS_CONFIG, configured, "must be a number of milliseconds, 0 or more "
            + "(default " + StartupHold.HOLD_MAX_MS_DEFAULT + ")");
    }

    /**
     * On a broker whose extension attaches while it starts ({@link ExtensionRegistry#attachWhileStarting}, the launcher
     * and the agent): attaches it, and opens the client listeners once it has loaded the mirror image ({@link StartupHold}).
     */
    @Override
    public Map<org.apache.kafka.common.Endpoint, ? extends CompletionStage<Void>> start(AuthorizerServerInfo serverInfo) {
        clusterId = serverInfo.clusterResource().clusterId();
        nodeId = serverInfo.brokerId();
        Map<org.apache.kafka.common.Endpoint, ? extends CompletionStage<Void>> aclFutures = super.start(serverInfo);
        if (!broker || StartupHold.onlyControllerListeners(serverInfo, controllerListeners)) {
            return aclFutures;
        }
        return ExtensionRegistry.takeStartupAttach(clusterId, nodeId)
            .map(attach -> StartupHold.attachAndHold(aclFutures, serverInfo, controllerListeners, startupHoldMaxMs, attach,
                () -> ExtensionRegistry.loaded(clusterId, nodeId)))
            .orElseGet(() -> new java.util.HashMap<>(aclFutures));
    }

    @Override
    public List<AuthorizationResult> authorize(AuthorizableRequestContext context, List<Action> actions) {
        List<AuthorizationResult> results = new ArrayList<>(actions.size());
        for (Action action : actions) {
            results.add(aclResult(context, action));
        }
        if (!broker && ExtensionRegistry.controllerViewsExpected()) {
            return authorizeOnController(context, actions, results);
        }
        if (broker && !ExtensionRegistry.ready(clusterId, nodeId)) {
            return refuseWritesUntilReady(context, actions, results);
        }
        Optional<MirrorImage> image = ExtensionRegistry.image(clusterId, nodeId);
        if (image.isEmpty() || (image.get().topics().isEmpty() && image.get().fencedTopics().isEmpty())) {
            // no extension in this process, or no mirror topic: nothing to restrict
            return InternalOperations.allowInternal(context, actions, results);
        }
        for (int i = 0; i < actions.size(); i++) {
            Action action = actions.get(i);
            if (InternalOperations.isInternal(context, action) || !isTopicWrite(action)) {
                continue; // no topic write, or the extension's own operation (allowed below)
            }
            String topic = action.resourcePattern().name();
            Optional<String> mirror = readOnlyMirrorOf(image.get(), topic);
            if (isFenced(image.get(), topic) && action.operation() != AclOperation.DELETE) {
                if (results.get(i) == AuthorizationResult.ALLOWED && action.logIfDenied()) {
                    logRateLimited(topic, () -> log.info("Denied {} on topic '{}' to {}: it was a read-only mirror topic when this "
                        + "broker lost the mirror state (see the ERROR logged then); it stays read-only until it is mirrored again "
                        + "(docs/operations.md: 'Losing an internal topic')", action.operation(), topic, context.principal()));
                }
                results.set(i, AuthorizationResult.DENIED);
            } else if (mirror.isPresent()) {
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
            }
        }
        return InternalOperations.allowInternal(context, actions, results);
    }

    /**
     * InitProducerId of an idempotent producer asks whether the principal may WRITE some topic. A principal that may
     * write mirror commands may write {@code __mirror_commands}, so it may, whatever its topic ACLs.
     */
    @Override
    public AuthorizationResult authorizeByResourceType(AuthorizableRequestContext context, AclOperation op, ResourceType resourceType) {
        AuthorizationResult result = super.authorizeByResourceType(context, op, resourceType);
        if (result == AuthorizationResult.DENIED && resourceType == ResourceType.TOPIC && op == AclOperation.WRITE) {
            Action commandWrite = new Action(AclOperation.WRITE,
                new ResourcePattern(ResourceType.TOPIC, InternalTopics.COMMANDS, PatternType.LITERAL), 1, false, false);
            return aclResult(context, commandWrite);
        }
        return result;
    }

    /**
     * What the ACLs decide for one action under the control plane's rules, before the read-only rule. Without ACLs,
     * ALLOWED, as on a broker without an authorizer, cluster shortcuts aside.
     */
    private AuthorizationResult aclResult(AuthorizableRequestContext context, Action action) {
        return switch (ControlPlaneRules.requirement(action)) {
            case AS_REQUESTED -> asRequested(context, action);
            case CLUSTER_ALTER -> acl(context, onCluster(AclOperation.ALTER, action, action.logIfDenied()));
            case CLUSTER_DESCRIBE -> acl(context, onCluster(AclOperation.DESCRIBE, action, action.logIfDenied()));
            case EXTENSION_ONLY -> extensionOnly(context, action);
        };
    }

    private AuthorizationResult asRequested(AuthorizableRequestContext context, Action action) {
        ResourceType type = action.resourcePattern().resourceType();
        if (type == ResourceType.CLUSTER && CLUSTER_SHORTCUTS.contains(action.operation())) {
            return AuthorizationResult.DENIED; // withheld: the request then checks each topic (class comment)
        }
        if (type == ResourceType.TOPIC && CLUSTER_SHORTCUTS.contains(action.operation())
                && acl(context, onCluster(action.operation(), action, false)) == AuthorizationResult.ALLOWED) {
            return AuthorizationResult.ALLOWED;
        }
        return acl(context, action);
    }

    /**
     * Only the extension: a super user (the principal of its local clients on every broker) or, in this JVM, one of its
     * in-flight internal operations. Without ACLs nothing authenticates the extension of another broker, so it is
     * ALLOWED like everything else.
     */
    private AuthorizationResult extensionOnly(AuthorizableRequestContext context, Action action) {
        if (!aclsEnabled || InternalOperations.isInternal(context, action)) {
            return AuthorizationResult.ALLOWED;
        }
        KafkaPrincipal principal = context.principal();
        if (isSuperUser(principal)) {
            return acl(context, action); // StandardAuthorizer logs it as a super user's
        }
        if (action.logIfDenied()) {
            String resource = action.resourcePattern().resourceType() + " '" + action.resourcePattern().name() + "'";
            logRateLimited(resource, () -> log.info("Denied {} on {} to {}: only the Cluster Mirror extension may do that. If "
                + "this is the extension (the principal of cluster.mirror.local.*), add it to super.users on every node",
                action.operation(), resource, principal));
        }
        return AuthorizationResult.DENIED;
    }

    private boolean isSuperUser(KafkaPrincipal principal) {
        return superUsers.contains(typeAndName(principal));
    }

    /** {@code type:name}, as {@code super.users} lists principals (a subclass may print more). */
    private static String typeAndName(KafkaPrincipal principal) {
        return new KafkaPrincipal(principal.getPrincipalType(), principal.getName()).toString();
    }

    /**
     * A controller-only node: {@link ControllerTopicRule} on the node's loaded view. The metadata sync's requests are
     * trusted by their client id and a principal trusted for the control plane (a super user; anyone without ACLs),
     * since the registry of in-flight operations lives in the broker's JVM ({@link InternalOperations}); that can be
     * copied, so the values a trusted config change may set are {@link MirrorConfigPolicy}'s to check.
     */
    private List<AuthorizationResult> authorizeOnController(AuthorizableRequestContext context, List<Action> actions,
                                                            List<AuthorizationResult> results) {
        Optional<MirrorImage> loaded = ExtensionRegistry.loadedImage(clusterId, nodeId);
        boolean trusted = ControllerTopicRule.trusted(context.clientId(), typeAndName(context.principal()), aclsEnabled, superUsers);
        for (int i = 0; i < actions.size(); i++) {
            Action action = actions.get(i);
            ControllerTopicRule.Verdict verdict = ControllerTopicRule.decide(loaded, action,
                ControllerTopicRule.trustedFor(action, context.requestType(), trusted));
            if (verdict == ControllerTopicRule.Verdict.AS_ACLS) {
                continue;
            }
            if (results.get(i) == AuthorizationResult.ALLOWED && action.logIfDenied()) {
                logControllerDenial(context, action, verdict, loaded);
            }
            results.set(i, AuthorizationResult.DENIED);
        }
        return results;
    }

    private void logControllerDenial(AuthorizableRequestContext context, Action action, ControllerTopicRule.Verdict verdict,
                                     Optional<MirrorImage> loaded) {
        String topic = action.resourcePattern().name();
        switch (verdict) {
            case NOT_LOADED -> logRateLimited(topic, () -> log.info("Denied {} on topic '{}' to {} for now: controller {} has not "
                + "loaded the Cluster Mirror state yet, so it cannot tell mirror topics from others. It reads it through the "
                + "brokers with the cluster.mirror.local.* client configs: check that a broker is up and reachable from this "
                + "node (or set cluster.mirror.local.bootstrap.servers) and that the principal of those configs may read the "
                + "mirror's internal topics", action.operation(), topic, context.principal(), nodeId));
            case READ_ONLY -> logDenial(context, action, topic, readOnlyMirrorOf(loaded.orElseThrow(), topic).orElseThrow());
            case FENCED -> logRateLimited(topic, () -> log.info("Denied {} on topic '{}' to {}: it was a read-only mirror topic when "
                + "the mirror state was lost; it stays read-only until it is mirrored again (docs/operations.md: 'Losing an internal topic')",
                action.operation(), topic, context.principal()));
            case AS_ACLS -> { }
        }
    }

    private AuthorizationResult acl(AuthorizableRequestContext context, Action action) {
        return aclsEnabled ? super.authorize(context, List.of(action)).get(0) : AuthorizationResult.ALLOWED;
    }

    /** The action on the CLUSTER that stands for {@code action}, logged as Kafka logs {@code action} (when asked to). */
    private static Action onCluster(AclOperation operation, Action action, boolean logIfDenied) {
        return new Action(operation, new ResourcePattern(ResourceType.CLUSTER, Resource.CLUSTER_NAME, PatternType.LITERAL),
            action.resourceReferenceCount(), action.logIfAllowed(), logIfDenied);
    }

    /**
     * A broker whose extension has not loaded the mirror image yet cannot tell mirror topics from others: until then it
     * refuses client writes to every topic but the cluster's own ({@link InternalTopics#isClusterOwned}), failing closed;
     * producers see TOPIC_AUTHORIZATION_FAILED. Clients reach it then only through a listener that is not held while it starts
     * ({@link StartupHold}): the inter-broker listener when it is also a client listener, or any listener once
     * {@value StartupHold#HOLD_MAX_MS_CONFIG} has passed.
     */
    private List<AuthorizationResult> refuseWritesUntilReady(AuthorizableRequestContext context, List<Action> actions,
                                                             List<AuthorizationResult> results) {
        for (int i = 0; i < actions.size(); i++) {
            Action action = actions.get(i);
            if (isTopicWrite(action) && !InternalTopics.isClusterOwned(action.resourcePattern().name())
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

    private static boolean isTopicWrite(Action action) {
        return action.resourcePattern().resourceType() == ResourceType.TOPIC
            && action.resourcePattern().patternType() == PatternType.LITERAL
            && WRITE_OPERATIONS.contains(action.operation());
    }

    /**
     * A topic fenced after a loss of the mirror state ({@link MirrorImage#fencedTopics()}): writes are refused, deleting it
     * is not (it is how an operator mirrors it again from scratch).
     */
    private static boolean isFenced(MirrorImage image, String topic) {
        return image.topic(topic).isEmpty() && image.fencedTopics().contains(topic);
    }

    /** The mirror that keeps the topic read-only: the topic is in it and not STOPPED on every known partition. */
    public static Optional<String> readOnlyMirrorOf(MirrorImage image, String topic) {
        Optional<MirrorTopicRecord> record = image.topic(topic);
        if (record.isEmpty()) {
            return Optional.empty();
        }
        MirrorTopicRecord t = record.get();
        // O(1): runs on every write a client asks for.
        boolean stopped = t.desired() == DesiredState.STOPPED && image.stoppedOnEveryPartition(t.mirror(), topic, t.partitions());
        return stopped ? Optional.empty() : Optional.of(t.mirror());
    }

    private void logDenial(AuthorizableRequestContext context, Action action, String topic, String mirror) {
        logRateLimited(topic, () -> log.info("Denied {} on topic '{}' to {}: it is a read-only mirror topic of cluster mirror '{}' "
            + "until it is stopped (kafka-cluster-mirrors.sh --stop --mirror {} --topics {})", action.operation(), topic,
            context.principal(), mirror, mirror, topic));
    }

    /** At most one denial line per resource every {@link #LOG_INTERVAL_MS}: a retrying client must not flood the log. */
    private void logRateLimited(String resource, Runnable logLine) {
        long now = System.currentTimeMillis();
        Long last = lastLogged.get(resource);
        if (last == null || now - last >= LOG_INTERVAL_MS) {
            lastLogged.put(resource, now);
            logLine.run();
        }
    }
}
