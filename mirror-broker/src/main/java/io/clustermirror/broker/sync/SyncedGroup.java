package io.clustermirror.broker.sync;

import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.common.GroupType;

import java.util.Comparator;
import java.util.Optional;

/**
 * A group whose offsets the sync copies: its kind and id. The two kinds go through the same planning; only the
 * Admin calls that read and write their offsets differ ({@link SyncReader}, {@link SyncExecutor}).
 */
public record SyncedGroup(Kind kind, String id) implements Comparable<SyncedGroup> {
    private static final String CONSUMER_PROTOCOL_TYPE = "consumer";
    private static final Comparator<SyncedGroup> ORDER = Comparator.comparing(SyncedGroup::kind).thenComparing(SyncedGroup::id);

    public enum Kind {
        /** Classic, simple or KIP-848 consumer groups: their committed offsets. */
        CONSUMER("consumer group"),
        /** KIP-932 share groups: the start offset of each share-partition (records before it are done). */
        SHARE("share group");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }
    }

    /**
     * The kind of a listed group, if the sync copies its kind (not streams groups). Works with any source version:
     * brokers before 3.8 report no type, and their consumer groups use protocol type "consumer" or none; only a source
     * that supports share groups lists any.
     */
    public static Optional<Kind> kindOf(GroupListing g) {
        if (g.type().equals(Optional.of(GroupType.SHARE))) {
            return Optional.of(Kind.SHARE);
        }
        boolean consumerType = g.type().map(t -> t == GroupType.CLASSIC || t == GroupType.CONSUMER).orElse(true);
        boolean consumerProtocol = g.protocol() == null || g.protocol().isEmpty() || g.protocol().equals(CONSUMER_PROTOCOL_TYPE);
        return consumerType && consumerProtocol ? Optional.of(Kind.CONSUMER) : Optional.empty();
    }

    static SyncedGroup consumer(String id) {
        return new SyncedGroup(Kind.CONSUMER, id);
    }

    static SyncedGroup share(String id) {
        return new SyncedGroup(Kind.SHARE, id);
    }

    @Override
    public int compareTo(SyncedGroup other) {
        return ORDER.compare(this, other);
    }

    /** For logs: "share group 'jobs'". */
    @Override
    public String toString() {
        return kind.label + " '" + id + "'";
    }
}
