package io.clustermirror.broker.sync;

import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.HeldChange;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * How the sync asks the MirrorController to change a mirror's topics ({@link CommandSender} in a broker): the controller
 * stays the single writer of {@code __mirror_metadata}.
 */
interface MirrorCommands {
    /**
     * Sends a command; the result completes with the controller's answer, with a failed result
     * ({@code MIRROR_CONTROLLER_UNAVAILABLE}) when the controller does not answer within {@code timeoutMs}, or
     * exceptionally when the command could not be sent.
     *
     * @param heldChanges what a HOLD_CHANGES command records; empty for the other commands
     */
    CompletableFuture<CommandResult> send(CommandOp op, String mirror, List<String> topics, List<HeldChange> heldChanges, long timeoutMs);
}
