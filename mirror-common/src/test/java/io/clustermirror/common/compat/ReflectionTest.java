package io.clustermirror.common.compat;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReflectionTest {
    /** Called reflectively below. */
    public static void failWith(Exception e) throws Exception {
        throw e;
    }

    @Test
    void theFirstClassPresentIsTakenAndNoneIsNamedWithEveryCandidate() {
        assertSame(String.class, Reflection.firstClass("String", "org.example.Absent", "java.lang.String"));
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> Reflection.firstClass("Records", "org.example.A", "org.example.B"));
        assertEquals("This Kafka has no Records class (looked for org.example.A, org.example.B)", e.getMessage());
    }

    @Test
    void aMissingMemberIsNamedWithItsParameters() {
        assertNull(Reflection.methodOrNull(String.class, "noSuchMethod", int.class));
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> Reflection.method(String.class, "noSuchMethod", int.class));
        assertEquals("This Kafka has no method java.lang.String.noSuchMethod[int]", e.getMessage());
        assertTrue(assertThrows(IllegalStateException.class, () -> Reflection.field(String.class, "noSuchField"))
            .getMessage().contains("java.lang.String.noSuchField"));
    }

    /** Private state the accessible lookups below reach, as the bridge reaches a log's lock. */
    private final Object secret = "held";

    private String whisper() {
        return "said";
    }

    @Test
    void privateMembersAreReachedAndAMissingOneIsNamed() {
        assertEquals("held", Reflection.get(Reflection.accessibleField(ReflectionTest.class, "secret"), this));
        assertEquals("said", Reflection.invoke(Reflection.accessibleMethod(ReflectionTest.class, "whisper"), this));
        assertEquals("length", Reflection.firstMethod(String.class, "size", "length").getName());
        assertEquals("This Kafka has no method java.lang.String.size() or .count()",
            assertThrows(IllegalStateException.class, () -> Reflection.firstMethod(String.class, "size", "count")).getMessage());
        assertEquals("This Kafka has no field java.lang.String.lock",
            assertThrows(IllegalStateException.class, () -> Reflection.accessibleField(String.class, "lock")).getMessage());
        assertEquals("This Kafka has no method java.lang.String.unlock[]",
            assertThrows(IllegalStateException.class, () -> Reflection.accessibleMethod(String.class, "unlock")).getMessage());
    }

    @Test
    void aCallRethrowsWhatTheCalledCodeThrew() {
        var fail = Reflection.method(ReflectionTest.class, "failWith", Exception.class);
        IllegalArgumentException unchecked = new IllegalArgumentException("bad");
        assertSame(unchecked, assertThrows(IllegalArgumentException.class, () -> Reflection.invoke(fail, null, unchecked)));
        IOException io = new IOException("disk");
        assertSame(io, assertThrows(UncheckedIOException.class, () -> Reflection.invoke(fail, null, io)).getCause());
        Exception checked = new Exception("other");
        assertSame(checked, assertThrows(IllegalStateException.class, () -> Reflection.invoke(fail, null, checked)).getCause());
    }
}
