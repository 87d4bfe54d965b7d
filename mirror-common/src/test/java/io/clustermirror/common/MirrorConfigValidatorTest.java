package io.clustermirror.common;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MirrorConfigValidatorTest {
    private static final String BOOTSTRAP = "source:9092";

    private static Map<String, String> configs(String... keyValues) {
        Map<String, String> configs = new HashMap<>();
        configs.put(MirrorConfig.BOOTSTRAP_SERVERS, BOOTSTRAP);
        for (int i = 0; i < keyValues.length; i += 2) {
            configs.put(keyValues[i], keyValues[i + 1]);
        }
        return configs;
    }

    private static ClusterMirrorException rejected(String name, Map<String, String> configs) {
        ClusterMirrorException e = assertThrows(ClusterMirrorException.class, () -> MirrorConfig.validate(name, configs));
        assertEquals(MirrorError.INVALID_CONFIG, e.error());
        assertTrue(e.getMessage().startsWith("INVALID_CONFIG: "), e.getMessage());
        return e;
    }

    @Test
    void acceptsMinimalConfigAndAppliesDefaults() {
        MirrorConfig config = MirrorConfig.validate("dr-1.east_2", configs());
        assertEquals("dr-1.east_2", config.name());
        assertEquals(500, config.getInt(MirrorConfig.FETCH_MAX_WAIT_MS));
        assertTrue(config.readCommitted());
        assertEquals(BOOTSTRAP, config.storedClientConfigs().get(MirrorConfig.BOOTSTRAP_SERVERS));
    }

    @Test
    void acceptsFullConfig() {
        MirrorConfig config = MirrorConfig.validate("dr", configs(
            "security.protocol", "SASL_SSL",
            "sasl.mechanism", "PLAIN",
            "sasl.jaas.config", "${file:/etc/mirror/secrets.properties:jaas}",
            "ssl.truststore.password", "changeit",
            "request.timeout.ms", "30000",
            "max.in.flight.requests.per.connection", "5",
            MirrorConfig.FETCH_ISOLATION_LEVEL, "read_uncommitted",
            MirrorConfig.FETCH_MIN_BYTES, "0",
            MirrorConfig.PARTITION_RETRY_BACKOFF_MS, "0",
            MirrorConfig.FETCH_MAX_BYTES, " 1048576 ",
            MirrorConfig.TOPICS_INCLUDE, "orders.*, payments",
            MirrorConfig.TOPICS_EXCLUDE, ""));
        assertFalse(config.readCommitted());
        assertEquals(1048576, config.getInt(MirrorConfig.FETCH_MAX_BYTES));
        assertFalse(config.storedClientConfigs().containsKey(MirrorConfig.FETCH_MAX_BYTES));
        assertEquals("SASL_SSL", config.storedClientConfigs().get("security.protocol"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a/b", "has space", "colon:", "ü"})
    void rejectsBadNames(String name) {
        assertTrue(rejected(name, configs()).getMessage().contains("mirror name"));
    }

    @Test
    void topicConfigExclusionsAreTheNeverCopiedListPlusTheConfiguredRegexes() {
        MirrorConfig defaults = MirrorConfig.validate("dr", configs());
        assertTrue(defaults.isTopicConfigExcluded("min.insync.replicas"));
        assertTrue(defaults.isTopicConfigExcluded("message.timestamp.type"));
        assertFalse(defaults.isTopicConfigExcluded("retention.ms"));
        MirrorConfig custom = MirrorConfig.validate("dr", configs("mirror.topic.properties.exclude", "segment\\..*, max.message.bytes"));
        assertTrue(custom.isTopicConfigExcluded("segment.ms"));
        assertTrue(custom.isTopicConfigExcluded("max.message.bytes"));
        assertTrue(custom.isTopicConfigExcluded("unclean.leader.election.enable"));
        assertFalse(custom.isTopicConfigExcluded("retention.ms"));
        assertFalse(custom.isTopicConfigExcluded("xmax.message.bytes"), "patterns match whole names");
    }

    @Test
    void aclIncludeIsAListOfRegexesOverResourceNames() {
        MirrorConfig config = MirrorConfig.validate("dr", configs("mirror.acl.include", "orders\\..*,payments"));
        assertTrue(config.matchesAny(MirrorConfig.ACL_INCLUDE, "orders.eu"));
        assertTrue(config.matchesAny(MirrorConfig.ACL_INCLUDE, "payments"));
        assertFalse(config.matchesAny(MirrorConfig.ACL_INCLUDE, "payments-x"));
        assertTrue(rejected("dr", configs("mirror.acl.include", "orders,(")).getMessage().contains("mirror.acl.include"));
    }

    @Test
    void groupsAndAclsAreSyncedByDefaultAndAnEmptyListTurnsThemOff() {
        MirrorConfig defaults = MirrorConfig.validate("dr", configs());
        for (String key : new String[]{MirrorConfig.GROUPS_INCLUDE, MirrorConfig.ACL_INCLUDE}) {
            assertTrue(defaults.matchesAny(key, "orders.eu"), key + " includes every name by default");
            assertTrue(defaults.matchesAny(key, "*"), key + " includes every name by default");
            MirrorConfig off = MirrorConfig.validate("dr", configs(key, " "));
            assertTrue(off.patterns(key).isEmpty(), key + " set to blank lists nothing");
            assertFalse(off.matchesAny(key, "orders.eu"), key + " set to blank includes nothing");
        }
        assertFalse(defaults.matchesAny(MirrorConfig.GROUPS_EXCLUDE, "orders.eu"), "no group excluded by default");
    }

    @Test
    void listsExactlyOnlyCountsAnEntryWrittenAsTheName() {
        String cluster = MirrorConfig.CLUSTER_RESOURCE_NAME;
        assertFalse(MirrorConfig.validate("dr", configs()).listsExactly(MirrorConfig.ACL_INCLUDE, cluster), "not by the default .*");
        assertFalse(MirrorConfig.validate("dr", configs("mirror.acl.include", "kafka-.*,kafka.cluster,kafka-cluster-x"))
            .listsExactly(MirrorConfig.ACL_INCLUDE, cluster), "patterns that match it do not list it");
        assertTrue(MirrorConfig.validate("dr", configs("mirror.acl.include", "orders.*, kafka-cluster "))
            .listsExactly(MirrorConfig.ACL_INCLUDE, cluster));
    }

    @Test
    void rejectsNullAndOverlongNames() {
        rejected(null, configs());
        rejected("x".repeat(250), configs());
        MirrorConfig.validate("x".repeat(249), configs());
    }

    @Test
    void requiresBootstrapServers() {
        assertTrue(rejected("dr", Map.of()).getMessage().contains("'bootstrap.servers'"));
        assertTrue(rejected("dr", Map.of("bootstrap.servers", "  ")).getMessage().contains("'bootstrap.servers'"));
        rejected("dr", null);
    }

    @Test
    void rejectsUnknownMirrorKeyListingKnownOnes() {
        String message = rejected("dr", configs("mirror.fetch.max.byte", "1")).getMessage();
        assertTrue(message.contains("'mirror.fetch.max.byte'"), message);
        assertTrue(message.contains(MirrorConfig.FETCH_MAX_BYTES), message);
        assertTrue(message.contains(MirrorConfig.ACL_INCLUDE), message);
    }

    @Test
    void rejectsNullKeysAndValues() {
        Map<String, String> nullValue = configs();
        nullValue.put("client.id", null);
        assertTrue(rejected("dr", nullValue).getMessage().contains("'client.id'"));
        Map<String, String> nullKey = configs();
        nullKey.put(null, "x");
        rejected("dr", nullKey);
    }

    @Test
    void rejectsUnknownClientKey() {
        String message = rejected("dr", configs("bootstrap.server", "x:1")).getMessage();
        assertTrue(message.contains("unknown config 'bootstrap.server'"), message);
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "1.5", "", "0", "-1", "2147483648"})
    void rejectsBadPositiveInts(String value) {
        String message = rejected("dr", configs(MirrorConfig.FETCH_MAX_BYTES, value)).getMessage();
        assertTrue(message.contains("'" + MirrorConfig.FETCH_MAX_BYTES + "'"), message);
    }

    @Test
    void checksNumericRanges() {
        rejected("dr", configs(MirrorConfig.FETCH_BACKOFF_MS, "-1"));
        rejected("dr", configs(MirrorConfig.PARTITION_RETRY_BACKOFF_MAX_MS, "0"));
        rejected("dr", configs(MirrorConfig.STATE_PERSIST_INTERVAL_MS, "0"));
        MirrorConfig config = MirrorConfig.validate("dr", configs(MirrorConfig.METADATA_REFRESH_INTERVAL_MS, "9999999999"));
        assertEquals(9999999999L, config.getLong(MirrorConfig.METADATA_REFRESH_INTERVAL_MS));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "1.5", "1MB", "9223372036854775808"})
    void rejectsBadFetchRateLimitNamingTheKey(String value) {
        String message = rejected("dr", configs(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC, value)).getMessage();
        assertTrue(message.contains("'" + MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC + "'"), message);
        assertTrue(message.contains("expected a whole number") || message.contains("delete the config for no limit"), message);
    }

    @Test
    void fetchRateLimitIsUnlimitedByDefault() {
        assertEquals(Long.MAX_VALUE, MirrorConfig.validate("dr", configs()).getLong(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC));
        assertEquals(1L, MirrorConfig.validate("dr", configs(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC, "1"))
            .getLong(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC));
    }

    @ParameterizedTest
    @ValueSource(strings = {"READ_COMMITTED", "committed", "", " read_committed"})
    void rejectsBadIsolationLevel(String value) {
        rejected("dr", configs(MirrorConfig.FETCH_ISOLATION_LEVEL, value));
    }

    @ParameterizedTest
    @ValueSource(strings = {"CONTINUE", "skip", "", " fail"})
    void rejectsBadSourceDataLossPolicyNamingTheChoices(String value) {
        String message = rejected("dr", configs(MirrorConfig.SOURCE_DATA_LOSS_POLICY, value)).getMessage();
        assertTrue(message.contains(MirrorConfig.SOURCE_DATA_LOSS_POLICY) && message.contains("use continue or fail"), message);
    }

    @ParameterizedTest
    @ValueSource(strings = {MirrorConfig.ACL_SYNC_DENY, MirrorConfig.ACL_SYNC_WILDCARD, MirrorConfig.ACL_SYNC_UNMIRRORED})
    void aclSyncSwitchesAreOffByDefaultAndTakeTrueOrFalse(String key) {
        assertFalse(MirrorConfig.validate("dr", configs()).isTrue(key));
        assertTrue(MirrorConfig.validate("dr", configs(key, "true")).isTrue(key));
        assertFalse(MirrorConfig.validate("dr", configs(key, "false")).isTrue(key));
        for (String bad : List.of("yes", "TRUE", "", "1")) {
            String message = rejected("dr", configs(key, bad)).getMessage();
            assertTrue(message.contains(key) && message.contains("use true or false"), message);
        }
    }

    @Test
    void aclSyncResourceTypesDefaultToTopicAndGroupAndRejectOtherNamesListingTheAcceptedOnes() {
        assertEquals(Set.of(ResourceType.TOPIC, ResourceType.GROUP), MirrorConfig.validate("dr", configs()).aclSyncResourceTypes());
        assertEquals(Set.of(ResourceType.TOPIC, ResourceType.CLUSTER, ResourceType.TRANSACTIONAL_ID),
            MirrorConfig.validate("dr", configs(MirrorConfig.ACL_SYNC_RESOURCE_TYPES, " topic,CLUSTER , transactional_id")).aclSyncResourceTypes());
        assertEquals(Set.of(), MirrorConfig.validate("dr", configs(MirrorConfig.ACL_SYNC_RESOURCE_TYPES, "")).aclSyncResourceTypes());
        for (String bad : List.of("TOPIC,ANY", "TOPICS", "TOPIC;GROUP")) {
            String message = rejected("dr", configs(MirrorConfig.ACL_SYNC_RESOURCE_TYPES, bad)).getMessage();
            assertTrue(message.contains(MirrorConfig.ACL_SYNC_RESOURCE_TYPES)
                && message.contains("TOPIC, GROUP, TRANSACTIONAL_ID, USER, DELEGATION_TOKEN, CLUSTER"), message);
        }
    }

    @Test
    void sourceDataLossPolicyDefaultsToContinue() {
        assertFalse(MirrorConfig.validate("dr", configs()).failOnSourceDataLoss());
        assertTrue(MirrorConfig.validate("dr", configs(MirrorConfig.SOURCE_DATA_LOSS_POLICY, "fail")).failOnSourceDataLoss());
    }

    @ParameterizedTest
    @ValueSource(strings = {MirrorConfig.TOPICS_INCLUDE, MirrorConfig.TOPICS_EXCLUDE, MirrorConfig.GROUPS_INCLUDE,
        MirrorConfig.GROUPS_EXCLUDE, MirrorConfig.TOPIC_PROPERTIES_EXCLUDE, MirrorConfig.ACL_INCLUDE})
    void rejectsPatternsThatDoNotCompile(String key) {
        String message = rejected("dr", configs(key, "ok.*,bad[")).getMessage();
        assertTrue(message.contains("'bad['") && message.contains(key), message);
    }

    @Test
    void checksClientValueTypes() {
        String message = rejected("dr", configs("request.timeout.ms", "soon")).getMessage();
        assertTrue(message.contains("'request.timeout.ms'"), message);
        rejected("dr", configs("security.protocol", "CARRIER_PIGEON"));
    }

    @Test
    void refusesConfigProvidersDefinedInTheMirrorConfig() {
        for (String key : List.of("config.providers", "config.providers.file.class", "config.providers.file.param.allowed.paths")) {
            String message = rejected("dr", configs(key, "x")).getMessage();
            assertTrue(message.contains("'" + key + "'") && message.contains("cluster.mirror.config.providers"), message);
        }
    }

    /** A resolved or decrypted value is put only where Kafka never prints it: a PASSWORD config. */
    @Test
    void acceptsProviderReferencesAndSealedValuesInPasswordConfigsOnly() {
        MirrorConfig.validate("dr", configs(
            "ssl.truststore.password", "${file:/etc/m.properties:truststore}",
            "sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"m\" "
                + "password=\"${file:/etc/m.properties:password}\";",
            "ssl.key.password", SealedForm.CURRENT_PREFIX + "0011223344556677:AAAA"));
        String reference = rejected("dr", configs("request.timeout.ms", "${file:/etc/m.properties:timeout}")).getMessage();
        assertTrue(reference.contains("'request.timeout.ms'") && reference.contains("password configs"), reference);
        String sealed = rejected("dr", configs("client.id", SealedForm.CURRENT_PREFIX + "00:AAAA")).getMessage();
        assertTrue(sealed.contains("'client.id'"), sealed);
    }

    @Test
    void inlineSecretsAreClearValuesOfPasswordConfigs() {
        assertTrue(MirrorConfig.isInlineSecret("sasl.jaas.config", "x required password=\"p\";"));
        assertTrue(MirrorConfig.isInlineSecret("ssl.keystore.password", "p"));
        assertFalse(MirrorConfig.isInlineSecret("ssl.keystore.password", "${file:/etc/m.properties:ks}"));
        assertFalse(MirrorConfig.isInlineSecret("sasl.jaas.config", "x required password=\"${file:/etc/m.properties:p}\";"));
        assertFalse(MirrorConfig.isInlineSecret("ssl.keystore.password", SealedForm.CURRENT_PREFIX + "00:AAAA"));
        assertFalse(MirrorConfig.isInlineSecret("ssl.keystore.location", "/etc/ks.p12"));
    }

    @Test
    void classTypedConfigsAreTheClassConfigsAndTheClassLists() {
        assertTrue(MirrorConfig.isClassTyped("sasl.login.callback.handler.class"));
        assertTrue(MirrorConfig.isClassTyped("sasl.client.callback.handler.class"));
        assertTrue(MirrorConfig.isClassTyped("ssl.engine.factory.class"));
        assertTrue(MirrorConfig.isClassTyped("interceptor.classes"));
        assertTrue(MirrorConfig.isClassTyped("metric.reporters"));
        assertFalse(MirrorConfig.isClassTyped("ssl.cipher.suites"));
        assertFalse(MirrorConfig.isClassTyped("bootstrap.servers"));
    }

    /**
     * Every LIST config of the client ConfigDefs is classified: a Kafka upgrade that adds a list of classes fails here
     * instead of letting a mirror config load classes the broker did not allow.
     */
    @Test
    void everyClientListConfigIsKnownToNameClassesOrNot() {
        Set<String> lists = new TreeSet<>();
        Stream.of(ConsumerConfig.configDef(), AdminClientConfig.configDef(), ProducerConfig.configDef())
            .flatMap(def -> def.configKeys().values().stream())
            .filter(key -> key.type == ConfigDef.Type.LIST)
            .forEach(key -> lists.add(key.name));
        Set<String> notClasses = Set.of("bootstrap.servers", "bootstrap.controllers", "config.providers", "ssl.cipher.suites",
            "ssl.enabled.protocols", "sasl.oauthbearer.expected.audience", "sasl.oauthbearer.scope");
        Set<String> unclassified = new TreeSet<>(lists);
        unclassified.removeAll(notClasses);
        unclassified.removeAll(MirrorConfigValidator.CLASS_LIST_CONFIGS);
        assertEquals(Set.of(), unclassified);
    }

    @Test
    void neverPutsSecretsInMessages() {
        String message = rejected("dr", configs("ssl.key.password", "hunter2", "sasl.jaas.config", "hunter3",
            "bogus.key", "x")).getMessage();
        assertFalse(message.contains("hunter"), message);
    }

    @Test
    void redactsSensitiveValuesButKeepsProviderReferences() {
        MirrorConfig config = MirrorConfig.validate("dr", configs(
            "ssl.truststore.password", "changeit",
            "ssl.key.password", "k",
            "sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required password=\"p\";",
            "sasl.oauthbearer.client.credentials.client.secret", "s",
            "ssl.keystore.key", "pem",
            "sasl.login.refresh.buffer.seconds", "300",
            "ssl.keystore.location", "/etc/ks.jks",
            "ssl.keystore.password", "${file:/etc/secrets.properties:ks}"));
        Map<String, String> redacted = config.redacted();
        assertEquals("[hidden]", redacted.get("ssl.truststore.password"));
        assertEquals("[hidden]", redacted.get("ssl.key.password"));
        assertEquals("[hidden]", redacted.get("sasl.jaas.config"));
        assertEquals("[hidden]", redacted.get("ssl.keystore.key"));
        assertEquals("300", redacted.get("sasl.login.refresh.buffer.seconds"));
        assertEquals("/etc/ks.jks", redacted.get("ssl.keystore.location"));
        assertEquals("${file:/etc/secrets.properties:ks}", redacted.get("ssl.keystore.password"));
        assertEquals(BOOTSTRAP, redacted.get("bootstrap.servers"));
        assertEquals("changeit", config.originals().get("ssl.truststore.password"));
        assertTrue(MirrorConfigValidator.isSensitive("my.api.token"));
    }
}
