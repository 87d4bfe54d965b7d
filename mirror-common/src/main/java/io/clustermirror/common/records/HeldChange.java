package io.clustermirror.common.records;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.Objects;

/**
 * A change of a source topic that the metadata sync holds back instead of copying to the mirror topic
 * ({@code mirror.source.destructive.policy=hold}): a config change that lets the destination delete data sooner, or a
 * partition growth beyond {@code mirror.partitions.max.growth}. Kept in the topic's {@link MirrorTopicRecord} so that
 * every node, describe and a new controller see the same hold.
 *
 * @param kind    what changes
 * @param name    the config key ({@link Kind#CONFIG}), or {@value #PARTITIONS_NAME}
 * @param value   the source's value: the config value, null when the source removed it (the destination would fall back
 *                to its default); the source's partition count
 * @param sinceMs when the sync first saw the change
 * @param status  held, or decided by an operator
 */
public record HeldChange(Kind kind, String name, @JsonInclude(JsonInclude.Include.NON_NULL) String value, long sinceMs,
                         Status status) {
    /** The {@link #name} of a partition growth. */
    public static final String PARTITIONS_NAME = "partitions";

    /** What a held change changes. */
    public enum Kind {
        CONFIG, PARTITIONS
    }

    /** Where a held change stands. */
    public enum Status {
        /** Waits for the hold time to pass, or for an operator. */
        HELD,
        /** An operator applied it ({@code --apply-held}): the sync copies it in its next round. */
        APPROVED,
        /** An operator rejected it ({@code --reject-held}): the destination keeps its value while the source keeps this one. */
        REJECTED
    }

    public HeldChange {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
        status = status == null ? Status.HELD : status;
    }

    /** A change the sync just found, held from {@code sinceMs}. */
    public static HeldChange held(Kind kind, String name, String value, long sinceMs) {
        return new HeldChange(kind, name, value, sinceMs, Status.HELD);
    }

    /** True if both describe the same change of the source (whatever their times and status). */
    public boolean sameChange(HeldChange other) {
        return kind == other.kind && name.equals(other.name) && Objects.equals(value, other.value);
    }

    /** When the change applies by itself under a hold of {@code holdMs}; never for a decided one. */
    public long appliesAtMs(long holdMs) {
        if (status != Status.HELD) {
            return Long.MAX_VALUE;
        }
        long at = sinceMs + holdMs;
        return at < sinceMs ? Long.MAX_VALUE : at;
    }

    /** True if the sync may copy the change at {@code nowMs}: an operator applied it, or its hold has passed. */
    public boolean released(long nowMs, long holdMs) {
        return status == Status.APPROVED || appliesAtMs(holdMs) <= nowMs;
    }

    /** For log lines and describe: {@code retention.ms=1}, {@code removal of retention.ms}, {@code growth to 500 partitions}. */
    public String toDisplay() {
        if (kind == Kind.PARTITIONS) {
            return "growth to " + value + " partitions";
        }
        return value == null ? "removal of " + name : name + "=" + value;
    }

    public HeldChange withStatus(Status newStatus) {
        return new HeldChange(kind, name, value, sinceMs, newStatus);
    }
}
