package io.clustermirror.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * GC pauses and heap after GC of one launched JVM, read from its unified GC log ({@code -Xlog:gc:file=...}, one line
 * per collection, e.g. {@code [1.2s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 100M->20M(1024M)
 * 3.456ms}). A window is the lines written after a {@link #mark}.
 */
final class GcLog {
    private static final Pattern PAUSE = Pattern.compile(
        "GC\\(\\d+\\) Pause .*?(\\d+)([KMG])->(\\d+)([KMG])\\((\\d+)([KMG])\\) ([0-9.]+)ms");
    /** The uptime decoration that starts each line of a log written with the default decorations. */
    private static final Pattern UPTIME = Pattern.compile("^\\[([0-9.]+)s\\]");

    private GcLog() {
    }

    /** The JVM option that writes the log this class reads. */
    static String option(Path file) {
        return "-Xlog:gc:file=" + file;
    }

    /** The number of lines written so far: the start of a window. */
    static int mark(Path file) {
        return lines(file).size();
    }

    /** Pauses, their total time and the largest heap after a GC in the lines after {@code mark}. */
    static Map<String, Object> since(Path file, int mark) {
        List<String> lines = lines(file);
        long pauses = 0;
        double pauseMs = 0;
        double maxPauseMs = 0;
        double heapAfterMax = 0;
        for (String line : lines.subList(Math.min(mark, lines.size()), lines.size())) {
            Matcher m = PAUSE.matcher(line);
            if (m.find()) {
                pauses++;
                double ms = Double.parseDouble(m.group(7));
                pauseMs += ms;
                maxPauseMs = Math.max(maxPauseMs, ms);
                heapAfterMax = Math.max(heapAfterMax, mib(m.group(3), m.group(4)));
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("gc_pauses", pauses);
        out.put("gc_pause_ms", Bench.round(pauseMs));
        out.put("gc_pause_max_ms", Bench.round(maxPauseMs));
        // No collection in the window: no heap-after-GC figure (a 0 would pull the median over the repeats down).
        out.put("heap_after_gc_max_MiB", pauses == 0 ? null : Bench.round(heapAfterMax));
        return out;
    }

    /**
     * The heap after each collection in the lines after {@code mark}, as {@code [seconds, MiB]} pairs, the seconds counted
     * from the first of those collections (the JVM's uptime decoration, {@code [12.345s]}, of each line).
     */
    static List<List<Double>> heapAfterGcSeries(Path file, int mark) {
        List<String> lines = lines(file);
        List<List<Double>> series = new ArrayList<>();
        double first = Double.NaN;
        for (String line : lines.subList(Math.min(mark, lines.size()), lines.size())) {
            Matcher pause = PAUSE.matcher(line);
            Matcher uptime = UPTIME.matcher(line);
            if (pause.find() && uptime.find()) {
                double seconds = Double.parseDouble(uptime.group(1));
                first = Double.isNaN(first) ? seconds : first;
                series.add(List.of(Bench.round(seconds - first), Bench.round(mib(pause.group(3), pause.group(4)))));
            }
        }
        return series;
    }

    /**
     * The live heap of a JVM: asks it for a full collection ({@code jcmd <pid> GC.run}) and returns the heap after that
     * collection from its log, in MiB, or null if the JVM did not collect within 30 s (jcmd missing or refused).
     */
    static Double heapAfterFullGc(long pid, Path file) {
        int mark = mark(file);
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        try {
            Process p = new ProcessBuilder(jcmd, String.valueOf(pid), "GC.run").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline) {
            List<String> lines = lines(file);
            Double heap = fullGcHeapAfter(lines.subList(Math.min(mark, lines.size()), lines.size()));
            if (heap != null) {
                return heap;
            }
            Bench.sleep(200);
        }
        return null;
    }

    /** The heap after the first full collection among the lines, in MiB, or null if there is none. */
    static Double fullGcHeapAfter(List<String> lines) {
        for (String line : lines) {
            Matcher m = PAUSE.matcher(line);
            if (line.contains("Pause Full") && m.find()) {
                return Bench.round(mib(m.group(3), m.group(4)));
            }
        }
        return null;
    }

    /** Marks of several logs, by the name of their JVM. */
    static Map<String, Integer> marks(Map<String, Path> logs) {
        Map<String, Integer> out = new LinkedHashMap<>();
        logs.forEach((name, file) -> out.put(name, mark(file)));
        return out;
    }

    static Map<String, Object> since(Map<String, Path> logs, Map<String, Integer> marks) {
        Map<String, Object> out = new LinkedHashMap<>();
        logs.forEach((name, file) -> out.put(name, since(file, marks.getOrDefault(name, 0))));
        return out;
    }

    private static double mib(String value, String unit) {
        double v = Double.parseDouble(value);
        return switch (unit) {
            case "K" -> v / 1024;
            case "G" -> v * 1024;
            default -> v;
        };
    }

    private static List<String> lines(Path file) {
        try {
            return Files.exists(file) ? Files.readAllLines(file) : List.of();
        } catch (IOException e) {
            return List.of();
        }
    }
}
