package io.clustermirror.admin;

/**
 * Told how a long operation goes ({@link MirrorTopicsOptions#progressListener}): at each check of a wait for
 * partitions to catch up, and as an integrity check compares batches. It is called on the admin client's own thread,
 * which runs every operation in turn, so it must return quickly; an exception it throws fails the operation.
 */
@FunctionalInterface
public interface ProgressListener {
    /** The listener of an operation that is given none: it ignores every report. */
    ProgressListener NONE = progress -> { };

    void onProgress(OperationProgress progress);
}
