package io.clustermirror.common.records;

import com.fasterxml.jackson.annotation.JsonIgnore;

/**
 * Why the mirror controller cannot work now, written to {@code __mirror_commands} under the key
 * {@link RecordCodec#CONTROLLER_PROBLEM_KEY} after each failed attempt to take the role or to go on with it, so that a
 * client waiting there for its command's result learns within seconds that no result will come soon, and why, instead
 * of timing out with no cause. It is no command and answers none; a working controller skips it.
 *
 * @param nodeId  the broker whose controller failed
 * @param problem one line for the operator: what failed and, where it can tell, what to change
 * @param atMs    when it failed, by the broker's clock
 */
public record ControllerProblem(int nodeId, String problem, long atMs) implements CommandLogEntry {
    public ControllerProblem {
        problem = problem == null ? "" : problem;
    }

    /** None: a problem answers no command. */
    @Override
    @JsonIgnore
    public String commandId() {
        return null;
    }
}
