package io.clustermirror.common.records;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonValue;

import java.util.ArrayList;
import java.util.List;

/**
 * The moves of a source partition's log start (a DeleteRecords, or retention on the source) that the destination has
 * not followed yet: each is held for the mirror's hold time from when the destination first saw it, then applied, so a
 * command on a compromised or mis-operated source deletes nothing on the destination at once. Kept by the partition's
 * destination leader and recorded in {@code __mirror_state}, so a new leader goes on with the same clock.
 *
 * <p>An operator decides on held moves with a {@link HeldDecision}: applied ones become due at once; rejected ones become
 * one rejected entry, which is never due by itself and keeps the destination from holding the same move again.
 *
 * <p>Invariants: entries are in ascending order of both {@code offset} and {@code sinceMs}; there are at most
 * {@link #MAX_ENTRIES}; only the first may be rejected. Bounding the list may merge two entries into the later one (its
 * offset and its time): that only ever holds a move longer, never shorter.
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
     * @param offset   the source log start the destination would move to
     * @param sinceMs  when the destination first saw it
     * @param rejected an operator rejected it: the destination keeps the records below it until an operator applies it
     */
    public record Entry(long offset, long sinceMs, @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean rejected) {
        /** A held move. */
        public Entry(long offset, long sinceMs) {
            this(offset, sinceMs, false);
        }

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
            if (after.rejected()) {
                throw new IllegalArgumentException("only the first held log start move may be rejected: " + after);
            }
        }
        return new HeldLogStarts(entries);
    }

    /** Every entry, the rejected one too (as recorded). */
    @JsonValue
    public List<Entry> entries() {
        return entries;
    }

    /** The moves held back: every entry but a rejected one. */
    public List<Entry> held() {
        return entries.isEmpty() || !entries.get(0).rejected() ? entries : entries.subList(1, entries.size());
    }

    /** True if no move is held back (a rejected one is not held: it waits for no time). */
    public boolean isEmpty() {
        return held().isEmpty();
    }

    /** The highest offset held or rejected, or -1 when there is none. */
    public long highestOffset() {
        return entries.isEmpty() ? -1 : entries.get(entries.size() - 1).offset();
    }

    /** The move held longest (it applies first), or null when nothing is held. */
    public Entry oldest() {
        List<Entry> held = held();
        return held.isEmpty() ? null : held.get(0);
    }

    /**
     * The held moves after the source's log start was seen at {@code sourceLogStart} at {@code nowMs}, while the
     * destination's log start is {@code destLogStart}: a move past both the destination's log start and every held one
     * is added; anything else changes nothing (a move at or below a rejected one too).
     */
    public HeldLogStarts observe(long sourceLogStart, long destLogStart, long nowMs) {
        if (sourceLogStart <= destLogStart || sourceLogStart <= highestOffset()) {
            return this;
        }
        List<Entry> next = new ArrayList<>(entries);
        long since = entries.isEmpty() ? nowMs : Math.max(nowMs, entries.get(entries.size() - 1).sinceMs());
        next.add(new Entry(sourceLogStart, since));
        if (next.size() > MAX_ENTRIES) {
            // The newest two become one, at the later offset and time: the earlier move waits as long as the later. The
            // first entry is never merged away, so a rejected one stays first.
            Entry newest = next.remove(next.size() - 1);
            next.set(next.size() - 1, newest);
        }
        return new HeldLogStarts(next);
    }

    /**
     * The highest offset the destination may follow at {@code nowMs}, or -1 if none: a held move whose hold of
     * {@code holdMs} has passed (a hold of 0 makes every move due at once), or any move, rejected ones too, that an
     * operator's {@code decision} applied.
     *
     * @param decision the topic's last operator decision, or null
     */
    public long dueOffset(long nowMs, long holdMs, HeldDecision decision) {
        boolean applied = decision != null && decision.verdict() == HeldDecision.Verdict.APPLY;
        long due = -1;
        for (Entry e : entries) {
            if ((!e.rejected() && e.appliesAtMs(holdMs) <= nowMs) || (applied && decision.covers(e.sinceMs()))) {
                due = e.offset();
            }
        }
        return due;
    }

    /**
     * The moves after an operator's {@code decision}: a rejection turns the held moves it covers (the first ones) and a
     * rejected entry before them into one rejected entry at the highest of their offsets; anything else changes nothing.
     *
     * @param decision the topic's last operator decision, or null
     */
    public HeldLogStarts decided(HeldDecision decision) {
        if (decision == null || decision.verdict() != HeldDecision.Verdict.REJECT) {
            return this;
        }
        int covered = 0;
        while (covered < entries.size() && decision.covers(entries.get(covered).sinceMs())) {
            covered++;
        }
        if (covered == 0 || (covered == 1 && entries.get(0).rejected())) {
            return this;
        }
        Entry last = entries.get(covered - 1);
        List<Entry> next = new ArrayList<>();
        next.add(new Entry(last.offset(), last.sinceMs(), true));
        next.addAll(entries.subList(covered, entries.size()));
        return new HeldLogStarts(next);
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
