package io.clustermirror.broker.auth;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which principal the extension's clients have, as a node's configuration tells it, and when a node is refused. */
class ExtensionPrincipalTest {
    private static final String PLAIN_LOGIN = "org.apache.kafka.common.security.plain.PlainLoginModule required ";

    private static Map<String, String> configs(String... keyValues) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    private static Map<String, String> sasl(String mechanism, String jaas) {
        return configs("cluster.mirror.local.security.protocol", "SASL_PLAINTEXT", "cluster.mirror.local.sasl.mechanism", mechanism,
            "cluster.mirror.local.sasl.jaas.config", jaas);
    }

    @Test
    void plaintextClientsAreAnonymous() {
        assertEquals(Optional.of("User:ANONYMOUS"), ExtensionPrincipal.of(configs()));
        assertEquals(Optional.of("User:ANONYMOUS"), ExtensionPrincipal.of(configs("cluster.mirror.local.security.protocol", " plaintext ")));
    }

    @Test
    void saslPlainAndScramClientsAreTheirUsername() {
        assertEquals(Optional.of("User:mirror"), ExtensionPrincipal.of(sasl("PLAIN", PLAIN_LOGIN + "username=\"mirror\" password=\"p\";")));
        assertEquals(Optional.of("User:ops-1"), ExtensionPrincipal.of(sasl("SCRAM-SHA-512",
            "org.apache.kafka.common.security.scram.ScramLoginModule required password=\"x\" username=ops-1;")));
        assertEquals(Optional.of("User:m"), ExtensionPrincipal.of(sasl("scram-sha-256", "x required username = \"m\";")));
    }

    @Test
    void whatTheConfigurationCannotTellIsUnknown() {
        assertEquals(Optional.empty(), ExtensionPrincipal.of(configs("cluster.mirror.local.security.protocol", "SSL")),
            "a client certificate's name depends on the listener's mapping rules");
        assertEquals(Optional.empty(), ExtensionPrincipal.of(sasl("GSSAPI", "x required principal=\"kafka/host@REALM\";")));
        assertEquals(Optional.empty(), ExtensionPrincipal.of(sasl("OAUTHBEARER", "x required;")));
        assertEquals(Optional.empty(), ExtensionPrincipal.of(sasl("PLAIN", "${file:/etc/kafka/secrets.properties:jaas}")),
            "a config provider resolves it later");
        assertEquals(Optional.empty(), ExtensionPrincipal.of(sasl("PLAIN", PLAIN_LOGIN + "password=\"p\";")), "no username");
        Map<String, String> custom = configs("listener.name.internal.principal.builder.class", "com.example.Builder");
        assertEquals(Optional.empty(), ExtensionPrincipal.of(custom));
        Map<String, String> defaultBuilder = configs("principal.builder.class",
            "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder");
        assertEquals(Optional.of("User:ANONYMOUS"), ExtensionPrincipal.of(defaultBuilder), "Kafka's default builder is known");
    }

    @Test
    void aBrokerWhoseExtensionIsNoSuperUserIsRefusedWithTheFix() {
        String refusal = ExtensionPrincipal.refusal(configs("process.roles", "broker,controller", "super.users", "User:admin"))
            .orElseThrow();
        assertTrue(refusal.startsWith("super.users does not name User:ANONYMOUS, the principal of the Cluster Mirror extension's "
            + "own clients (cluster.mirror.local.security.protocol=PLAINTEXT)"), refusal);
        assertTrue(refusal.contains("Set super.users=User:admin;User:ANONYMOUS on every node"), refusal);

        Map<String, String> saslNode = sasl("PLAIN", PLAIN_LOGIN + "username=\"mirror\" password=\"secret-value\";");
        String saslRefusal = ExtensionPrincipal.refusal(saslNode).orElseThrow();
        assertTrue(saslRefusal.contains("does not name User:mirror") && saslRefusal.contains("Set super.users=User:mirror on"),
            saslRefusal);
        assertFalse(saslRefusal.contains("secret-value"), "the password shows");
    }

    @Test
    void aSuperUserAControllerOnlyNodeOrAnUnknownPrincipalIsNotRefused() {
        assertEquals(Optional.empty(), ExtensionPrincipal.refusal(configs("super.users", " User:admin ; User:ANONYMOUS ")));
        assertEquals(Optional.empty(), ExtensionPrincipal.refusal(configs("process.roles", "controller")),
            "a controller-only node need not carry the brokers' client settings");
        assertEquals(Optional.empty(), ExtensionPrincipal.refusal(configs("cluster.mirror.local.security.protocol", "SSL")));
    }
}
