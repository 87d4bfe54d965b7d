package io.clustermirror.common.records;

/**
 * The key clients seal inline secrets with ({@link io.clustermirror.common.secrets.SealingKey}), published by every
 * mirror controller when it becomes active, in {@code __mirror_metadata} under {@link RecordCodec#SEALING_KEY}. A
 * record without a key (rather than a tombstone, which compaction would remove) says that the controller has no
 * password-encoder secret: clients then refuse inline secrets; no record at all, that no controller has run yet.
 *
 * @param keyId     the key's id, which sealed values name; null without a key
 * @param publicKey the key, base64url ({@link io.clustermirror.common.secrets.SealingKey#encoded()}); null without one
 */
public record SealingKeyRecord(String keyId, String publicKey) {
    public static final SealingKeyRecord NONE = new SealingKeyRecord(null, null);
}
