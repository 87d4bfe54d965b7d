package io.clustermirror.it;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A half-installed drop-in node never runs: started the drop-in way ({@link DropInInstall}, the lines of docs/operations.md) with
 * only one of its two parts, it exits at start with an error naming what is missing. A node that ran would either
 * mirror into writable mirror topics (the agent with another authorizer) or refuse every client write forever (the
 * read-only authorizer without the agent that attaches the extension). A node whose extension settings are refused
 * (a weak password-encoder secret) does not run either. Working drop-in nodes are tested by the tests
 * parameterized by the launch mode ({@code LAUNCHER} or {@code DROP_IN}).
 */
@Tag(ProcessCluster.TAG)
class DropInInstallTest {
    private static final String MIRROR_AWARE_AUTHORIZER = "io.clustermirror.broker.auth.MirrorAwareAuthorizer";
    private static final String STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

    /** Formats and starts one combined node the drop-in way, half installed as {@code agent} and {@code properties} say: its output. */
    private static String refused(String name, boolean agent, Map<String, String> properties) throws Exception {
        return ProcessCluster.startRefused(ProcessCluster.topology(name).combined(1).serverProperties(properties).build(), agent);
    }

    @Test
    void theReadOnlyAuthorizerWithoutTheAgentRefusesToStart() throws Exception {
        String output = refused("no-agent", false, Map.of("authorizer.class.name", MIRROR_AWARE_AUTHORIZER));
        assertTrue(output.contains("authorizer.class.name=" + MIRROR_AWARE_AUTHORIZER + " is set but the Cluster Mirror agent is "
            + "missing: add -javaagent:"), output);
    }

    /**
     * A controller-only node with the read-only authorizer but not the agent would start and enforce nothing for mirror
     * topics (it never learns which they are): a DeleteTopics of one would be accepted.
     */
    @Test
    void aControllerOnlyNodeWithTheReadOnlyAuthorizerButWithoutTheAgentRefusesToStart() throws Exception {
        String output = ProcessCluster.startRefused(ProcessCluster.topology("controller-no-agent").dedicated(1, 0)
            .serverProperty("authorizer.class.name", MIRROR_AWARE_AUTHORIZER).build(), false);
        assertTrue(output.contains("authorizer.class.name=" + MIRROR_AWARE_AUTHORIZER + " is set but the Cluster Mirror agent is "
            + "missing: add -javaagent:") && output.contains("this controller would not know the mirror topics"), output);
    }

    /**
     * The public key derived from the password-encoder secret is published: a weak secret could be guessed offline and
     * the mirrors' encrypted passwords read, so a node with one does not run, and says which rule the secret breaks.
     */
    @Test
    void aWeakPasswordEncoderSecretRefusesToStart() throws Exception {
        String weak = "mirror-secret-2024";
        String output = refused("weak-encoder-secret", true, Map.of("cluster.mirror.password.encoder.secret", weak));
        assertTrue(output.contains("ERROR: Failed to attach the Cluster Mirror extension to broker 1: "
            + "cluster.mirror.password.encoder.secret is too weak") && output.contains("It needs at "
            + "least 32 characters, at least 10 different ones, and at least 128 bits of estimated entropy"), output);
        assertFalse(output.contains(weak), "the output shows the secret");
    }

    /**
     * Enforced ACLs without the extension's principal among the super users: the node would run, but its mirror controller
     * could never create its topics and every command would wait 60 s for an answer. On PLAINTEXT the extension is
     * User:ANONYMOUS; with SASL PLAIN for its clients, the username of their JAAS config (whose password never shows).
     */
    @Test
    void enforcedAclsWithoutTheExtensionAmongTheSuperUsersRefuseToStart() throws Exception {
        String plaintext = refused("no-super-user", true, Map.of("authorizer.class.name", MIRROR_AWARE_AUTHORIZER,
            "allow.everyone.if.no.acl.found", "true"));
        assertTrue(plaintext.contains("ERROR: Invalid configuration: super.users does not name User:ANONYMOUS, the principal of the "
            + "Cluster Mirror extension's own clients (cluster.mirror.local.security.protocol=PLAINTEXT)")
            && plaintext.contains("Set super.users=User:ANONYMOUS on every node"), plaintext);

        String password = "extension-password-7";
        String sasl = refused("sasl-no-super-user", true, Map.of("authorizer.class.name", MIRROR_AWARE_AUTHORIZER,
            "super.users", "User:admin",
            "cluster.mirror.local.security.protocol", "SASL_PLAINTEXT",
            "cluster.mirror.local.sasl.mechanism", "PLAIN",
            "cluster.mirror.local.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"mirror-ext\" password=\"" + password + "\";"));
        assertTrue(sasl.contains("ERROR: Invalid configuration: super.users does not name User:mirror-ext")
            && sasl.contains("Set super.users=User:admin;User:mirror-ext on every node"), sasl);
        assertFalse(sasl.contains(password), "the output shows the extension's password");
    }

    @Test
    void theAgentWithAnotherAuthorizerRefusesToStart() throws Exception {
        String output = refused("other-authorizer", true, Map.of("authorizer.class.name", STANDARD_AUTHORIZER));
        assertTrue(output.contains("ERROR: Invalid configuration: authorizer.class.name=" + STANDARD_AUTHORIZER
            + " would let clients write to read-only mirror topics."), output);
    }
}
