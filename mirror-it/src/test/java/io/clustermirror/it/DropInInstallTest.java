package io.clustermirror.it;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A half-installed drop-in node never runs: started the drop-in way ({@link DropInInstall}, the README's lines) with
 * only one of its two parts, it exits at start with an error naming what is missing. A node that ran would either
 * mirror into writable mirror topics (the agent with another authorizer) or refuse every client write forever (the
 * read-only authorizer without the agent that attaches the extension). A node whose extension settings are refused
 * (a weak password-encoder secret) does not run either. Working drop-in nodes are tested by the tests
 * parameterized by {@link ProcessCluster.LaunchMode}.
 */
@Tag(ProcessCluster.TAG)
class DropInInstallTest {
    private static final String MIRROR_AWARE_AUTHORIZER = "io.clustermirror.broker.auth.MirrorAwareAuthorizer";
    private static final String STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

    @Test
    void theReadOnlyAuthorizerWithoutTheAgentRefusesToStart() throws Exception {
        String output = ProcessCluster.startRefused("no-agent", false, Map.of("authorizer.class.name", MIRROR_AWARE_AUTHORIZER));
        assertTrue(output.contains("authorizer.class.name=" + MIRROR_AWARE_AUTHORIZER + " is set but the Cluster Mirror agent is "
            + "missing: add -javaagent:"), output);
    }

    /**
     * A controller-only node with the read-only authorizer but not the agent would start and enforce nothing for mirror
     * topics (it never learns which they are): a DeleteTopics of one would be accepted.
     */
    @Test
    void aControllerOnlyNodeWithTheReadOnlyAuthorizerButWithoutTheAgentRefusesToStart() throws Exception {
        String output = ProcessCluster.startRefusedController("controller-no-agent", false,
            Map.of("authorizer.class.name", MIRROR_AWARE_AUTHORIZER));
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
        String output = ProcessCluster.startRefused("weak-encoder-secret", true, Map.of("cluster.mirror.password.encoder.secret", weak));
        assertTrue(output.contains("ERROR: Failed to attach the Cluster Mirror extension to broker 1: "
            + "cluster.mirror.password.encoder.secret is too weak") && output.contains("It needs at "
            + "least 32 characters, at least 10 different ones, and at least 128 bits of estimated entropy"), output);
        assertFalse(output.contains(weak), "the output shows the secret");
    }

    @Test
    void theAgentWithAnotherAuthorizerRefusesToStart() throws Exception {
        String output = ProcessCluster.startRefused("other-authorizer", true, Map.of("authorizer.class.name", STANDARD_AUTHORIZER));
        assertTrue(output.contains("ERROR: Invalid configuration: authorizer.class.name=" + STANDARD_AUTHORIZER
            + " would let clients write to read-only mirror topics."), output);
    }
}
