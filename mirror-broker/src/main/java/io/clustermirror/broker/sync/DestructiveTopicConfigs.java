package io.clustermirror.broker.sync;

import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which changes of a topic config let the destination delete mirrored data sooner than it would now, and so are held
 * under {@code mirror.source.destructive.policy=hold}. Pure.
 *
 * <p>A value the sync cannot compare counts as destructive: an unset value (the destination's default, which the sync
 * does not read), and {@code -2} of the {@code local.retention.*} keys (which follows {@code retention.*}). So a source
 * that removes its {@code retention.ms} override is held too; a change the destination keeps at least as long is not.
 */
final class DestructiveTopicConfigs {
    /** Keys whose smaller value deletes sooner; {@code -1} means unlimited where Kafka allows it. */
    private static final Set<String> SHORTER_DELETES_SOONER = Set.of("retention.ms", "retention.bytes", "local.retention.ms",
        "local.retention.bytes", "delete.retention.ms", "min.compaction.lag.ms", "max.compaction.lag.ms");
    private static final String CLEANUP_POLICY = "cleanup.policy";
    private static final long UNKNOWN = Long.MIN_VALUE;

    private DestructiveTopicConfigs() {
    }

    /**
     * True if setting {@code key} from {@code destination} to {@code source} may delete data sooner.
     *
     * @param destination the destination topic's value, null when not set on the topic
     * @param source      the source topic's value, null when the source no longer sets it (the sync would remove it)
     */
    static boolean deletesSooner(String key, String destination, String source) {
        if (SHORTER_DELETES_SOONER.contains(key)) {
            long before = limit(destination);
            long after = limit(source);
            if (after == UNKNOWN) {
                return true;
            }
            return before == UNKNOWN ? after != Long.MAX_VALUE : after < before;
        }
        if (CLEANUP_POLICY.equals(key)) {
            // Adding compaction removes superseded values; adding deletion removes old segments.
            return destination == null || source == null || !policies(destination).containsAll(policies(source));
        }
        return false;
    }

    /** The value as a limit: unlimited as {@link Long#MAX_VALUE}; {@link #UNKNOWN} when it cannot be compared. */
    private static long limit(String value) {
        if (value == null) {
            return UNKNOWN;
        }
        try {
            long v = Long.parseLong(value.trim());
            return v == -1 ? Long.MAX_VALUE : v < 0 ? UNKNOWN : v;
        } catch (NumberFormatException e) {
            return UNKNOWN;
        }
    }

    private static Set<String> policies(String value) {
        Set<String> set = new TreeSet<>();
        Arrays.stream(value.split(",")).map(String::trim).filter(p -> !p.isEmpty()).forEach(set::add);
        return set;
    }
}
