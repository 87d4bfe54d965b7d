package io.clustermirror.common;

/**
 * A mirror operation failed with a named {@link MirrorError}. The message says what caused it and,
 * where there is something to do, what the operator should do.
 */
public class ClusterMirrorException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final MirrorError error;

    public ClusterMirrorException(MirrorError error, String message) {
        super(error.format(message));
        this.error = error;
    }

    public ClusterMirrorException(MirrorError error, String message, Throwable cause) {
        super(error.format(message), cause);
        this.error = error;
    }

    public MirrorError error() {
        return error;
    }
}
