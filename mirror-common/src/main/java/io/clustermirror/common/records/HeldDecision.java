package io.clustermirror.common.records;

import java.util.Objects;

/**
 * An operator's decision on the destructive source changes a mirror topic holds back ({@code --apply-held} or
 * {@code --reject-held}), kept in its {@link MirrorTopicRecord}. It covers what was held when the controller applied
 * it: the source log start moves its partition leaders first saw at or before {@code decidedMs}, and the held topic
 * changes ({@link HeldChange}) it marked. A change seen later waits its own hold.
 *
 * @param verdict   apply the held changes now, or keep the destination as it is
 * @param decidedMs when the controller applied the command (its clock; the partition leaders compare it with theirs)
 */
public record HeldDecision(Verdict verdict, long decidedMs) {
    /** What the operator decided. */
    public enum Verdict {
        /** The destination follows the held changes now instead of at the end of their hold. */
        APPLY,
        /** The destination keeps its data and configs; the held changes are never applied (a later change is held anew). */
        REJECT
    }

    public HeldDecision {
        Objects.requireNonNull(verdict, "verdict");
    }

    /** True if this decision covers a change first seen at {@code sinceMs}. */
    public boolean covers(long sinceMs) {
        return sinceMs <= decidedMs;
    }
}
