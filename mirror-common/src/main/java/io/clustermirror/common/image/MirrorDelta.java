package io.clustermirror.common.image;

/**
 * Changes to a {@link MirrorImage}: replay records of the internal topics, then {@link #apply()}.
 *
 * <p>{@code __mirror_metadata}: a null value removes the key. {@code __mirror_state}: a record replaces
 * the current one for its key only when its {@code leaderEpoch} is at least the current one's (a stale
 * destination leader cannot overwrite a newer leader's state); a null value removes the key.
 */
public final class MirrorDelta {
    public MirrorDelta(MirrorImage base) {
        throw new UnsupportedOperationException("TODO");
    }

    public void replayMetadata(byte[] key, byte[] value) {
        throw new UnsupportedOperationException("TODO");
    }

    public void replayState(byte[] key, byte[] value) {
        throw new UnsupportedOperationException("TODO");
    }

    public MirrorImage apply() {
        throw new UnsupportedOperationException("TODO");
    }
}
