package io.clustermirror.bench;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A CPU profile of one launched JVM over a window (a catch-up, or the scale part's idle window), with the JDK's own
 * Flight Recorder: {@code jcmd <pid> JFR.start} with the {@code profile} settings when the window opens,
 * {@code JFR.dump} and {@code JFR.stop} when it closes. The summary counts execution samples by the method on top of the
 * stack (where the CPU went) and by the first frame that is Kafka's or the mirror's own code (which of their work it was
 * done for), so that a broker of the mirror and its Kafka counterpart doing the same work can be compared line by line.
 */
final class Profiler {
    private static final String RECORDING = "bench-window";
    private static final int TOP = 25;

    private Profiler() {
    }

    /** Starts a recording in the JVM {@code pid}; false if jcmd refused (the window then has no profile). */
    static boolean start(long pid) {
        return jcmd(pid, "JFR.start", "name=" + RECORDING, "settings=profile");
    }

    /** Dumps the recording to {@code file}, stops it and summarises it; null if there was none. */
    static Map<String, Object> stop(long pid, Path file) {
        boolean dumped = jcmd(pid, "JFR.dump", "name=" + RECORDING, "filename=" + file);
        jcmd(pid, "JFR.stop", "name=" + RECORDING);
        if (!dumped || !Files.exists(file)) {
            return null;
        }
        try {
            return summarise(file);
        } catch (IOException e) {
            return Map.of("error", "could not read " + file + ": " + e.getMessage());
        }
    }

    /** Execution samples of a recording: in all, by top frame and by the first Kafka or mirror frame, with shares. */
    static Map<String, Object> summarise(Path file) throws IOException {
        Map<String, Long> byTop = new HashMap<>();
        Map<String, Long> byOwner = new HashMap<>();
        long samples = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (!e.getEventType().getName().equals("jdk.ExecutionSample") || e.getStackTrace() == null) {
                continue;
            }
            RecordedStackTrace stack = e.getStackTrace();
            if (stack.getFrames().isEmpty()) {
                continue;
            }
            samples++;
            byTop.merge(method(stack.getFrames().get(0)), 1L, Long::sum);
            byOwner.merge(stack.getFrames().stream().map(Profiler::method).filter(Profiler::ownedCode).findFirst()
                .orElse("(JDK and JVM only)"), 1L, Long::sum);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("samples", samples);
        out.put("recording", String.valueOf(file.getFileName()));
        out.put("top_frames", top(byTop, samples));
        out.put("first_kafka_or_mirror_frames", top(byOwner, samples));
        return out;
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
