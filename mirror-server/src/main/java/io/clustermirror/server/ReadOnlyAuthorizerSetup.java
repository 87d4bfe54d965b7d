package io.clustermirror.server;

import io.clustermirror.broker.auth.ExtensionPrincipal;
import io.clustermirror.broker.auth.MirrorAwareAuthorizer;
import io.clustermirror.broker.auth.MirrorConfigPolicy;

import org.apache.kafka.common.config.ConfigException;

import java.util.Map;
import java.util.Properties;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Makes every node the launcher or the agent runs refuse client writes to mirror topics, whatever its configuration says: a
 * setting an operator can forget must not turn the guarantee off.
 *
 * <ul>
 *   <li>No {@code authorizer.class.name}: Cluster Mirror installs {@link MirrorAwareAuthorizer} with ACLs off, so the node
 *       allows what a node without an authorizer allows, writes to mirror topics aside.</li>
 *   <li>{@link MirrorAwareAuthorizer} (or a subclass): kept, enforcing ACLs as Kafka's StandardAuthorizer does; refused on
 *       a broker whose extension's principal is no super user ({@link ExtensionPrincipal}), which would wait forever for
 *       its internal topics.</li>
 *   <li>Any other authorizer: refused, with an error naming the setting and both ways out.</li>
 * </ul>
 * Likewise every node gets {@link MirrorConfigPolicy} as {@code alter.config.policy.class.name}, which keeps config changes
 * from destroying mirror topics' data (the controller runs it); another policy there is refused.
 */
final class ReadOnlyAuthorizerSetup {
    static final String AUTHORIZER_CLASS_NAME = "authorizer.class.name";

    private ReadOnlyAuthorizerSetup() {
    }

    /** The server properties to run with: {@code props} itself, with the authorizer installed if none was set. */
    static Properties apply(Properties props) {
        installConfigPolicy(props);
        String configured = props.getProperty(AUTHORIZER_CLASS_NAME, "").trim();
        if (configured.isEmpty()) {
            props.setProperty(AUTHORIZER_CLASS_NAME, MirrorAwareAuthorizer.class.getName());
            props.setProperty(MirrorAwareAuthorizer.ACLS_ENABLED_CONFIG, "false");
            return props;
        }
        if (!MirrorAwareAuthorizer.keepsMirrorTopicsReadOnly(configured)) {
            throw new ConfigException(AUTHORIZER_CLASS_NAME + "=" + configured + " would let clients write to read-only mirror "
                + "topics. Remove the line (Cluster Mirror then installs " + MirrorAwareAuthorizer.class.getName() + ", allowing what "
                + "a node without an authorizer allows) or set it to " + MirrorAwareAuthorizer.class.getName()
                + " (Kafka's StandardAuthorizer, ACLs included, plus read-only mirror topics)");
        }
        if (MirrorAwareAuthorizer.aclsEnabled(props.getProperty(MirrorAwareAuthorizer.ACLS_ENABLED_CONFIG))) {
            Map<String, String> configs = props.stringPropertyNames().stream()
                .collect(Collectors.toMap(Function.identity(), props::getProperty));
            ExtensionPrincipal.refusal(configs).ifPresent(refusal -> {
                throw new ConfigException(refusal);
            });
        }
        return props;
    }

    private static void installConfigPolicy(Properties props) {
        String policy = MirrorConfigPolicy.class.getName();
        String configured = props.getProperty(MirrorConfigPolicy.POLICY_CLASS_NAME_CONFIG, "").trim();
        if (configured.isEmpty()) {
            props.setProperty(MirrorConfigPolicy.POLICY_CLASS_NAME_CONFIG, policy);
        } else if (!configured.equals(policy)) {
            throw new ConfigException(MirrorConfigPolicy.POLICY_CLASS_NAME_CONFIG + "=" + configured + " would let a config change "
                + "(retention.ms=1 on a mirror topic, log.retention.ms for the cluster) delete the data of read-only mirror topics. "
                + "Remove the line (Cluster Mirror then installs " + policy + ") or set it to " + policy);
        }
    }
}
