package io.clustermirror.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
 * What a launched JVM's live heap holds, by class: {@code jcmd <pid> GC.class_histogram} (which collects first, so only
 * live objects count), kept whole in a file and summarised as the largest classes. The scale part takes one of the
 * destination broker next to the mirror partitions and one of Kafka's follower broker next to its followers
 * ({@code scale.histogram=true}), so that what a mirrored partition costs can be compared class by class with what a
 * replicated one costs.
 */
final class HeapHistogram {
    /** A histogram row: rank, instances, bytes, class name (and, from JDK 9 on, its module in parentheses). */
    private static final Pattern ROW = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");
    private static final Pattern TOTAL = Pattern.compile("^Total\\s+(\\d+)\\s+(\\d+)");

    private HeapHistogram() {
    }

    /**
     * Takes the histogram of {@code pid} into {@code file} and returns its total and {@code top} largest classes (instances
     * and MiB each); null if jcmd failed.
     */
    static Map<String, Object> take(long pid, Path file, int top) {
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        try {
            Process p = new ProcessBuilder(jcmd, String.valueOf(pid), "GC.class_histogram").redirectErrorStream(true)
                .redirectOutput(file.toFile()).start();
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return null;
            }
            return summarise(Files.readAllLines(file, StandardCharsets.UTF_8), top);
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** The total and the {@code top} largest classes of a histogram's lines (jcmd lists them largest first). */
    static Map<String, Object> summarise(List<String> lines, int top) {
        List<Map<String, Object>> classes = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        for (String line : lines) {
            Matcher row = ROW.matcher(line);
            if (row.find() && classes.size() < top) {
                Map<String, Object> c = new LinkedHashMap<>();
                c.put("class", row.group(3));
                c.put("instances", Long.parseLong(row.group(1)));
                c.put("MiB", Bench.round(Long.parseLong(row.group(2)) / 1048576.0));
                classes.add(c);
            }
            Matcher total = TOTAL.matcher(line);
            if (total.find()) {
                out.put("instances", Long.parseLong(total.group(1)));
                out.put("MiB", Bench.round(Long.parseLong(total.group(2)) / 1048576.0));
            }
        }
        out.put("largest", classes);
        return out;
    }
}
