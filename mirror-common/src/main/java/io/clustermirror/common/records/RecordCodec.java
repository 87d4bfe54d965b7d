package io.clustermirror.common.records;

/**
 * Keys and values of the internal topics. Values are versioned JSON (field {@code "v"}), keys are UTF-8
 * strings: {@code __mirror_commands} is keyed by command id, {@code __mirror_metadata} by
 * {@link #mirrorKey}/{@link #topicKey}, {@code __mirror_state} by {@link PartitionStateRecord#key()}.
 * A null value is a tombstone.
 */
public final class RecordCodec {
    private RecordCodec() {
    }

    public static String mirrorKey(String mirror) {
        return "mirror:" + mirror;
    }

    public static String topicKey(String topic) {
        return "topic:" + topic;
    }

    public static byte[] encodeKey(String key) {
        throw new UnsupportedOperationException("TODO");
    }

    public static String decodeKey(byte[] key) {
        throw new UnsupportedOperationException("TODO");
    }

    public static byte[] encodeCommand(CommandLogEntry entry) {
        throw new UnsupportedOperationException("TODO");
    }

    public static CommandLogEntry decodeCommand(byte[] value) {
        throw new UnsupportedOperationException("TODO");
    }

    public static byte[] encodeMirror(MirrorRecord record) {
        throw new UnsupportedOperationException("TODO");
    }

    public static byte[] encodeTopic(MirrorTopicRecord record) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Decodes a {@code __mirror_metadata} value by its key: a {@link MirrorRecord} or a {@link MirrorTopicRecord}. */
    public static Object decodeMetadata(String key, byte[] value) {
        throw new UnsupportedOperationException("TODO");
    }

    public static byte[] encodeState(PartitionStateRecord record) {
        throw new UnsupportedOperationException("TODO");
    }

    public static PartitionStateRecord decodeState(byte[] value) {
        throw new UnsupportedOperationException("TODO");
    }
}
