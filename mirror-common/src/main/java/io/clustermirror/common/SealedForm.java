package io.clustermirror.common;

/**
 * The text form of a secret sealed for the destination brokers ({@link io.clustermirror.common.secrets.SealingKey}):
 * config checks recognise it anywhere, only the brokers open it.
 */
public final class SealedForm {
    /** The prefix of a value sealed by this release: {@code sealed:v2:<key id>:<base64url payload>}. */
    public static final String CURRENT_PREFIX = "sealed:v2:";
    /** The prefix of a value sealed by the previous release, which opens but is sealed again in the current form. */
    public static final String PREVIOUS_PREFIX = "sealed:v1:";

    private SealedForm() {
    }

    /** True if {@code value} is a sealed secret (of any key, in either form). */
    public static boolean isSealed(String value) {
        return value != null && (value.startsWith(CURRENT_PREFIX) || value.startsWith(PREVIOUS_PREFIX));
    }
}
