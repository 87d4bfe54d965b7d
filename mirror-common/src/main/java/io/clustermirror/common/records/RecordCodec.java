package io.clustermirror.common.records;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Keys and values of the internal topics. Values are versioned JSON (field {@code "v"}), keys are UTF-8
 * strings: {@code __mirror_commands} is keyed by command id, {@code __mirror_metadata} by
 * {@link #mirrorKey}/{@link #topicKey}, {@link #CONTROLLER_POSITION_KEY} and {@link SyncedTopicConfigsRecord#key},
 * {@code __mirror_state} by {@link PartitionStateRecord#key()}
 * ({@code <mirror>/<topic>/<partition>}) and, for the ACLs a mirror created, {@link MirrorAclRecord#key()}
 * ({@code acl:<mirror>:<binding>}).
 * A null value is a tombstone; the decoders do not accept one (the caller knows what a tombstone means).
 *
 * <p>Compatibility: a reader ignores fields it does not know and reads values of any version, so a
 * newer writer may add fields (bumping {@link #VERSION}) without breaking older readers. Fields are never
 * renamed or given a new meaning. Fields missing from an older value read as null/zero.
 */
public final class RecordCodec {
    /** The version written into every value. */
    public static final int VERSION = 1;
    public static final String VERSION_FIELD = "v";
    public static final String MIRROR_KEY_PREFIX = "mirror:";
    public static final String TOPIC_KEY_PREFIX = "topic:";
    /** The {@code __mirror_metadata} key of the {@link SealingKeyRecord}; not part of the mirror image. */
    public static final String SEALING_KEY = "sealing-key";
    /** The key of the {@link ControllerPositionRecord} in {@code __mirror_metadata}. */
    public static final String CONTROLLER_POSITION_KEY = "controller:position";
    /** The {@code __mirror_commands} key of a {@link ControllerProblem}. */
    public static final String CONTROLLER_PROBLEM_KEY = "controller:problem";

    private static final ObjectMapper MAPPER = JsonMapper.builder()
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .defaultPropertyInclusion(JsonInclude.Value.construct(JsonInclude.Include.NON_NULL,
            JsonInclude.Include.NON_NULL))
        .build();

    private RecordCodec() {
    }

    public static String mirrorKey(String mirror) {
        return MIRROR_KEY_PREFIX + mirror;
    }

    public static String topicKey(String topic) {
        return TOPIC_KEY_PREFIX + topic;
    }

    public static byte[] encodeKey(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }

    public static String decodeKey(byte[] key) {
        return new String(key, StandardCharsets.UTF_8);
    }

    public static byte[] encodeCommand(CommandLogEntry entry) {
        return encode(MAPPER.valueToTree(entry));
    }

    public static CommandLogEntry decodeCommand(byte[] value) {
        return decode(value, CommandLogEntry.class);
    }

    public static byte[] encodeMirror(MirrorRecord record) {
        return encode(MAPPER.valueToTree(record));
    }

    public static MirrorRecord decodeMirror(byte[] value) {
        return decode(value, MirrorRecord.class);
    }

    public static byte[] encodeTopic(MirrorTopicRecord record) {
        return encode(MAPPER.valueToTree(record));
    }

    public static MirrorTopicRecord decodeTopic(byte[] value) {
        return decode(value, MirrorTopicRecord.class);
    }

    public static byte[] encodeControllerPosition(ControllerPositionRecord record) {
        return encode(MAPPER.valueToTree(record));
    }

    public static ControllerPositionRecord decodeControllerPosition(byte[] value) {
        return decode(value, ControllerPositionRecord.class);
    }

    /**
     * Decodes a {@code __mirror_metadata} value by its key: a {@link MirrorRecord}, a {@link MirrorTopicRecord} or the
     * {@link ControllerPositionRecord}.
     *
     * @throws IllegalArgumentException if the key has neither prefix, or the value is not a valid record
     */
    public static Object decodeMetadata(String key, byte[] value) {
        if (key.startsWith(MIRROR_KEY_PREFIX)) {
            return decodeMirror(value);
        }
        if (key.startsWith(TOPIC_KEY_PREFIX)) {
            return decodeTopic(value);
        }
        if (key.equals(CONTROLLER_POSITION_KEY)) {
            return decodeControllerPosition(value);
        }
        throw new IllegalArgumentException("Unknown __mirror_metadata key '" + key + "': expected prefix '"
            + MIRROR_KEY_PREFIX + "' or '" + TOPIC_KEY_PREFIX + "', or '" + CONTROLLER_POSITION_KEY + "'");
    }

    public static byte[] encodeSyncedTopicConfigs(SyncedTopicConfigsRecord record) {
        return encode(MAPPER.valueToTree(record));
    }

    public static SyncedTopicConfigsRecord decodeSyncedTopicConfigs(byte[] value) {
        return decode(value, SyncedTopicConfigsRecord.class);
    }

    public static byte[] encodeSealingKey(SealingKeyRecord record) {
        return encode(MAPPER.valueToTree(record));
    }

    public static SealingKeyRecord decodeSealingKey(byte[] value) {
        return decode(value, SealingKeyRecord.class);
    }

    public static byte[] encodeState(PartitionStateRecord record) {
        return encode(MAPPER.valueToTree(record));
    }

    public static PartitionStateRecord decodeState(byte[] value) {
        return decode(value, PartitionStateRecord.class);
    }

    /** True for a {@code __mirror_state} key of a {@link MirrorAclRecord}. */
    public static boolean isAclKey(String stateKey) {
        return stateKey.startsWith(MirrorAclRecord.KEY_PREFIX);
    }

    public static byte[] encodeAcl(MirrorAclRecord record) {
        return encode(MAPPER.valueToTree(record));
    }

    public static MirrorAclRecord decodeAcl(byte[] value) {
        return decode(value, MirrorAclRecord.class);
    }

    public static byte[] encodeTransaction(SourceTransactionRecord record) {
        return encode(MAPPER.valueToTree(record));
    }

    public static SourceTransactionRecord decodeTransaction(byte[] value) {
        return decode(value, SourceTransactionRecord.class);
    }

    public static byte[] encodeSourceLogRead(SourceLogReadRecord record) {
        return encode(MAPPER.valueToTree(record));
    }

    public static SourceLogReadRecord decodeSourceLogRead(byte[] value) {
        return decode(value, SourceLogReadRecord.class);
    }

    public static byte[] encodeOffsetCommit(SourceOffsetCommitRecord record) {
        return encode(MAPPER.valueToTree(record));
    }

    public static SourceOffsetCommitRecord decodeOffsetCommit(byte[] value) {
        return decode(value, SourceOffsetCommitRecord.class);
    }

    private static byte[] encode(ObjectNode fields) {
        ObjectNode value = MAPPER.createObjectNode().put(VERSION_FIELD, VERSION);
        value.setAll(fields);
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (IOException e) {
            // Never put the fields in the message: mirror configs may hold secrets.
            throw new IllegalStateException("Cannot encode a record value", e);
        }
    }

    private static <T> T decode(byte[] value, Class<T> type) {
        if (value == null) {
            throw new IllegalArgumentException("Cannot decode a tombstone as " + type.getSimpleName());
        }
        try {
            JsonNode tree = MAPPER.readTree(value);
            JsonNode version = tree.path(VERSION_FIELD);
            if (!tree.isObject() || !version.isInt() || version.intValue() < 1) {
                throw new IllegalArgumentException("Not a versioned " + type.getSimpleName() + " value");
            }
            return MAPPER.treeToValue(tree, type);
        } catch (IOException e) {
            throw new IllegalArgumentException("Cannot decode " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }
}
