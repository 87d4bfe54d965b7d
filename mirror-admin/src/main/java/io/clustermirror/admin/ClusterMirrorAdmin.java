package io.clustermirror.admin;

import org.apache.kafka.clients.admin.AlterConfigOp;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Properties;

/**
 * The administrative client for Cluster Mirror, in the style of Kafka's {@code Admin}. It connects to the
 * <em>destination</em> cluster, whose brokers run the Cluster Mirror extension: commands go to the mirror
 * controller through the {@code __mirror_commands} topic, and mirror state is read from the
 * {@code __mirror_metadata} and {@code __mirror_state} topics.
 *
 * <p>Every method returns at once with a result holding {@link org.apache.kafka.common.KafkaFuture}s. A failed
 * future fails with a {@link io.clustermirror.common.ClusterMirrorException} whose
 * {@link io.clustermirror.common.ClusterMirrorException#error() error} names the cause. Operations run one at a
 * time in the order they were called, so a command is applied after every command called before it.
 *
 * <p>A timeout that expires while waiting for the mirror controller does not withdraw the command: the
 * controller may still apply it later. Describe the mirror to see what happened.
 *
 * <p>The client is thread-safe. Close it to release its connections.
 */
public interface ClusterMirrorAdmin extends AutoCloseable {

    /**
     * Creates a client from Kafka client properties of the destination cluster: {@code bootstrap.servers} and
     * any security or network settings, as for Kafka's {@code Admin}. {@code default.api.timeout.ms} sets the
     * default timeout of operations.
     */
    static ClusterMirrorAdmin create(Properties props) {
        return KafkaClusterMirrorAdmin.create(props);
    }

    /** Creates a client from Kafka client configs of the destination cluster; see {@link #create(Properties)}. */
    static ClusterMirrorAdmin create(Map<String, Object> configs) {
        Properties props = new Properties();
        props.putAll(configs);
        return create(props);
    }

    /**
     * Creates a mirror of a source cluster. The configs hold the source's {@code bootstrap.servers}, any Kafka
     * client setting needed to reach it (security, network) and the mirror's {@code mirror.*} settings; secrets
     * may be ConfigProvider references such as {@code ${file:/etc/mirror/secrets.properties:password}}.
     */
    default CreateClusterMirrorResult createClusterMirror(String name, Map<String, String> configs) {
        return createClusterMirror(name, configs, new CreateClusterMirrorOptions());
    }

    /** Creates a mirror; see {@link #createClusterMirror(String, Map)}. */
    CreateClusterMirrorResult createClusterMirror(String name, Map<String, String> configs,
                                                  CreateClusterMirrorOptions options);

    /**
     * Changes a running mirror's configs without stopping or pausing its topics: each {@link AlterConfigOp} SETs a config
     * or DELETEs one (back to its default); APPEND and SUBTRACT are not supported. The fetchers and the metadata sync
     * move to new source clients and continue where they were. Typical uses: new source credentials (inline secrets
     * are encrypted as at create), other source listeners in {@code bootstrap.servers}, {@code mirror.fetch.*} tuning,
     * a wider {@code mirror.topics.include}. A change of the source connection is tried against the source before it is
     * stored and must reach the same cluster. The change applies as a whole or not at all: an unknown key or invalid
     * value fails with {@code INVALID_CONFIG} naming it, and {@code bootstrap.servers} cannot be deleted. When
     * {@code bootstrap.servers} changes, encrypted secrets are given again in the same call (they are bound to it).
     */
    default AlterClusterMirrorConfigsResult alterClusterMirrorConfigs(String name, Collection<AlterConfigOp> ops) {
        return alterClusterMirrorConfigs(name, ops, new AlterClusterMirrorConfigsOptions());
    }

    /** Changes a mirror's configs; see {@link #alterClusterMirrorConfigs(String, Collection)}. */
    AlterClusterMirrorConfigsResult alterClusterMirrorConfigs(String name, Collection<AlterConfigOp> ops,
                                                              AlterClusterMirrorConfigsOptions options);

    /** Deletes a mirror. The controller refuses ({@code CLUSTER_MIRROR_NOT_EMPTY}) while it has topics. */
    default DeleteClusterMirrorResult deleteClusterMirror(String name) {
        return deleteClusterMirror(name, new DeleteClusterMirrorOptions());
    }

    /** Deletes a mirror; see {@link #deleteClusterMirror(String)}. */
    DeleteClusterMirrorResult deleteClusterMirror(String name, DeleteClusterMirrorOptions options);

    /** Lists the mirrors of the destination cluster. */
    default ListClusterMirrorsResult listClusterMirrors() {
        return listClusterMirrors(new ListClusterMirrorsOptions());
    }

    /** Lists the mirrors; see {@link #listClusterMirrors()}. */
    ListClusterMirrorsResult listClusterMirrors(ListClusterMirrorsOptions options);

    /**
     * Describes mirrors: their configs (secrets hidden), topics and the state of every partition, with the
     * destination partitions' end offsets read live.
     */
    default DescribeClusterMirrorsResult describeClusterMirrors(Collection<String> names) {
        return describeClusterMirrors(names, new DescribeClusterMirrorsOptions());
    }

    /** Describes mirrors; see {@link #describeClusterMirrors(Collection)}. */
    DescribeClusterMirrorsResult describeClusterMirrors(Collection<String> names,
                                                        DescribeClusterMirrorsOptions options);

    /**
     * Starts mirroring topics of the source into read-only topics of the same names on the destination.
     *
     * @param mirror          the mirror
     * @param topicsOrRegexes source topic names or Java regular expressions matching whole names
     * @param excludes        names or regular expressions removed from what {@code topicsOrRegexes} matched
     */
    default MirrorTopicsResult startMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                 Collection<String> excludes) {
        return startMirrorTopics(mirror, topicsOrRegexes, excludes, new MirrorTopicsOptions());
    }

    /** Starts mirroring topics; see {@link #startMirrorTopics(String, Collection, Collection)}. */
    MirrorTopicsResult startMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                         Collection<String> excludes, MirrorTopicsOptions options);

    /**
     * Stops mirroring topics (failover): each partition stops fetching, truncates to its last stable offset,
     * writes a producer-state barrier and becomes a normal writable topic. Arguments as for
     * {@link #startMirrorTopics(String, Collection, Collection)}. With {@link MirrorTopicsOptions#planned(boolean)}, it
     * first waits until every selected partition has caught up with the source, so that nothing is truncated.
     */
    default MirrorTopicsResult stopMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                Collection<String> excludes) {
        return stopMirrorTopics(mirror, topicsOrRegexes, excludes, new MirrorTopicsOptions());
    }

    /**
     * A failover dry-run: what {@link #stopMirrorTopics} would do to each partition of the same selection if it ran now
     * (the range it would truncate, the records in it, the open transactions that cause it), without changing
     * anything.
     */
    default PreviewStopResult previewStopMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                      Collection<String> excludes) {
        return previewStopMirrorTopics(mirror, topicsOrRegexes, excludes, new MirrorTopicsOptions());
    }

    /** A failover dry-run; see {@link #previewStopMirrorTopics(String, Collection, Collection)}. */
    PreviewStopResult previewStopMirrorTopics(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                              MirrorTopicsOptions options);

    /**
     * A dry-run of {@link #startMirrorTopics} for topics whose logs a start cuts: per partition of the selected topics that
     * are STOPPED on this cluster (or that the source mirrored from this cluster and stopped: failback), the range a start
     * would truncate now and the records in it, without changing anything. Reads the source's mirror state for failback;
     * {@link MirrorTopicsOptions#sourceClientConfigs} gives the settings to reach it. New topics are left out: a start
     * creates them empty.
     */
    default PreviewStartResult previewStartMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                        Collection<String> excludes) {
        return previewStartMirrorTopics(mirror, topicsOrRegexes, excludes, new MirrorTopicsOptions());
    }

    /** A start dry-run; see {@link #previewStartMirrorTopics(String, Collection, Collection)}. */
    PreviewStartResult previewStartMirrorTopics(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                                MirrorTopicsOptions options);

    /**
     * An integrity check: compares the source's and the destination's batches of each partition of the selected topics
     * (all of the mirror's when {@code topicsOrRegexes} is empty), every byte but the partition leader epoch, each side's
     * CRC checked against its bytes. The range is what was mirrored: from the greater log start up to the barrier of a
     * STOPPED partition, or up to the destination's high watermark when the check reaches the partition. Streams with
     * bounded memory; the options' timeout bounds each read, not the whole check. Compacted topics are refused: each
     * cluster's log cleaner rewrites batches on its own schedule, so their logs may legitimately differ.
     *
     * @param sourceClientConfigs Kafka client configs for reading the source (security settings; the mirror's stored
     *                            passwords are sealed, so they must be given here); {@code bootstrap.servers} defaults to
     *                            the mirror's source
     */
    VerifyMirrorTopicsResult verifyMirrorTopics(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                                Properties sourceClientConfigs, MirrorTopicsOptions options);

    /** Stops mirroring topics; see {@link #stopMirrorTopics(String, Collection, Collection)}. */
    MirrorTopicsResult stopMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                        Collection<String> excludes, MirrorTopicsOptions options);

    /**
     * Pauses mirroring topics: they stay read-only but fetch nothing. Arguments as for
     * {@link #startMirrorTopics(String, Collection, Collection)}.
     */
    default MirrorTopicsResult pauseMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                 Collection<String> excludes) {
        return pauseMirrorTopics(mirror, topicsOrRegexes, excludes, new MirrorTopicsOptions());
    }

    /** Pauses mirroring topics; see {@link #pauseMirrorTopics(String, Collection, Collection)}. */
    MirrorTopicsResult pauseMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                         Collection<String> excludes, MirrorTopicsOptions options);

    /**
     * Resumes mirroring paused topics. Arguments as for {@link #startMirrorTopics(String, Collection, Collection)}.
     */
    default MirrorTopicsResult resumeMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                  Collection<String> excludes) {
        return resumeMirrorTopics(mirror, topicsOrRegexes, excludes, new MirrorTopicsOptions());
    }

    /** Resumes mirroring topics; see {@link #resumeMirrorTopics(String, Collection, Collection)}. */
    MirrorTopicsResult resumeMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                          Collection<String> excludes, MirrorTopicsOptions options);

    /**
     * Has the FAILED partitions of the topics tried again now, each with a fresh run of automatic retries: a FAILED
     * partition retries by itself with jittered exponential backoff ({@code mirror.partition.retry.backoff.ms} up to
     * {@code mirror.partition.retry.backoff.max.ms}) and, once {@code mirror.partition.retries} retries in a row have failed,
     * waits for this. Arguments as for {@link #startMirrorTopics(String, Collection, Collection)}. The result lists the
     * topics that had FAILED partitions to recover; it fails with {@code MIRROR_TOPIC_NOT_FAILED} when none had, and with
     * {@code MIRROR_TOPIC_NOT_RECOVERABLE} when no retry can help any (their source topic was deleted or re-created: stop
     * them instead).
     */
    default MirrorTopicsResult recoverMirrorTopics(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes) {
        return recoverMirrorTopics(mirror, topicsOrRegexes, excludes, new MirrorTopicsOptions());
    }

    /** Recovers FAILED partitions; see {@link #recoverMirrorTopics(String, Collection, Collection)}. */
    MirrorTopicsResult recoverMirrorTopics(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                           MirrorTopicsOptions options);

    /**
     * Applies now what the topics hold back under {@code mirror.source.destructive.policy=hold}, instead of at the end of
     * the hold ({@code mirror.source.destructive.hold.ms}): the source log start moves their partitions' leaders have
     * seen by now (the destination deletes the records below them) and the held topic changes (the metadata sync copies
     * them in its next round). A change seen later waits its own hold. Arguments as for
     * {@link #startMirrorTopics(String, Collection, Collection)}; a STOPPED topic is refused.
     */
    default MirrorTopicsResult applyHeldChanges(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes) {
        return applyHeldChanges(mirror, topicsOrRegexes, excludes, new MirrorTopicsOptions());
    }

    /** Applies held changes now; see {@link #applyHeldChanges(String, Collection, Collection)}. */
    MirrorTopicsResult applyHeldChanges(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                        MirrorTopicsOptions options);

    /**
     * Rejects what the topics hold back: the destination keeps the records below the held source log start moves and its
     * topic configs and partition count, however long the source keeps these changes; a further change of the source is
     * held anew. Arguments as for {@link #applyHeldChanges(String, Collection, Collection)}.
     */
    default MirrorTopicsResult rejectHeldChanges(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes) {
        return rejectHeldChanges(mirror, topicsOrRegexes, excludes, new MirrorTopicsOptions());
    }

    /** Rejects held changes; see {@link #rejectHeldChanges(String, Collection, Collection)}. */
    MirrorTopicsResult rejectHeldChanges(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                         MirrorTopicsOptions options);

    /** Closes the client, waiting without limit for operations already called to finish. */
    @Override
    default void close() {
        close(Duration.ofMillis(Long.MAX_VALUE));
    }

    /**
     * Closes the client, waiting at most {@code timeout} for operations already called; those still unfinished
     * then fail.
     */
    void close(Duration timeout);
}
