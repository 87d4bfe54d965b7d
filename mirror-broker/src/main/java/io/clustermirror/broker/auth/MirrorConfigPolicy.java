package io.clustermirror.broker.auth;

import io.clustermirror.broker.node.ExtensionRegistry;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.server.policy.AlterConfigPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;

/**
 * The config policy of Cluster Mirror ({@code alter.config.policy.class.name}), which the launcher and the agent install
 * on every node: the KRaft controller runs it on each topic or broker config change it applies, topic creation included,
 * with the values (which its authorizer never sees), and refuses what {@link MirrorConfigRule} refuses, with
 * POLICY_VIOLATION and a message naming the cause and the way out. It decides on the mirror image of its own node: a
 * dedicated controller's view ({@code ControllerMirrorView}) or a combined node's extension; until that has loaded, it
 * fails closed.
 */
public class MirrorConfigPolicy implements AlterConfigPolicy {
    /** The Kafka setting that names the policy. */
    public static final String POLICY_CLASS_NAME_CONFIG = "alter.config.policy.class.name";
    private static final Logger log = LoggerFactory.getLogger(MirrorConfigPolicy.class);

    private volatile int nodeId = -1;

    @Override
    public void configure(Map<String, ?> configs) {
        Object id = configs.get("node.id");
        nodeId = id == null ? -1 : Integer.parseInt(id.toString().trim());
    }

    @Override
    public void validate(RequestMetadata request) throws PolicyViolationException {
        MirrorConfigRule.refusal(ExtensionRegistry.loadedImageOfNode(nodeId), request.resource(), request.configs())
            .ifPresent(reason -> {
                // No values: the message names the configs only.
                log.info("Refused a change of the configs of {} {}: {}", request.resource().type(),
                    request.resource().name().isEmpty() ? "(cluster default)" : "'" + request.resource().name() + "'", reason);
                throw new PolicyViolationException("Cluster Mirror: " + reason);
            });
    }

    @Override
    public void close() {
    }
}
