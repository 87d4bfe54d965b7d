package io.clustermirror.admin;

import org.apache.kafka.clients.admin.AbstractOptions;

import java.util.Properties;

/**
 * Options for the operations on a mirror's topics: {@link ClusterMirrorAdmin#startMirrorTopics},
 * {@link ClusterMirrorAdmin#stopMirrorTopics}, {@link ClusterMirrorAdmin#pauseMirrorTopics} and
 * {@link ClusterMirrorAdmin#resumeMirrorTopics}. {@link #timeoutMs(Integer)} bounds the whole operation,
 * counted from the call; null uses the client's {@code default.api.timeout.ms} (60 seconds by default).
 */
public class MirrorTopicsOptions extends AbstractOptions<MirrorTopicsOptions> {
    private boolean discardLocalWrites;
    private boolean planned;
    private Properties sourceClientConfigs = new Properties();

    /**
     * For {@link ClusterMirrorAdmin#startMirrorTopics}: start named STOPPED topics again even though records were
     * written to them since their stop. Mirroring resumes from where it stopped, so those records are removed (describe
     * shows the truncated range). Without it such a start fails with {@code MIRROR_TOPIC_HAS_LOCAL_WRITES}, naming how
     * many records it would remove. Ignored by the other operations.
     */
    public MirrorTopicsOptions discardLocalWrites(boolean discardLocalWrites) {
        this.discardLocalWrites = discardLocalWrites;
        return this;
    }

    public boolean discardLocalWrites() {
        return discardLocalWrites;
    }

    /**
     * For {@link ClusterMirrorAdmin#stopMirrorTopics}: a planned failover, for when the source's producers have been
     * stopped. The stop waits until every selected partition of the destination holds all the source holds, settled
     * (its last stable offset has reached the source's end, read from the source now; no transaction is open on either
     * side), then stops them, so that the stop truncates nothing. {@link #timeoutMs(Integer)} bounds that wait; the stop
     * itself then takes at most the client's {@code default.api.timeout.ms}. If the wait times out, nothing is stopped
     * and the result fails with {@link NotCaughtUpException} ({@code MIRROR_TOPIC_NOT_CAUGHT_UP}) naming the partitions
     * still behind; a PAUSED topic, which cannot catch up, is refused at once ({@code MIRROR_TOPIC_NOT_MIRRORING}).
     * Ignored by the other operations.
     */
    public MirrorTopicsOptions planned(boolean planned) {
        this.planned = planned;
        return this;
    }

    public boolean planned() {
        return planned;
    }

    /**
     * For a {@link #planned(boolean) planned} stop: Kafka client configs for reading the source's offsets (security
     * settings; the mirror's stored passwords are sealed, so they must be given here); {@code bootstrap.servers}
     * defaults to the mirror's source.
     */
    public MirrorTopicsOptions sourceClientConfigs(Properties sourceClientConfigs) {
        Properties copy = new Properties();
        copy.putAll(sourceClientConfigs);
        this.sourceClientConfigs = copy;
        return this;
    }

    public Properties sourceClientConfigs() {
        Properties copy = new Properties();
        copy.putAll(sourceClientConfigs);
        return copy;
    }
}
