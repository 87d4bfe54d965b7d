package io.clustermirror.common.compat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;

/**
 * How the compatibility layer reaches a Kafka class, method or field whose name or signature differs between the
 * supported Kafka lines: looked up once, by name, when a shape is bound, and called through here. A lookup that finds
 * nothing throws an {@link IllegalStateException} that names what this Kafka lacks, which a node reports at start; a
 * call rethrows what the Kafka code threw, as it threw it, so callers catch Kafka's own exceptions as before.
 */
public final class Reflection {
    private Reflection() {
    }

    /**
     * The first of {@code names} that this Kafka has, not initialised.
     *
     * @throws IllegalStateException naming {@code what} and every name looked for, when it has none
     */
    public static Class<?> firstClass(String what, String... names) {
        for (String name : names) {
            Class<?> c = optionalClass(name);
            if (c != null) {
                return c;
            }
        }
        throw new IllegalStateException("This Kafka has no " + what + " class (looked for " + String.join(", ", names) + ")");
    }

    /** The class named {@code name} (not initialised), or null if this Kafka has none. */
    public static Class<?> optionalClass(String name) {
        try {
            return Class.forName(name, false, Reflection.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    /** The public constructor of {@code owner} with exactly these parameters, or null. */
    public static Constructor<?> constructorOrNull(Class<?> owner, Class<?>... parameters) {
        try {
            return owner.getConstructor(parameters);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** The public constructor of {@code owner} with exactly these parameters. */
    public static Constructor<?> constructor(Class<?> owner, Class<?>... parameters) {
        Constructor<?> c = constructorOrNull(owner, parameters);
        if (c == null) {
            throw new IllegalStateException("This Kafka has no constructor " + owner.getName() + List.of(parameters));
        }
        return c;
    }

    /** The public method of {@code owner} (declared or inherited) with exactly these parameters, or null. */
    public static Method methodOrNull(Class<?> owner, String name, Class<?>... parameters) {
        try {
            return owner.getMethod(name, parameters);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** The public method of {@code owner} (declared or inherited) with exactly these parameters. */
    public static Method method(Class<?> owner, String name, Class<?>... parameters) {
        Method m = methodOrNull(owner, name, parameters);
        if (m == null) {
            throw new IllegalStateException("This Kafka has no method " + owner.getName() + "." + name + List.of(parameters));
        }
        return m;
    }

    /**
     * The first public method of {@code owner} without parameters named one of {@code names}: for an accessor renamed
     * between lines.
     */
    public static Method firstMethod(Class<?> owner, String... names) {
        for (String name : names) {
            Method m = methodOrNull(owner, name);
            if (m != null) {
                return m;
            }
        }
        throw new IllegalStateException("This Kafka has no method " + owner.getName() + "." + String.join("() or .", names) + "()");
    }

    /** The public field of {@code owner} named {@code name}, whatever its type. */
    public static Field field(Class<?> owner, String name) {
        try {
            return owner.getField(name);
        } catch (NoSuchFieldException e) {
            throw new IllegalStateException("This Kafka has no field " + owner.getName() + "." + name, e);
        }
    }

    /**
     * The field {@code owner} itself declares named {@code name}, whatever its access, made accessible: for Kafka state
     * that has no accessor (a log's lock, a partition's leader/ISR lock).
     */
    public static Field accessibleField(Class<?> owner, String name) {
        try {
            Field f = owner.getDeclaredField(name);
            f.setAccessible(true);
            return f;
        } catch (NoSuchFieldException e) {
            throw new IllegalStateException("This Kafka has no field " + owner.getName() + "." + name, e);
        }
    }

    /** The method {@code owner} itself declares with exactly these parameters, whatever its access, made accessible. */
    public static Method accessibleMethod(Class<?> owner, String name, Class<?>... parameters) {
        try {
            Method m = owner.getDeclaredMethod(name, parameters);
            m.setAccessible(true);
            return m;
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException("This Kafka has no method " + owner.getName() + "." + name + List.of(parameters), e);
        }
    }

    public static Object newInstance(Constructor<?> constructor, Object... args) {
        try {
            return constructor.newInstance(args);
        } catch (InvocationTargetException e) {
            throw rethrown(e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Cannot call " + constructor, e);
        }
    }

    public static Object invoke(Method method, Object target, Object... args) {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw rethrown(e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Cannot call " + method, e);
        }
    }

    public static Object get(Field field, Object target) {
        try {
            return field.get(target);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("Cannot read " + field, e);
        }
    }

    /**
     * Sets a field made accessible by {@link #accessibleField}, a final one included: for Kafka state that has no
     * setter and is read only after it is set (a selector's buffer pool, read when a connection is made).
     */
    public static void set(Field field, Object target, Object value) {
        try {
            field.set(target, value);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("Cannot set " + field, e);
        }
    }

    /**
     * What the Kafka code threw, as it threw it: unchecked exceptions and errors as they are, an {@link IOException}
     * as an {@link UncheckedIOException}, any other checked one wrapped.
     */
    private static RuntimeException rethrown(InvocationTargetException e) {
        if (e.getCause() instanceof RuntimeException r) {
            return r;
        }
        if (e.getCause() instanceof Error error) {
            throw error;
        }
        if (e.getCause() instanceof IOException io) {
            return new UncheckedIOException(io);
        }
        return new IllegalStateException(e.getCause());
    }
}
