package io.clustermirror.common.secrets;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorError;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;

import java.util.List;

/**
 * Whether a destination broker enforces ACLs, as a client tells it before it encrypts an inline secret: pure, no I/O.
 *
 * <p>Why a client asks: with ACLs off any client may write {@code __mirror_metadata}, so the key published there may be
 * an attacker's, who would then decrypt the next inline secret from {@code __mirror_commands}. Nothing in those topics
 * can prove otherwise, so the client asks each broker itself, with DescribeConfigs of the broker: an attacker cannot
 * change a broker's static configs nor make its authorizer deny a request.
 *
 * <ul>
 *   <li>The broker's configs name {@value #ACLS_ENABLED_CONFIG} (Cluster Mirror sets it to false where no
 *       {@code authorizer.class.name} is configured; Kafka hides the value of a setting it does not know): ACLs off,
 *       unless the value shows {@code true}.</li>
 *   <li>They do not: ACLs are enforced ({@code authorizer.class.name} names Cluster Mirror's authorizer, which a broker
 *       running the extension requires).</li>
 *   <li>The DescribeConfigs is denied: an authorizer that denies anything enforces ACLs (with ACLs off only writes to
 *       mirror topics are ever denied).</li>
 * </ul>
 */
public final class DestinationAcls {
    /** Whether the broker's authorizer enforces ACLs; set to false by Cluster Mirror where no authorizer is configured. */
    public static final String ACLS_ENABLED_CONFIG = "cluster.mirror.authorizer.acls.enabled";
    static final String MIRROR_AWARE_AUTHORIZER = "io.clustermirror.broker.auth.MirrorAwareAuthorizer";

    private DestinationAcls() {
    }

    /** @param brokerConfig a broker's configs, as DescribeConfigs of that broker returns them */
    public static boolean aclsOff(Config brokerConfig) {
        ConfigEntry aclsEnabled = brokerConfig.get(ACLS_ENABLED_CONFIG);
        return aclsEnabled != null && (aclsEnabled.value() == null || !"true".equalsIgnoreCase(aclsEnabled.value().trim()));
    }

    /**
     * The error for an inline secret on a destination whose brokers {@code brokers} run with ACLs off; it names both
     * ways out and never the value.
     */
    public static ClusterMirrorException inlineSecretRefused(String configKey, List<String> brokers) {
        return new ClusterMirrorException(MirrorError.INVALID_CONFIG, "config '" + configKey + "' holds a secret in clear, and "
            + "destination broker(s) " + brokers + " run with ACLs off (" + ACLS_ENABLED_CONFIG + "=false: no authorizer.class.name "
            + "is configured), so any client could have replaced the key that would encrypt it in " + InternalTopics.METADATA
            + " and could read it from " + InternalTopics.COMMANDS + "; either turn ACLs on (authorizer.class.name="
            + MIRROR_AWARE_AUTHORIZER + " and super.users, with authenticated listeners, on every destination node), or "
            + SealingKey.providerReference(configKey));
    }
}
