package io.clustermirror.broker.bridge;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Checks that every Kafka class, method and field Cluster Mirror's compiled code refers to exists in the Kafka this JVM
 * runs, before anything uses one. Kafka's internal classes change shape between releases without notice; the JVM
 * would only report a missing one as a {@link LinkageError} the first time the code that needs it runs, which may be
 * a failover hours later. So a node reads the references out of our own class files (their constant pools: every
 * class, field and method a class file names is there, with its exact descriptor) and resolves each against the
 * running Kafka, reflectively and without initialising anything.
 *
 * <p>Only references into Kafka ({@code kafka.*} and {@code org.apache.kafka.*}) are checked: the JDK and the other
 * libraries are not Kafka's to change. A reference resolves when the owner class, or one of its superclasses or
 * interfaces, declares a member of that name and descriptor, as the JVM resolves it.
 */
final class KafkaLinkage {
    private static final int CONSTANT_UTF8 = 1;
    private static final int CONSTANT_INTEGER = 3;
    private static final int CONSTANT_FLOAT = 4;
    private static final int CONSTANT_LONG = 5;
    private static final int CONSTANT_DOUBLE = 6;
    private static final int CONSTANT_CLASS = 7;
    private static final int CONSTANT_STRING = 8;
    private static final int CONSTANT_FIELDREF = 9;
    private static final int CONSTANT_METHODREF = 10;
    private static final int CONSTANT_INTERFACE_METHODREF = 11;
    private static final int CONSTANT_NAME_AND_TYPE = 12;
    private static final int CONSTANT_METHOD_HANDLE = 15;
    private static final int CONSTANT_METHOD_TYPE = 16;
    private static final int CONSTANT_DYNAMIC = 17;
    private static final int CONSTANT_INVOKE_DYNAMIC = 18;
    private static final int CONSTANT_MODULE = 19;
    private static final int CONSTANT_PACKAGE = 20;
    private static final int CLASS_FILE_MAGIC = 0xCAFEBABE;
    /** Third-party code shaded into the one jar: it does not refer to Kafka. */
    private static final String SHADED = "io/clustermirror/shaded/";

    private KafkaLinkage() {
    }

    /**
     * A Kafka class, field or method one of our classes refers to.
     *
     * @param owner      the referenced class, binary name ({@code kafka.cluster.Partition})
     * @param member     the member's name, {@code <init>} for a constructor; null for a reference to the class alone
     * @param descriptor the member's JVM descriptor; null for a class reference
     * @param usedBy     our class that refers to it, binary name
     */
    record Reference(String owner, String member, String descriptor, String usedBy) {
        /** How a one-line message names it: {@code kafka.cluster.Partition.appendRecordsToLeader(...)}. */
        String describe() {
            if (member == null) {
                return "class " + owner;
            }
            return owner + (descriptor.startsWith("(") ? "." + member + descriptor : "." + member + " (" + descriptor + ")");
        }
    }

    /**
     * The references into Kafka made by the classes of {@code packagePrefix} (a resource path such as
     * {@code io/clustermirror/}) in the jars or class directories {@code anchors} were loaded from.
     */
    static List<Reference> referencesOf(String packagePrefix, Class<?>... anchors) {
        Set<Path> locations = new LinkedHashSet<>();
        for (Class<?> anchor : anchors) {
            locations.add(locationOf(anchor));
        }
        return referencesIn(packagePrefix, locations);
    }

    /** The references into Kafka made by the classes of {@code packagePrefix} in the given jars or class directories. */
    static List<Reference> referencesIn(String packagePrefix, Collection<Path> locations) {
        Set<Reference> references = new LinkedHashSet<>();
        for (Path location : locations) {
            forEachClassFile(location, packagePrefix, bytes -> references.addAll(parse(bytes)));
        }
        return List.copyOf(references);
    }

    /** The references that do not resolve against the classes {@code loader} sees, in a stable order. */
    static List<Reference> missing(List<Reference> references, ClassLoader loader) {
        Set<String> reported = new TreeSet<>();
        List<Reference> missing = new ArrayList<>();
        for (Reference r : references) {
            if (!resolves(r, loader) && reported.add(r.describe())) {
                missing.add(r);
            }
        }
        missing.sort((a, b) -> a.describe().compareTo(b.describe()));
        return missing;
    }

    /** The Kafka references a class file makes, read from its constant pool. */
    static List<Reference> parse(byte[] classFile) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile))) {
            if (in.readInt() != CLASS_FILE_MAGIC) {
                throw new IllegalArgumentException("not a class file");
            }
            in.readUnsignedShort(); // minor version
            in.readUnsignedShort(); // major version
            int count = in.readUnsignedShort();
            int[] tags = new int[count];
            String[] utf8 = new String[count];
            int[] first = new int[count];
            int[] second = new int[count];
            for (int i = 1; i < count; i++) {
                int tag = in.readUnsignedByte();
                tags[i] = tag;
                switch (tag) {
                    case CONSTANT_UTF8 -> utf8[i] = in.readUTF();
                    case CONSTANT_INTEGER, CONSTANT_FLOAT -> in.readInt();
                    case CONSTANT_LONG, CONSTANT_DOUBLE -> {
                        in.readLong();
                        i++; // takes two entries
                    }
                    case CONSTANT_CLASS, CONSTANT_STRING, CONSTANT_METHOD_TYPE, CONSTANT_MODULE, CONSTANT_PACKAGE ->
                        first[i] = in.readUnsignedShort();
                    case CONSTANT_FIELDREF, CONSTANT_METHODREF, CONSTANT_INTERFACE_METHODREF, CONSTANT_NAME_AND_TYPE,
                         CONSTANT_DYNAMIC, CONSTANT_INVOKE_DYNAMIC -> {
                        first[i] = in.readUnsignedShort();
                        second[i] = in.readUnsignedShort();
                    }
                    case CONSTANT_METHOD_HANDLE -> {
                        in.readUnsignedByte();
                        first[i] = in.readUnsignedShort();
                    }
                    default -> throw new IllegalArgumentException("unknown constant pool tag " + tag + " at entry " + i);
                }
            }
            in.readUnsignedShort(); // access flags
            String self = utf8[first[in.readUnsignedShort()]].replace('/', '.');
            List<Reference> references = new ArrayList<>();
            for (int i = 1; i < count; i++) {
                if (tags[i] == CONSTANT_CLASS) {
                    String owner = ownerName(utf8[first[i]]);
                    if (owner != null) {
                        references.add(new Reference(owner, null, null, self));
                    }
                } else if (tags[i] == CONSTANT_FIELDREF || tags[i] == CONSTANT_METHODREF
                        || tags[i] == CONSTANT_INTERFACE_METHODREF) {
                    String owner = ownerName(utf8[first[first[i]]]);
                    if (owner != null) {
                        int nameAndType = second[i];
                        references.add(new Reference(owner, utf8[first[nameAndType]], utf8[second[nameAndType]], self));
                    }
                }
            }
            return references;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read a Cluster Mirror class file", e);
        }
    }

    /** The binary name of a referenced Kafka class (the element class of an array), or null for any other class. */
    private static String ownerName(String internalName) {
        String name = internalName;
        if (name.startsWith("[")) {
            int element = name.indexOf('L');
            if (element < 0) {
                return null; // an array of primitives
            }
            name = name.substring(element + 1, name.length() - 1);
        }
        return name.startsWith("kafka/") || name.startsWith("org/apache/kafka/") ? name.replace('/', '.') : null;
    }

    private static boolean resolves(Reference r, ClassLoader loader) {
        Class<?> owner;
        try {
            owner = Class.forName(r.owner(), false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
        if (r.member() == null) {
            return true;
        }
        try {
            if (!r.descriptor().startsWith("(")) {
                return declaresField(owner, r.member(), r.descriptor());
            }
            if (r.member().equals("<init>")) {
                for (Constructor<?> c : owner.getDeclaredConstructors()) {
                    if (descriptorOf(c, void.class).equals(r.descriptor())) {
                        return true;
                    }
                }
                return false;
            }
            return declaresMethod(owner, r.member(), r.descriptor());
        } catch (LinkageError e) {
            return false; // a member's signature names a class this Kafka lacks
        }
    }

    private static boolean declaresField(Class<?> owner, String name, String descriptor) {
        for (Class<?> c : hierarchy(owner)) {
            for (Field f : c.getDeclaredFields()) {
                if (f.getName().equals(name) && descriptorOf(f.getType()).equals(descriptor)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean declaresMethod(Class<?> owner, String name, String descriptor) {
        for (Class<?> c : hierarchy(owner)) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(name) && descriptorOf(m, m.getReturnType()).equals(descriptor)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The class, its superclasses and all their interfaces, as the JVM searches them when it resolves a member. */
    private static List<Class<?>> hierarchy(Class<?> owner) {
        List<Class<?>> all = new ArrayList<>();
        Deque<Class<?>> todo = new ArrayDeque<>(List.of(owner));
        Set<Class<?>> seen = new HashSet<>();
        while (!todo.isEmpty()) {
            Class<?> c = todo.poll();
            if (!seen.add(c)) {
                continue;
            }
            all.add(c);
            if (c.getSuperclass() != null) {
                todo.add(c.getSuperclass());
            }
            todo.addAll(List.of(c.getInterfaces()));
        }
        return all;
    }

    private static String descriptorOf(Executable e, Class<?> returnType) {
        StringBuilder d = new StringBuilder("(");
        for (Class<?> p : e.getParameterTypes()) {
            d.append(descriptorOf(p));
        }
        return d.append(')').append(descriptorOf(returnType)).toString();
    }

    private static String descriptorOf(Class<?> type) {
        if (type.isArray()) {
            return type.getName().replace('.', '/');
        }
        if (!type.isPrimitive()) {
            return "L" + type.getName().replace('.', '/') + ";";
        }
        return switch (type.getName()) {
            case "void" -> "V";
            case "boolean" -> "Z";
            case "byte" -> "B";
            case "char" -> "C";
            case "short" -> "S";
            case "int" -> "I";
            case "long" -> "J";
            case "float" -> "F";
            case "double" -> "D";
            default -> throw new IllegalArgumentException("unknown primitive " + type);
        };
    }

    private interface ClassFileVisitor {
        void visit(byte[] classFile);
    }

    private static Path locationOf(Class<?> anchor) {
        CodeSource source = anchor.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            throw new IllegalStateException("Cannot tell where " + anchor.getName() + " was loaded from");
        }
        try {
            return Path.of(source.getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("Cannot tell where " + anchor.getName() + " was loaded from: " + source.getLocation(), e);
        }
    }

    private static void forEachClassFile(Path location, String packagePrefix, ClassFileVisitor visitor) {
        try {
            if (Files.isDirectory(location)) {
                Path root = location.resolve(packagePrefix);
                if (!Files.isDirectory(root)) {
                    return;
                }
                try (Stream<Path> files = Files.walk(root)) {
                    Iterable<Path> classFiles = files.filter(p -> p.toString().endsWith(".class"))
                        .filter(p -> !location.relativize(p).toString().replace('\\', '/').startsWith(SHADED))::iterator;
                    for (Path f : classFiles) {
                        visitor.visit(Files.readAllBytes(f));
                    }
                }
                return;
            }
            try (JarFile jar = new JarFile(location.toFile())) {
                for (JarEntry entry : (Iterable<JarEntry>) jar.stream()::iterator) {
                    if (entry.getName().startsWith(packagePrefix) && !entry.getName().startsWith(SHADED)
                            && entry.getName().endsWith(".class")) {
                        try (InputStream in = jar.getInputStream(entry)) {
                            visitor.visit(in.readAllBytes());
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read Cluster Mirror's classes in " + location, e);
        }
    }
}
