package io.clustermirror.broker.sync;

import java.util.Comparator;

/**
 * A group whose offsets the sync copies: its kind and id. The two kinds go through the same planning; only the
 * Admin calls that read and write their offsets differ ({@link SyncReader}, {@link SyncExecutor}).
 */
record SyncedGroup(Kind kind, String id) implements Comparable<SyncedGroup> {
    private static final Comparator<SyncedGroup> ORDER = Comparator.comparing(SyncedGroup::kind).thenComparing(SyncedGroup::id);

    enum Kind {
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
