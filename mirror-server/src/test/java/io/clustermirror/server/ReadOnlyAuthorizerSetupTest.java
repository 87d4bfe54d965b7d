package io.clustermirror.server;

import io.clustermirror.broker.auth.MirrorAwareAuthorizer;
import io.clustermirror.broker.auth.MirrorConfigPolicy;

import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every node the launcher runs keeps mirror topics read-only and their configs safe, with no mirror-specific setting. */
class ReadOnlyAuthorizerSetupTest {
    private static Properties props(String authorizer) {
        Properties p = new Properties();
        p.setProperty("node.id", "1");
        if (authorizer != null) {
            p.setProperty("authorizer.class.name", authorizer);
        }
        return p;
    }

    /** A subclass, as an operator may write to add rules of their own. */
    public static final class CustomMirrorAwareAuthorizer extends MirrorAwareAuthorizer {
    }

    @Test
    void aNodeWithoutAnAuthorizerGetsTheReadOnlyOneWithoutAcls() {
        for (String unset : new String[] {null, "", "  "}) {
            Properties p = ReadOnlyAuthorizerSetup.apply(props(unset));
            assertEquals(MirrorAwareAuthorizer.class.getName(), p.getProperty("authorizer.class.name"));
            assertEquals("false", p.getProperty(MirrorAwareAuthorizer.ACLS_ENABLED_CONFIG),
                "allows what a node without an authorizer allows");
        }
    }

    @Test
    void theReadOnlyAuthorizerOrASubclassIsKeptWithItsAcls() {
        for (Class<?> c : new Class<?>[] {MirrorAwareAuthorizer.class, CustomMirrorAwareAuthorizer.class}) {
            Properties configured = props(c.getName());
            configured.setProperty("super.users", "User:ANONYMOUS");
            Properties p = ReadOnlyAuthorizerSetup.apply(configured);
            assertEquals(c.getName(), p.getProperty("authorizer.class.name"));
            assertNull(p.getProperty(MirrorAwareAuthorizer.ACLS_ENABLED_CONFIG), "ACLs stay enforced");
        }
    }

    @Test
    void anyOtherAuthorizerIsRefusedWithTheSettingAndTheFixes() {
        for (String other : new String[] {"org.apache.kafka.metadata.authorizer.StandardAuthorizer", "com.example.NoSuchAuthorizer"}) {
            ConfigException e = assertThrows(ConfigException.class, () -> ReadOnlyAuthorizerSetup.apply(props(other)));
            assertTrue(e.getMessage().startsWith("authorizer.class.name=" + other + " would let clients write to read-only mirror topics"),
                e.getMessage());
            assertTrue(e.getMessage().contains("Remove the line") && e.getMessage().contains(MirrorAwareAuthorizer.class.getName()),
                e.getMessage());
            assertTrue(ClusterMirrorServer.describe(e).startsWith("Invalid configuration: authorizer.class.name="),
                "the launcher prints it as one line: " + ClusterMirrorServer.describe(e));
        }
    }

    /** Its mirror controller could never create its topics: every command would wait 60 s and name no cause. */
    @Test
    void enforcedAclsWithoutTheExtensionsPrincipalInSuperUsersAreRefusedWithTheFix() {
        Properties p = props(MirrorAwareAuthorizer.class.getName());
        p.setProperty("allow.everyone.if.no.acl.found", "true");
        ConfigException e = assertThrows(ConfigException.class, () -> ReadOnlyAuthorizerSetup.apply(p));
        assertTrue(ClusterMirrorServer.describe(e).startsWith("Invalid configuration: super.users does not name User:ANONYMOUS"),
            ClusterMirrorServer.describe(e));
        assertTrue(e.getMessage().contains("Set super.users=User:ANONYMOUS on every node"), e.getMessage());

        Properties aclsOff = props(MirrorAwareAuthorizer.class.getName());
        aclsOff.setProperty(MirrorAwareAuthorizer.ACLS_ENABLED_CONFIG, "false");
        assertDoesNotThrow(() -> ReadOnlyAuthorizerSetup.apply(aclsOff), "without ACLs nothing needs a super user");
    }

    @Test
    void everyNodeGetsTheMirrorConfigPolicyAndAnotherPolicyIsRefused() {
        assertEquals(MirrorConfigPolicy.class.getName(), ReadOnlyAuthorizerSetup.apply(props(null)).getProperty("alter.config.policy.class.name"));
        Properties kept = props(null);
        kept.setProperty("alter.config.policy.class.name", MirrorConfigPolicy.class.getName());
        assertEquals(MirrorConfigPolicy.class.getName(), ReadOnlyAuthorizerSetup.apply(kept).getProperty("alter.config.policy.class.name"));

        Properties other = props(null);
        other.setProperty("alter.config.policy.class.name", "com.example.OwnPolicy");
        ConfigException e = assertThrows(ConfigException.class, () -> ReadOnlyAuthorizerSetup.apply(other));
        assertTrue(e.getMessage().startsWith("alter.config.policy.class.name=com.example.OwnPolicy would let a config change"), e.getMessage());
        assertTrue(e.getMessage().contains("Remove the line") && e.getMessage().contains(MirrorConfigPolicy.class.getName()), e.getMessage());
    }
}
