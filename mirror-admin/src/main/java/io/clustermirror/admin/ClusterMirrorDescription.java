package io.clustermirror.admin;

import io.clustermirror.common.MirrorConfig;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A mirror as returned by {@link ClusterMirrorAdmin#describeClusterMirrors(java.util.Collection)}.
 *
 * @param name            the mirror's name
 * @param configs         the mirror's configs with sensitive values replaced by {@code [hidden]}
 * @param sourceClusterId the source cluster's id, read from the source when the mirror was created
 * @param topics          the mirror's topics, sorted by name
 * @param transactions    what a plain stop of all the mirror's mirroring topics would do to the source's transactions now
 *                        (the committed ones it would split, and the consistent cuts), when asked for with
 *                        {@link DescribeClusterMirrorsOptions#includeTransactions(boolean)}; empty otherwise, or when no topic
 *                        of the mirror is mirroring
 */
public record ClusterMirrorDescription(String name, Map<String, String> configs, String sourceClusterId,
                                       List<MirrorTopicDescription> topics, Optional<StopTransactions> transactions) {
    public ClusterMirrorDescription {
        configs = Map.copyOf(configs);
        topics = List.copyOf(topics);
        Objects.requireNonNull(transactions, "transactions");
    }

    /** A description without the transaction analysis. */
    public ClusterMirrorDescription(String name, Map<String, String> configs, String sourceClusterId, List<MirrorTopicDescription> topics) {
        this(name, configs, sourceClusterId, topics, Optional.empty());
    }

    /** This description with the transaction analysis. */
    public ClusterMirrorDescription withTransactions(StopTransactions analysed) {
        return new ClusterMirrorDescription(name, configs, sourceClusterId, topics, Optional.of(analysed));
    }

    /** The source cluster's {@code bootstrap.servers}. */
    public String sourceBootstrapServers() {
        return configs.get(MirrorConfig.BOOTSTRAP_SERVERS);
    }
}
