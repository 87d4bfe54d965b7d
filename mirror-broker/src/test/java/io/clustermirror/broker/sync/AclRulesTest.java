package io.clustermirror.broker.sync;

import io.clustermirror.common.MirrorConfig;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AclRulesTest {
    private static final Set<String> MIRRORED = Set.of("orders");
    private static final String ALICE = "User:alice";

    private final Map<String, String> configs = new HashMap<>(Map.of("bootstrap.servers", "s:1"));

    private Optional<String> why(AclBinding acl) {
        return AclRules.whyCopied(MirrorConfig.validate("dr", configs), MIRRORED, acl);
    }

    private boolean copied(AclBinding acl) {
        return why(acl).isPresent();
    }

    private static AclBinding acl(ResourceType type, String name, PatternType pattern, String principal, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, pattern), new AccessControlEntry(principal, "*", AclOperation.ALL, permission));
    }

    private static AclBinding allow(ResourceType type, String name, PatternType pattern) {
        return acl(type, name, pattern, ALICE, AclPermissionType.ALLOW);
    }

    private static AclBinding topic(String name) {
        return allow(ResourceType.TOPIC, name, PatternType.LITERAL);
    }

    private static AclBinding prefixedTopic(String prefix) {
        return allow(ResourceType.TOPIC, prefix, PatternType.PREFIXED);
    }

    @Test
    void anAllowOfANamedPrincipalOnAMirroredTopicIsCopiedWithItsHost() {
        assertEquals(Optional.of("mirrored topic"), why(topic("orders")));
        AclBinding fromOneHost = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL),
            new AccessControlEntry(ALICE, "10.0.0.7", AclOperation.READ, AclPermissionType.ALLOW));
        assertTrue(copied(fromOneHost), "a host restriction only narrows the entry: copied as it is");
    }

    @Test
    void aTopicOutsideTheMirrorOnlyWithTheUnmirroredOptIn() {
        assertFalse(copied(topic("payments")));
        configs.put(MirrorConfig.ACL_SYNC_UNMIRRORED, "true");
        assertEquals(Optional.of("not mirrored, mirror.acl.sync.unmirrored=true"), why(topic("payments")));
    }

    @Test
    void denyEntriesOnlyWithTheDenyOptIn() {
        AclBinding deny = acl(ResourceType.TOPIC, "orders", PatternType.LITERAL, ALICE, AclPermissionType.DENY);
        assertFalse(copied(deny), "a DENY is not copied by default, even on a mirrored topic");
        configs.put(MirrorConfig.ACL_SYNC_DENY, "true");
        assertEquals(Optional.of("mirrored topic, mirror.acl.sync.deny=true"), why(deny));
    }

    @Test
    void wildcardPrincipalsOnlyWithTheWildcardOptIn() {
        List<AclBinding> wildcards = List.of(
            acl(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:*", AclPermissionType.ALLOW),
            acl(ResourceType.TOPIC, "orders", PatternType.LITERAL, "Group:*", AclPermissionType.ALLOW));
        wildcards.forEach(a -> assertFalse(copied(a), "a wildcard principal is not copied by default: " + a));
        assertTrue(copied(acl(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:*x", AclPermissionType.ALLOW)),
            "a name that merely contains * is an ordinary principal");
        configs.put(MirrorConfig.ACL_SYNC_WILDCARD, "true");
        wildcards.forEach(a -> assertEquals(Optional.of("mirrored topic, mirror.acl.sync.wildcard=true"), why(a)));
    }

    @Test
    void theWildcardResourceOnlyWithTheWildcardOptInWhateverElseIsOptedIn() {
        AclBinding allTopics = topic("*");
        AclBinding allGroups = allow(ResourceType.GROUP, "*", PatternType.LITERAL);
        configs.put(MirrorConfig.ACL_SYNC_UNMIRRORED, "true");
        assertFalse(copied(allTopics), "TOPIC:* is not a topic outside the mirror: it is every topic");
        assertFalse(copied(allGroups));
        configs.put(MirrorConfig.ACL_SYNC_WILDCARD, "true");
        assertEquals(Optional.of("the * resource, mirror.acl.sync.wildcard=true"), why(allTopics));
        assertTrue(copied(allGroups));
    }

    @Test
    void theHostileSourceAclsOfTheIssueNeedEveryOptInTheyUse() {
        AclBinding denyAll = acl(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:*", AclPermissionType.DENY);
        AclBinding evil = acl(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:evil", AclPermissionType.ALLOW);
        assertFalse(copied(denyAll));
        assertFalse(copied(evil));
        configs.put(MirrorConfig.ACL_SYNC_WILDCARD, "true");
        assertFalse(copied(denyAll), "a DENY needs its own opt-in");
        assertTrue(copied(evil));
        configs.put(MirrorConfig.ACL_SYNC_DENY, "true");
        assertTrue(copied(denyAll));
    }

    @Test
    void eachResourceTypeButTopicAndGroupOnlyWhenListed() {
        assertTrue(copied(allow(ResourceType.GROUP, "app", PatternType.LITERAL)), "every group is synced by default");
        for (ResourceType type : List.of(ResourceType.TRANSACTIONAL_ID, ResourceType.USER, ResourceType.DELEGATION_TOKEN,
                ResourceType.CLUSTER)) {
            String name = type == ResourceType.CLUSTER ? MirrorConfig.CLUSTER_RESOURCE_NAME : "x";
            AclBinding acl = allow(type, name, PatternType.LITERAL);
            configs.put(MirrorConfig.ACL_SYNC_RESOURCE_TYPES, "TOPIC,GROUP");
            assertFalse(copied(acl), type + " is not copied by default");
            configs.put(MirrorConfig.ACL_SYNC_RESOURCE_TYPES, "topic, " + type.name().toLowerCase(java.util.Locale.ROOT));
            assertEquals(Optional.of("resource type " + type + " opted in"), why(acl));
            assertFalse(copied(allow(ResourceType.GROUP, "app", PatternType.LITERAL)), "GROUP is no longer listed");
            assertTrue(copied(topic("orders")));
        }
    }

    @Test
    void kafkaClusterListedInTheIncludeStillSelectsClusterAcls() {
        AclBinding cluster = allow(ResourceType.CLUSTER, MirrorConfig.CLUSTER_RESOURCE_NAME, PatternType.LITERAL);
        for (String include : List.of(".*", "kafka-.*", "kafka.cluster", "kafka-cluster.*")) {
            configs.put(MirrorConfig.ACL_INCLUDE, include);
            assertFalse(copied(cluster), "a pattern that matches kafka-cluster does not opt CLUSTER in: " + include);
        }
        configs.put(MirrorConfig.ACL_INCLUDE, "orders, kafka-cluster");
        assertTrue(copied(cluster), "the form of earlier releases keeps working");
        assertTrue(copied(topic("orders")));
        configs.put(MirrorConfig.ACL_INCLUDE, "orders");
        configs.put(MirrorConfig.ACL_SYNC_RESOURCE_TYPES, "TOPIC,GROUP,CLUSTER");
        assertFalse(copied(cluster), "mirror.acl.include still filters the name");
    }

    @Test
    void theIncludeFiltersNamesAndInternalNamesOnlyWhenListedExactly() {
        configs.put(MirrorConfig.ACL_INCLUDE, "ord.*");
        assertTrue(copied(topic("orders")));
        configs.put(MirrorConfig.ACL_INCLUDE, "pay.*");
        assertFalse(copied(topic("orders")));
        configs.put(MirrorConfig.ACL_SYNC_UNMIRRORED, "true");
        AclBinding offsets = topic("__consumer_offsets");
        AclBinding underscores = prefixedTopic("_");
        for (String include : List.of(".*", "__.*", "_.*")) {
            configs.put(MirrorConfig.ACL_INCLUDE, include);
            assertFalse(copied(offsets), include);
            assertFalse(copied(underscores), "a prefix that covers __ names: " + include);
        }
        configs.put(MirrorConfig.ACL_INCLUDE, "__consumer_offsets,_");
        assertTrue(copied(offsets));
        assertTrue(copied(underscores));
    }

    @Test
    void aPrefixedTopicAclWhosePrefixLiesInsideAnIncludeOfTheFormLiteralDotStar() {
        assertFalse(copied(prefixedTopic("orders-")), "no mirror.topics.include: no prefix is inside");
        configs.put(MirrorConfig.TOPICS_INCLUDE, "payments, orders-.*");
        assertEquals(Optional.of("prefix inside mirror.topics.include entry 'orders-.*'"), why(prefixedTopic("orders-")));
        assertTrue(copied(prefixedTopic("orders-eu-")));
        assertFalse(copied(prefixedTopic("orders")), "orders covers ordersX, outside orders-.*");
        assertFalse(copied(prefixedTopic("payments")), "a literal include entry covers one name, not a prefix");
        assertFalse(copied(prefixedTopic("ship")));
        configs.put(MirrorConfig.TOPICS_INCLUDE, ".*");
        assertTrue(copied(prefixedTopic("ship")), "every topic is auto-mirrored but the default exclude's __.*");
        assertFalse(copied(prefixedTopic("__mirror")));
        assertFalse(copied(prefixedTopic("_")));
    }

    @Test
    void anIncludeWhoseTextIsNotLiteralProvesNoPrefix() {
        for (String include : List.of("orders.v1.*", "(orders|payments)-.*", "orders-[a-z].*", "order.?-.*", "orders-\\d.*",
                "orders-.+", "orders-.*-x", "(?i)orders-.*")) {
            configs.put(MirrorConfig.TOPICS_INCLUDE, include);
            assertFalse(copied(prefixedTopic("orders-v1.x")), include);
        }
        configs.put(MirrorConfig.TOPICS_INCLUDE, "orders\\.v1\\..*");
        assertTrue(copied(prefixedTopic("orders.v1.x")), "escaped punctuation is literal");
        assertFalse(copied(prefixedTopic("ordersXv1.x")));
    }

    @Test
    void anExcludeThatCanMatchANameUnderThePrefixKeepsItOutside() {
        configs.put(MirrorConfig.TOPICS_INCLUDE, "orders-.*");
        Map<String, Boolean> insideByExclude = Map.of(
            "orders-tmp.*", false,     // orders-tmp1 starts with orders-
            "orders-eu", false,        // one excluded name under the prefix
            "ord.*x", false,           // ord... may be orders-...x
            ".*-tmp", false,           // no literal start: may match anything
            "a|orders-x", false,       // an alternation proves nothing
            "orders-eu-.*", false,     // inside the prefix
            "payments.*", true,
            "orders_.*", true);
        insideByExclude.forEach((exclude, inside) -> {
            configs.put(MirrorConfig.TOPICS_EXCLUDE, exclude);
            assertEquals(inside, copied(prefixedTopic("orders-")), "exclude " + exclude);
        });
        configs.put(MirrorConfig.TOPICS_EXCLUDE, "orders-tmp.*");
        assertTrue(copied(prefixedTopic("orders-eu-")), "a narrower prefix the exclude cannot reach");
    }

    @Test
    void aPrefixedGroupAclFollowsTheGroupPatterns() {
        AclBinding apps = allow(ResourceType.GROUP, "app-", PatternType.PREFIXED);
        assertEquals(Optional.of("prefix inside mirror.groups.include entry '.*'"), why(apps), "every group is synced by default");
        configs.put(MirrorConfig.GROUPS_EXCLUDE, "app-test.*");
        assertFalse(copied(apps));
        assertTrue(copied(allow(ResourceType.GROUP, "app-prod", PatternType.PREFIXED)));
        assertFalse(copied(allow(ResourceType.GROUP, "app-test-1", PatternType.LITERAL)), "an excluded group");
        configs.put(MirrorConfig.GROUPS_INCLUDE, "");
        assertFalse(copied(allow(ResourceType.GROUP, "app-prod", PatternType.PREFIXED)), "group sync off");
        assertFalse(copied(allow(ResourceType.GROUP, "app", PatternType.LITERAL)));
    }

    @Test
    void literalStartIsTextEveryMatchBeginsWith() {
        Map<String, String> starts = Map.of("orders", "orders", "ab*c", "a", "ab?", "a", "ab+", "a", "ab{2}", "a",
            "a\\.b.*", "a.b", "(x)", "", "a|b", "", "\\d+", "", "x[yz]", "x");
        starts.forEach((regex, start) -> assertEquals(start, AclRules.literalStart(regex), regex));
        assertTrue(AclRules.isLiteral("orders-eu_1\\."));
        assertFalse(AclRules.isLiteral("orders."));
        assertFalse(AclRules.isLiteral("orders\\"));
    }
}
