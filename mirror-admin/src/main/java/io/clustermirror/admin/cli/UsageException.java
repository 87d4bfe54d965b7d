package io.clustermirror.admin.cli;

/** The command line is wrong: the tool prints the message and a one-line usage hint, and exits with 2. */
public class UsageException extends Exception {
    private static final long serialVersionUID = 1L;
    private final String usage;

    public UsageException(String message, String usage) {
        super(message);
        this.usage = usage;
    }

    /** One line showing how to call the tool, for the action given if there was one. */
    public String usage() {
        return usage;
    }
}
