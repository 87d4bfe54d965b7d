package io.clustermirror.broker.auth;

import io.clustermirror.broker.ExtensionRegistry;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
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
 * <p>Set {@code authorizer.class.name=io.clustermirror.broker.auth.MirrorAwareAuthorizer} on every node of
 * the destination cluster. The StandardAuthorizer settings apply as usual ({@code super.users},
 * {@code allow.everyone.if.no.acl.found}).
 */
public class MirrorAwareAuthorizer extends StandardAuthorizer {
    private static final Logger log = LoggerFactory.getLogger(MirrorAwareAuthorizer.class);
    private static final Set<AclOperation> WRITE_OPERATIONS =
        Set.of(AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER, AclOperation.ALTER_CONFIGS);
    private static final long LOG_INTERVAL_MS = 10_000;

    private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();
    private volatile String clusterId;
    private volatile int nodeId;

    @Override
    public Map<org.apache.kafka.common.Endpoint, ? extends CompletionStage<Void>> start(AuthorizerServerInfo serverInfo) {
        clusterId = serverInfo.clusterResource().clusterId();
        nodeId = serverInfo.brokerId();
        return super.start(serverInfo);
    }

    @Override
    public List<AuthorizationResult> authorize(AuthorizableRequestContext context, List<Action> actions) {
        List<AuthorizationResult> results = super.authorize(context, actions);
        Optional<MirrorImage> image = Optional.empty();
        List<AuthorizationResult> adjusted = null;
        for (int i = 0; i < actions.size(); i++) {
            Action action = actions.get(i);
            if (results.get(i) != AuthorizationResult.ALLOWED || !isTopicWrite(action)) {
                continue;
            }
            if (image.isEmpty()) {
                image = ExtensionRegistry.image(clusterId, nodeId);
                if (image.isEmpty()) {
                    break; // no extension in this process: nothing is known to be a mirror topic
                }
            }
            String topic = action.resourcePattern().name();
            Optional<String> mirror = readOnlyMirrorOf(image.get(), topic);
            if (mirror.isPresent()) {
                if (adjusted == null) {
                    adjusted = new ArrayList<>(results);
                }
                adjusted.set(i, AuthorizationResult.DENIED);
                logDenial(context, action, topic, mirror.get());
            }
        }
        return adjusted == null ? results : adjusted;
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
        long now = System.currentTimeMillis();
        Long last = lastLogged.get(topic);
        if (last == null || now - last >= LOG_INTERVAL_MS) {
            lastLogged.put(topic, now);
            log.info("Denied {} on topic '{}' to {}: it is a read-only mirror topic of cluster mirror '{}' until it is stopped "
                + "(kafka-cluster-mirrors.sh --stop --mirror {} --topics {})", action.operation(), topic, context.principal(), mirror, mirror, topic);
        }
    }
}
