package io.clustermirror.broker.bridge;

/** Kafka classes that moved between the supported lines, found by name under each line's name. */
final class MovedClasses {
    private MovedClasses() {
    }

    /**
     * The first of {@code names} that this Kafka has, initialised.
     *
     * @throws ClassNotFoundException naming {@code what} and every name looked for, when it has none
     */
    static Class<?> first(String what, String... names) throws ClassNotFoundException {
        for (String name : names) {
            try {
                return Class.forName(name, true, MovedClasses.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                // another line's name
            }
        }
        throw new ClassNotFoundException(what + " (looked for " + String.join(", ", names) + ")");
    }
}
