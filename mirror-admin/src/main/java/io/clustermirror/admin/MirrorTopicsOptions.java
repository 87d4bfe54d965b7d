package io.clustermirror.admin;

import org.apache.kafka.clients.admin.AbstractOptions;

/**
 * Options for the operations on a mirror's topics: {@link ClusterMirrorAdmin#startMirrorTopics},
 * {@link ClusterMirrorAdmin#stopMirrorTopics}, {@link ClusterMirrorAdmin#pauseMirrorTopics} and
 * {@link ClusterMirrorAdmin#resumeMirrorTopics}. {@link #timeoutMs(Integer)} bounds the whole operation,
 * counted from the call; null uses the client's {@code default.api.timeout.ms} (60 seconds by default).
 */
public class MirrorTopicsOptions extends AbstractOptions<MirrorTopicsOptions> {
    private boolean discardLocalWrites;

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
}
