package io.clustermirror.common;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/** Names and layout of the mirror's own internal topics on the destination cluster. */
public final class InternalTopics {
    /** Requests from the CLI/Admin API and the controller's results: an audit log. One partition. */
    public static final String COMMANDS = "__mirror_commands";
    /** Desired state: mirror configs and topic -> mirror + desired state. Compacted, one partition. */
    public static final String METADATA = "__mirror_metadata";
    /** Actual per-partition state, written by destination partition leaders. Compacted. */
    public static final String STATE = "__mirror_state";
    public static final int STATE_PARTITIONS = 10;
    /**
     * The {@code segment.bytes} of {@link #STATE}: 1 MiB, the least Kafka 4 accepts, where its default is 1 GiB. The log
     * cleaner never compacts a partition's active segment, and every mirror partition that makes progress writes a record
     * every few seconds, so with 1 GiB segments a reader that replays the topic from its beginning (every describe, a
     * controller taking over) could read up to 10 GiB of superseded records: a start of 10,000 partitions and a link flap
     * wrote 55 MB in three minutes. Small segments let the cleaner keep the topic near its live records (one of about
     * 450 bytes per partition) plus at most this much per partition.
     */
    public static final int STATE_SEGMENT_BYTES = 1024 * 1024;
    /**
     * The source transactions over several mirror partitions ({@link io.clustermirror.common.records.SourceTransactionRecord},
     * key: the mirror), read from each source's coordinator log by the metadata sync: what a stop's analysis needs once the
     * source is lost. Kept {@link #TRANSACTIONS_RETENTION_MS}; one partition.
     */
    public static final String TRANSACTIONS = "__mirror_transactions";
    /** How long {@link #TRANSACTIONS} keeps a transaction: a day, for a failover decided hours after the source was lost. */
    public static final long TRANSACTIONS_RETENTION_MS = 24L * 60 * 60 * 1000;
    /** Transactional id of the single, fenced MirrorController. */
    public static final String CONTROLLER_TRANSACTIONAL_ID = "__cluster_mirror_controller";
    /**
     * The consumer group in which earlier versions kept the controller's position in {@link #COMMANDS}. The controller
     * no longer uses it (its position is a record of {@link #METADATA}, which neither expires nor can be reset); it is
     * named so that a leftover group can be recognised and deleted.
     */
    public static final String CONTROLLER_GROUP = "__cluster_mirror_controller";

    public static final Set<String> ALL = Set.of(COMMANDS, METADATA, STATE, TRANSACTIONS);
    /** The prefix of this extension's internal topics ({@link #ALL}), reserved for it: no mirror topic takes such a name. */
    public static final String EXTENSION_PREFIX = "__mirror_";
    /** Kafka's own internal topics. */
    public static final Set<String> KAFKA_INTERNAL =
        Set.of("__consumer_offsets", "__transaction_state", "__share_group_state", "__cluster_metadata");

    private InternalTopics() {
    }

    public static boolean isInternal(String topic) {
        return ALL.contains(topic);
    }

    /**
     * Whether the topic belongs to the cluster itself, Kafka's internal topics and names reserved for this extension
     * ({@value #EXTENSION_PREFIX}...), and so is never a mirror topic: no mirror copies a source topic of that name, and
     * the read-only rule's fail-closed refusals leave it alone. Any other name, one that starts with {@code __} too (a
     * source's {@code __audit}), can be a mirror topic and is protected like every mirror topic.
     */
    public static boolean isClusterOwned(String topic) {
        return topic.startsWith(EXTENSION_PREFIX) || KAFKA_INTERNAL.contains(topic);
    }

    /** Replication factor for internal topics: min(3, live brokers). */
    public static short replicationFactor(int brokers) {
        return (short) Math.max(1, Math.min(3, brokers));
    }

    /**
     * How an internal topic is created on first use: {@link #COMMANDS} by the first client command,
     * the others by the MirrorController before it processes commands. The commands log keeps 30 days
     * of audit trail; metadata and state are compacted (the latest record per key is the truth). None of them may
     * elect an out-of-sync leader, whatever the cluster's default: a lost state record loses a partition's lineage.
     */
    public static NewTopic newTopic(String name, int liveBrokers) {
        short rf = replicationFactor(liveBrokers);
        String minIsr = String.valueOf(Math.max(1, Math.min(2, rf - 1)));
        return switch (name) {
            case COMMANDS -> new NewTopic(COMMANDS, 1, rf).configs(Map.of(
                TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE,
                TopicConfig.RETENTION_MS_CONFIG, String.valueOf(TimeUnit.DAYS.toMillis(30)),
                TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, minIsr,
                TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG, "false"));
            case METADATA -> new NewTopic(METADATA, 1, rf).configs(Map.of(
                TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT,
                TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, minIsr,
                TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG, "false"));
            case STATE -> new NewTopic(STATE, STATE_PARTITIONS, rf).configs(Map.of(
                TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT,
                TopicConfig.SEGMENT_BYTES_CONFIG, String.valueOf(STATE_SEGMENT_BYTES),
                TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, minIsr,
                TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG, "false"));
            case TRANSACTIONS -> new NewTopic(TRANSACTIONS, 1, rf).configs(Map.of(
                TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE,
                TopicConfig.RETENTION_MS_CONFIG, String.valueOf(TRANSACTIONS_RETENTION_MS),
                TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, minIsr));
            default -> throw new IllegalArgumentException("not an internal mirror topic: " + name);
        };
    }

    /**
     * A config of {@link #METADATA} or {@link #STATE} that can lose the mirror state: records deleted by retention
     * ({@code cleanup.policy} other than {@code compact}) or by an unclean leader election.
     */
    public record Misconfiguration(String topic, String config, String actual, String expected) {
        /** What is wrong and the command that fixes it. */
        public String message() {
            return "internal topic " + topic + " has " + config + "=" + actual + ", but the mirror state it holds needs " + config
                + "=" + expected + " (otherwise records are deleted and mirror topics may turn writable); fix it with: "
                + "kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name " + topic
                + " --add-config " + config + "=" + expected;
        }
    }

    /**
     * The configs of an internal topic (as the broker describes them, defaults included) that put the mirror state at risk.
     * Only {@link #METADATA} and {@link #STATE} have such configs: {@link #COMMANDS}' retention bounds its audit trail only.
     */
    public static List<Misconfiguration> misconfigurations(String topic, Map<String, String> configs) {
        if (!topic.equals(METADATA) && !topic.equals(STATE)) {
            return List.of();
        }
        Map<String, String> required = Map.of(
            TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT,
            TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG, "false");
        return required.entrySet().stream()
            .filter(e -> !e.getValue().equalsIgnoreCase(String.valueOf(configs.get(e.getKey())).trim()))
            .map(e -> new Misconfiguration(topic, e.getKey(), configs.get(e.getKey()), e.getValue()))
            .sorted(java.util.Comparator.comparing(Misconfiguration::config))
            .toList();
    }
}
