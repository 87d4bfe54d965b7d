package io.clustermirror.bench;

import com.sun.tools.attach.VirtualMachine;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A CPU profile of one launched JVM over a window (a catch-up, or the scale part's idle window), with one of two
 * samplers, chosen by the option {@code profile} ({@code scale.profile}):
 * <ul>
 *   <li>{@code true} or {@code jfr}: the JDK's own Flight Recorder ({@code jcmd <pid> JFR.start} with the
 *   {@code profile} settings when the window opens, {@code JFR.dump} and {@code JFR.stop} when it closes). It samples
 *   threads running Java code only: time in the kernel, in native code and in the JVM's own threads (GC, compiler) is
 *   not seen.</li>
 *   <li>{@code native}: async-profiler (its library from Maven Central, loaded into the JVM through the attach API
 *   when the window opens and told to stop and write its stacks when it closes). It samples every thread on a CPU from
 *   the kernel's perf events, through Java, JVM and kernel frames: where a copy spends the CPU that JFR does not see.
 *   Linux on x86-64 or arm64 only; the kernel frames need {@code kernel.perf_event_paranoid} at most 1, or root.</li>
 * </ul>
 * Both summaries count samples by the frame on top of the stack (where the CPU went), by its layer (Java, JVM, kernel,
 * other native code), by thread (numbers in names folded, so that a pool is one row) and by the first frame that is
 * Kafka's or the mirror's own code (which of their work it was done for), so that a broker of the mirror and its Kafka
 * counterpart doing the same work can be compared line by line.
 */
final class Profiler {
    /** How a profiler samples. */
    enum Sampler { JFR, NATIVE }

    private static final String RECORDING = "bench-window";
    private static final int TOP = 25;
    /** A sample every millisecond of CPU: about 10,000 samples over a catch-up of 10 s that keeps one core busy. */
    private static final long NATIVE_INTERVAL_NS = 1_000_000L;
    private static final String NO_OWN_FRAME = "(no Kafka or mirror frame: JDK, JVM or kernel only)";
    private static final Pattern DIGITS = Pattern.compile("\\d+");
    /** The suffix async-profiler adds to a Java frame for how it ran (not for kernel frames, {@code _[k]}). */
    private static final Pattern ANNOTATION = Pattern.compile("_\\[[ji01]]$");
    /** A Java frame as both samplers print it: a dotted class name, then the method. */
    private static final Pattern JAVA_FRAME = Pattern.compile("[\\p{L}_$][\\p{L}\\p{N}_$]*(\\.[\\p{L}\\p{N}_$]+)*\\.[\\p{L}\\p{N}_$<>]+");

    private final Sampler sampler;
    /** async-profiler's library, written to the work directory ({@link Sampler#NATIVE} only). */
    private final Path library;

    private Profiler(Sampler sampler, Path library) {
        this.sampler = sampler;
        this.library = library;
    }

    /**
     * The profiler an option names ({@code false}: none, null; {@code true} or {@code jfr}; {@code native}, whose
     * library is written to {@code work}); refuses any other value, and {@code native} where async-profiler has no
     * library, naming the fix.
     */
    static Profiler of(String option, String name, Path work) {
        switch (option.trim().toLowerCase(Locale.ROOT)) {
            case "false":
                return null;
            case "true":
            case "jfr":
                return new Profiler(Sampler.JFR, null);
            case "native":
                return new Profiler(Sampler.NATIVE, nativeLibrary(name, work));
            default:
                throw new IllegalArgumentException(name + " takes false, true (jfr), jfr or native, not " + option);
        }
    }

    Sampler sampler() {
        return sampler;
    }

    /** Starts sampling the JVM {@code pid}; false if it refused (the window then has no profile). */
    boolean start(long pid) {
        if (sampler == Sampler.JFR) {
            return jcmd(pid, "JFR.start", "name=" + RECORDING, "settings=profile");
        }
        return loadAgent(pid, "start,event=cpu,threads,interval=" + NATIVE_INTERVAL_NS);
    }

    /**
     * Stops sampling, writes the profile next to {@code base} ({@code .jfr}, or {@code .collapsed}: one line per distinct
     * stack, root first, then its samples) and summarises it; null if there was none.
     */
    Map<String, Object> stop(long pid, Path base) {
        Path file;
        boolean written;
        if (sampler == Sampler.JFR) {
            file = base.resolveSibling(base.getFileName() + ".jfr");
            written = jcmd(pid, "JFR.dump", "name=" + RECORDING, "filename=" + file);
            jcmd(pid, "JFR.stop", "name=" + RECORDING);
        } else {
            file = base.resolveSibling(base.getFileName() + ".collapsed");
            written = loadAgent(pid, "stop,file=" + file + ",collapsed");
        }
        if (!written || !Files.exists(file)) {
            return null;
        }
        try {
            return sampler == Sampler.JFR ? summarise(file) : summariseCollapsed(file);
        } catch (IOException | RuntimeException e) {
            return Map.of("error", "could not read " + file + ": " + e.getMessage());
        }
    }

    /** One sampled stack: its frames, top first, the thread it ran on, and how many samples it stands for. */
    private record Stack(List<String> frames, String thread, long samples) {
    }

    /** The execution samples of a Flight Recorder recording, summarised. */
    static Map<String, Object> summarise(Path file) throws IOException {
        List<Stack> stacks = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (!e.getEventType().getName().equals("jdk.ExecutionSample") || e.getStackTrace() == null) {
                continue;
            }
            RecordedStackTrace stack = e.getStackTrace();
            if (!stack.getFrames().isEmpty()) {
                RecordedThread thread = e.getThread("sampledThread");
                stacks.add(new Stack(stack.getFrames().stream().map(Profiler::method).toList(),
                    thread == null ? null : thread.getJavaName(), 1L));
            }
        }
        return summary(Sampler.JFR, file, stacks);
    }

    /**
     * An async-profiler profile in its collapsed form, summarised: each line {@code [thread tid=N];root;...;top count},
     * kernel frames ending in {@code _[k]}.
     */
    static Map<String, Object> summariseCollapsed(Path file) throws IOException {
        List<Stack> stacks = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            int space = line.lastIndexOf(' ');
            if (line.isBlank() || space < 0) {
                continue;
            }
            List<String> rootFirst = new ArrayList<>(Arrays.asList(line.substring(0, space).split(";")));
            String thread = null;
            if (!rootFirst.isEmpty() && rootFirst.get(0).startsWith("[") && rootFirst.get(0).endsWith("]")) {
                thread = rootFirst.remove(0).replaceAll("^\\[|( tid=\\d+)?]$", "");
            }
            if (!rootFirst.isEmpty()) {
                List<String> topFirst = new ArrayList<>(rootFirst.stream().map(Profiler::javaName).toList());
                Collections.reverse(topFirst);
                stacks.add(new Stack(topFirst, thread, Long.parseLong(line.substring(space + 1).trim())));
            }
        }
        return summary(Sampler.NATIVE, file, stacks);
    }

    /**
     * A frame of async-profiler's output named as JFR names it: Java classes dotted ({@code java/util/HashMap.put} is
     * {@code java.util.HashMap.put}) and without the frame-type suffix ({@code _[j]} compiled, {@code _[i]} inlined,
     * {@code _[0]} interpreted, {@code _[1]} C1); kernel ({@code _[k]}) and JVM ({@code ::}) frames as they are.
     */
    static String javaName(String frame) {
        if (frame.endsWith("_[k]") || frame.contains("::")) {
            return frame;
        }
        return ANNOTATION.matcher(frame).replaceFirst("").replace('/', '.');
    }

    private static Map<String, Object> summary(Sampler sampler, Path file, List<Stack> stacks) {
        Map<String, Long> byTop = new HashMap<>();
        Map<String, Long> byLayer = new HashMap<>();
        Map<String, Long> byThread = new HashMap<>();
        Map<String, Long> byOwner = new HashMap<>();
        long samples = 0;
        for (Stack s : stacks) {
            samples += s.samples();
            String top = s.frames().get(0);
            byTop.merge(top, s.samples(), Long::sum);
            byLayer.merge(layer(top), s.samples(), Long::sum);
            byThread.merge(s.thread() == null ? "(unknown)" : DIGITS.matcher(s.thread()).replaceAll("N"), s.samples(), Long::sum);
            byOwner.merge(s.frames().stream().filter(Profiler::ownedCode).findFirst().orElse(NO_OWN_FRAME), s.samples(), Long::sum);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("sampler", sampler.name().toLowerCase(Locale.ROOT));
        out.put("samples", samples);
        out.put("recording", String.valueOf(file.getFileName()));
        out.put("top_frames", top(byTop, samples));
        out.put("layers", top(byLayer, samples));
        out.put("threads", top(byThread, samples));
        out.put("first_kafka_or_mirror_frames", top(byOwner, samples));
        return out;
    }

    /** The layer a frame runs in, from how async-profiler and JFR name frames. */
    static String layer(String frame) {
        if (frame.endsWith("_[k]")) {
            return "kernel";
        }
        if (frame.contains("::")) {
            return "JVM (C++)";
        }
        if (JAVA_FRAME.matcher(frame).matches() && !frame.contains(".so")) {
            return "Java";
        }
        return "other native code (libc, JNI)";
    }

    private static List<Map<String, Object>> top(Map<String, Long> counts, long samples) {
        List<Map<String, Object>> top = new ArrayList<>();
        counts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(TOP).forEach(e -> {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("method", e.getKey());
            row.put("samples", e.getValue());
            row.put("percent", Bench.round(100.0 * e.getValue() / samples));
            top.add(row);
        });
        return top;
    }

    private static String method(RecordedFrame f) {
        return f.getMethod().getType().getName() + "." + f.getMethod().getName();
    }

    private static boolean ownedCode(String method) {
        return method.startsWith("org.apache.kafka.") || method.startsWith("kafka.") || method.startsWith("io.clustermirror.");
    }

    /** Writes the library of async-profiler's jar (on this JVM's classpath) for this machine into {@code work}. */
    private static Path nativeLibrary(String name, Path work) {
        String os = System.getProperty("os.name", "");
        String arch = switch (System.getProperty("os.arch", "")) {
            case "amd64", "x86_64" -> "linux-x64";
            case "aarch64", "arm64" -> "linux-arm64";
            default -> null;
        };
        if (!os.equals("Linux") || arch == null) {
            throw new IllegalArgumentException(name + "=native needs Linux on x86-64 or arm64 (async-profiler's library), not "
                + os + " on " + System.getProperty("os.arch") + ": use " + name + "=jfr");
        }
        String resource = arch + "/libasyncProfiler.so";
        try (InputStream in = Profiler.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalArgumentException(name + "=native: " + resource + " is not on the classpath (the async-profiler "
                    + "jar in mirror-bench/target/lib): build the project again (mvn -B install -DskipTests)");
            }
            Files.createDirectories(work);
            Path library = work.resolve("libasyncProfiler.so");
            Files.copy(in, library, StandardCopyOption.REPLACE_EXISTING);
            return library;
        } catch (IOException e) {
            throw new IllegalStateException("could not write async-profiler's library into " + work + ": " + e.getMessage(), e);
        }
    }

    /** Gives async-profiler's library in the JVM {@code pid} one command, through the attach API; false if refused. */
    private boolean loadAgent(long pid, String command) {
        try {
            VirtualMachine vm = VirtualMachine.attach(String.valueOf(pid));
            try {
                vm.loadAgentPath(library.toString(), command);
                return true;
            } finally {
                vm.detach();
            }
        } catch (Exception e) {
            Bench.log("    async-profiler refused '" + command + "' in " + pid + " (" + e + "); the window has no profile: a JVM "
                + "must allow the attach API (no -XX:+DisableAttachMechanism) and run as this user, or use --profile=jfr");
            return false;
        }
    }

    private static boolean jcmd(long pid, String... command) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
            String.valueOf(pid)));
        cmd.addAll(List.of(command));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
