package io.clustermirror.common;

import java.util.Map;

/** Checks mirror names and configs; see {@link MirrorConfig} for the rules. */
final class MirrorConfigValidator {
    private MirrorConfigValidator() {
    }

    static MirrorConfig validate(String name, Map<String, String> configs) {
        throw new UnsupportedOperationException("TODO");
    }

    static Map<String, String> redact(Map<String, String> configs) {
        throw new UnsupportedOperationException("TODO");
    }
}
