package io.clustermirror.it;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.spi.ToolProvider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No two packages of the product depend on each other, directly or through others: a package can be read, tested and
 * changed with only what is below it. The dependencies are the compiled classes' own, read by the JDK's jdeps, over
 * the product's modules (common, broker, admin, server) together.
 */
class PackageCyclesTest {
    /** Classes that locate each product module's classes on the test's class path (a jar, or a build's classes directory). */
    private static final List<String> MODULES = List.of("io.clustermirror.common.MirrorConfig",
        "io.clustermirror.broker.ClusterMirrorExtension", "io.clustermirror.admin.ClusterMirrorAdmin");
    /** The server module is not on this module's class path; the build has compiled it before the tests run. */
    private static final Path SERVER_CLASSES = Path.of("..", "mirror-server", "target", "classes");
    /**
     * The one cycle kept on purpose, in the shape of Kafka's own admin client: the public API's implementation uses its
     * internals, which build the API's value types.
     */
    private static final Set<Set<String>> ACCEPTED = Set.of(Set.of("io.clustermirror.admin", "io.clustermirror.admin.internals"));

    @Test
    void theProductsPackagesHaveNoCycles() throws Exception {
        Map<String, Set<String>> uses = packageDependencies();
        assertTrue(uses.keySet().containsAll(Set.of("io.clustermirror.broker", "io.clustermirror.broker.partition",
            "io.clustermirror.common", "io.clustermirror.admin", "io.clustermirror.server")), "jdeps read every module: " + uses.keySet());
        Set<Set<String>> cycles = new java.util.HashSet<>(stronglyConnected(uses));
        cycles.removeAll(ACCEPTED);
        assertEquals(Set.of(), cycles, "packages that depend on each other");
    }

    @Test
    void aCycleIsFound() {
        Map<String, Set<String>> uses = Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a", "d"), "d", Set.of());
        assertEquals(List.of(Set.of("a", "b", "c")), stronglyConnected(uses));
    }

    /** Package to the product packages it uses, from jdeps over every module's classes. */
    private static Map<String, Set<String>> packageDependencies() throws Exception {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("this JDK has no jdeps"));
        List<String> args = new ArrayList<>(List.of("-verbose:package", "-filter:none", "-e", "io\\.clustermirror\\..*"));
        for (String className : MODULES) {
            args.add(Path.of(Class.forName(className).getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        }
        assertTrue(java.nio.file.Files.isDirectory(SERVER_CLASSES), "build mirror-server first: " + SERVER_CLASSES.toAbsolutePath());
        args.add(SERVER_CLASSES.toString());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = jdeps.run(new PrintWriter(out), new PrintWriter(err), args.toArray(String[]::new));
        assertEquals(0, exit, "jdeps " + args + ": " + err);
        Map<String, Set<String>> uses = new TreeMap<>();
        for (String line : out.toString().split("\n")) {
            String[] words = line.trim().split("\\s+");
            if (words.length >= 3 && words[1].equals("->") && words[0].startsWith("io.clustermirror.")
                    && words[2].startsWith("io.clustermirror.")) {
                uses.computeIfAbsent(words[0], k -> new TreeSet<>());
                if (!words[0].equals(words[2])) {
                    uses.get(words[0]).add(words[2]);
                }
            }
        }
        return uses;
    }

    /** The groups of two or more packages that reach each other (Tarjan's strongly connected components). */
    static List<Set<String>> stronglyConnected(Map<String, Set<String>> uses) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        List<Set<String>> groups = new ArrayList<>();
        for (String start : new TreeSet<>(uses.keySet())) {
            if (!index.containsKey(start)) {
                visit(start, uses, index, low, stack, groups);
            }
        }
        return groups;
    }

    private static void visit(String node, Map<String, Set<String>> uses, Map<String, Integer> index, Map<String, Integer> low,
                              Deque<String> stack, List<Set<String>> groups) {
        index.put(node, index.size());
        low.put(node, index.get(node));
        stack.push(node);
        for (String next : uses.getOrDefault(node, Set.of())) {
            if (!index.containsKey(next)) {
                visit(next, uses, index, low, stack, groups);
                low.put(node, Math.min(low.get(node), low.get(next)));
            } else if (stack.contains(next)) {
                low.put(node, Math.min(low.get(node), index.get(next)));
            }
        }
        if (low.get(node).equals(index.get(node))) {
            Set<String> group = new TreeSet<>();
            String member;
            do {
                member = stack.pop();
                group.add(member);
            } while (!member.equals(node));
            if (group.size() > 1) {
                groups.add(group);
            }
        }
    }
}
