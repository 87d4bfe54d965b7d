package io.clustermirror.common.secrets;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DestinationAclsTest {
    private static Config broker(ConfigEntry... entries) {
        return new Config(List.of(entries));
    }

    @Test
    void aBrokerThatClusterMirrorRunsWithoutAnAuthorizerHasAclsOff() {
        ConfigEntry authorizer = new ConfigEntry("authorizer.class.name", DestinationAcls.MIRROR_AWARE_AUTHORIZER);
        assertFalse(DestinationAcls.aclsOff(broker(authorizer)), "no setting: ACLs are enforced");
        assertTrue(DestinationAcls.aclsOff(broker(authorizer, new ConfigEntry(DestinationAcls.ACLS_ENABLED_CONFIG, null))),
            "Kafka hides the value of a setting it does not know: only Cluster Mirror sets it, to false");
        assertTrue(DestinationAcls.aclsOff(broker(authorizer, new ConfigEntry(DestinationAcls.ACLS_ENABLED_CONFIG, "false"))));
        assertFalse(DestinationAcls.aclsOff(broker(authorizer, new ConfigEntry(DestinationAcls.ACLS_ENABLED_CONFIG, " TRUE "))));
    }

    @Test
    void theRefusalNamesTheBrokersTheRiskAndBothWaysOut() {
        ClusterMirrorException e = DestinationAcls.inlineSecretRefused("sasl.jaas.config", List.of("1", "2"));
        assertEquals(MirrorError.INVALID_CONFIG, e.error());
        for (String expected : List.of("config 'sasl.jaas.config' holds a secret in clear", "[1, 2] run with ACLs off",
                "any client could have replaced the key", "authorizer.class.name=" + DestinationAcls.MIRROR_AWARE_AUTHORIZER,
                BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG, "${file:/etc/mirror/secrets.properties:sasl.jaas.config}")) {
            assertTrue(e.getMessage().contains(expected), expected + " in " + e.getMessage());
        }
    }
}
