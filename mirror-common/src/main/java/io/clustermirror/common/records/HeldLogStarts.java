package io.clustermirror.common.records;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

import java.util.ArrayList;
import java.util.List;

/**
 * The moves of a source partition's log start (a DeleteRecords, or retention on the source) that the destination has
 * not followed yet: each is held for the mirror's hold time from when the destination first saw it, then applied, so a
 * command on a compromised or mis-operated source deletes nothing on the destination at once. Kept by the partition's
 * destination leader and recorded in {@code __mirror_state}, so a new leader goes on with the same clock.
 *
 * <p>Invariants: entries are in ascending order of both {@code offset} and {@code sinceMs}; there are at most
 * {@link #MAX_ENTRIES}. Bounding the list may merge two entries into the later one (its offset and its time): that only
 * ever holds a move longer, never shorter.
 *
 * <p>Immutable; every method returns a new value.
 */
public final class HeldLogStarts {
    /** How many distinct moves are remembered; retention on the source moves the log start once per segment. */
    public static final int MAX_ENTRIES = 16;
    /** Nothing held. */
    public static final HeldLogStarts NONE = new HeldLogStarts(List.of());

    /**
     * One held move.
     *
     * @param offset  the source log start the destination would move to
     * @param sinceMs when the destination first saw it
     */
    public record Entry(long offset, long sinceMs) {
        /** When the move applies under a hold of {@code holdMs}. */
        public long appliesAtMs(long holdMs) {
            long at = sinceMs + holdMs;
            return at < sinceMs ? Long.MAX_VALUE : at;
        }
    }

    private final List<Entry> entries;

    private HeldLogStarts(List<Entry> entries) {
        this.entries = List.copyOf(entries);
    }

    /**
     * The held moves as recorded, checked against the invariants.
     *
     * @throws IllegalArgumentException if they are out of order or too many
     */
    @JsonCreator
    public static HeldLogStarts of(List<Entry> entries) {
        if (entries == null || entries.isEmpty()) {
            return NONE;
        }
        if (entries.size() > MAX_ENTRIES) {
            throw new IllegalArgumentException("at most " + MAX_ENTRIES + " held log start moves, not " + entries.size());
        }
        for (int i = 1; i < entries.size(); i++) {
            Entry before = entries.get(i - 1);
            Entry after = entries.get(i);
            if (after.offset() <= before.offset() || after.sinceMs() < before.sinceMs()) {
                throw new IllegalArgumentException("held log start moves out of order: " + before + " then " + after);
            }
        }
        return new HeldLogStarts(entries);
    }

    @JsonValue
    public List<Entry> entries() {
        return entries;
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** The highest held offset, or -1 when nothing is held. */
    public long highestOffset() {
        return entries.isEmpty() ? -1 : entries.get(entries.size() - 1).offset();
    }

    /** The move held longest (it applies first), or null when nothing is held. */
    public Entry oldest() {
        return entries.isEmpty() ? null : entries.get(0);
    }

    /**
     * The held moves after the source's log start was seen at {@code sourceLogStart} at {@code nowMs}, while the
     * destination's log start is {@code destLogStart}: a move past both the destination's log start and every held one
     * is added; anything else changes nothing.
     */
    public HeldLogStarts observe(long sourceLogStart, long destLogStart, long nowMs) {
        if (sourceLogStart <= destLogStart || sourceLogStart <= highestOffset()) {
            return this;
        }
        List<Entry> next = new ArrayList<>(entries);
        long since = entries.isEmpty() ? nowMs : Math.max(nowMs, entries.get(entries.size() - 1).sinceMs());
        next.add(new Entry(sourceLogStart, since));
        if (next.size() > MAX_ENTRIES) {
            // The newest two become one, at the later offset and time: the earlier move waits as long as the later.
            Entry newest = next.remove(next.size() - 1);
            next.set(next.size() - 1, newest);
        }
        return new HeldLogStarts(next);
    }

    /**
     * The highest held offset whose hold of {@code holdMs} has passed at {@code nowMs}, or -1 if none has. A hold of 0
     * makes every move due at once.
     */
    public long dueOffset(long nowMs, long holdMs) {
        long due = -1;
        for (Entry e : entries) {
            if (e.appliesAtMs(holdMs) <= nowMs) {
                due = e.offset();
            }
        }
        return due;
    }

    /** The moves still held once the destination's log start reached {@code destLogStart}. */
    public HeldLogStarts followedTo(long destLogStart) {
        if (entries.isEmpty() || entries.get(0).offset() > destLogStart) {
            return this;
        }
        return new HeldLogStarts(entries.stream().filter(e -> e.offset() > destLogStart).toList());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HeldLogStarts other && entries.equals(other.entries);
    }

    @Override
    public int hashCode() {
        return entries.hashCode();
    }

    @Override
    public String toString() {
        return entries.toString();
    }
}
