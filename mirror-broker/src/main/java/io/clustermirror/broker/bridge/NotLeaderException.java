package io.clustermirror.broker.bridge;

/** This broker is not (or no longer) the leader of the partition at the expected epoch. */
public class NotLeaderException extends Exception {
    private static final long serialVersionUID = 1L;

    public NotLeaderException(String message) {
        super(message);
    }
}
