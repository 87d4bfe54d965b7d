package io.clustermirror.admin;

import org.apache.kafka.clients.admin.AbstractOptions;

import java.util.Properties;

/**
 * Options for the operations on a mirror's topics: {@link ClusterMirrorAdmin#startMirrorTopics},
 * {@link ClusterMirrorAdmin#stopMirrorTopics}, {@link ClusterMirrorAdmin#pauseMirrorTopics} and
 * {@link ClusterMirrorAdmin#resumeMirrorTopics}, and of {@link ClusterMirrorAdmin#verifyMirrorTopics}.
 * {@link #timeoutMs(Integer)} bounds the whole operation, counted from the call; null uses the client's
 * {@code default.api.timeout.ms} (60 seconds by default).
 */
public class MirrorTopicsOptions extends AbstractOptions<MirrorTopicsOptions> {
    private boolean discardLocalWrites;
    private boolean planned;
    private boolean consistent;
    private boolean waitUntilCaughtUp;
    private ProgressListener progressListener = ProgressListener.NONE;
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
     * For {@link ClusterMirrorAdmin#stopMirrorTopics}: a consistent stop. A plain stop cuts each partition at its own last
     * stable offset, which can leave a committed transaction of the source visible on some of the selected partitions
     * and not on others (its commit marker was mirrored on one partition and not yet on another). A consistent stop reads
     * the ends of the selected partitions first and cuts each at the highest offset, at most its last stable offset, where
     * no committed transaction it can see is split; it removes the records of such transactions everywhere instead.
     * {@link MirrorTopicsResult#consistentCut()} reports the cuts and the records removed beyond a plain stop. It sees
     * the destination's mirrored data and what the mirror kept of the source's transaction log (which needs READ on the
     * source's {@code __transaction_state}); {@link StopTransactions#limits()} says what neither shows. A
     * {@link #planned(boolean) planned} stop is consistent already and ignores this. Ignored by the other
     * operations.
     */
    public MirrorTopicsOptions consistent(boolean consistent) {
        this.consistent = consistent;
        return this;
    }

    public boolean consistent() {
        return consistent;
    }

    /**
     * For {@link ClusterMirrorAdmin#startMirrorTopics}: once the mirror controller has applied the start, wait until
     * every partition of the started topics is MIRRORING and has caught up with the source, as a
     * {@link #planned(boolean) planned} stop sees it (its offsets read from the source at each check, every 0.5 s;
     * {@link #sourceClientConfigs} gives the settings to reach it). {@link #timeoutMs(Integer)} bounds the start and the
     * wait together. If it passes first, the topics stay started and the result fails with {@link NotCaughtUpException}
     * naming the partitions not caught up yet and how far behind they are. Ignored by the other operations.
     */
    public MirrorTopicsOptions waitUntilCaughtUp(boolean waitUntilCaughtUp) {
        this.waitUntilCaughtUp = waitUntilCaughtUp;
        return this;
    }

    public boolean waitUntilCaughtUp() {
        return waitUntilCaughtUp;
    }

    /**
     * Told how the long operations go: each check of a {@link #planned(boolean) planned} stop or of a start that
     * {@link #waitUntilCaughtUp(boolean) waits}, and the batches an integrity check
     * ({@link ClusterMirrorAdmin#verifyMirrorTopics}) has compared. None by default.
     */
    public MirrorTopicsOptions progressListener(ProgressListener progressListener) {
        this.progressListener = progressListener == null ? ProgressListener.NONE : progressListener;
        return this;
    }

    public ProgressListener progressListener() {
        return progressListener;
    }

    /**
     * For a {@link #planned(boolean) planned} stop, a start that {@link #waitUntilCaughtUp(boolean) waits} and
     * {@link ClusterMirrorAdmin#previewStartMirrorTopics}: Kafka client configs for reading the source (security
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
