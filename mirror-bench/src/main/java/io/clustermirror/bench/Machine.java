package io.clustermirror.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Description of the machine the benchmark ran on. */
final class Machine {
    private Machine() {
    }

    static Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("nproc", Runtime.getRuntime().availableProcessors());
        m.put("cpu_model", cpuModel());
        m.put("memory_total", memTotal());
        m.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
            + System.getProperty("os.arch"));
        m.put("loadavg_start", loadavg());
        return m;
    }

    static String loadavg() {
        return read("/proc/loadavg").trim();
    }

    /** This process's soft limit of open files (children inherit it), -1 if unknown. */
    static long openFilesLimit() {
        for (String l : read("/proc/self/limits").split("\n")) {
            if (l.startsWith("Max open files")) {
                String[] f = l.substring("Max open files".length()).trim().split("\\s+");
                return f[0].equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(f[0]);
            }
        }
        return -1;
    }

    /** The kernel's limit of memory maps per process ({@code vm.max_map_count}), -1 if unknown. */
    static long maxMapCount() {
        String v = read("/proc/sys/vm/max_map_count").trim();
        return v.isEmpty() ? -1 : Long.parseLong(v);
    }

    private static String cpuModel() {
        for (String l : read("/proc/cpuinfo").split("\n")) {
            if (l.startsWith("model name")) {
                return l.substring(l.indexOf(':') + 1).trim();
            }
        }
        return "unknown";
    }

    private static String memTotal() {
        for (String l : read("/proc/meminfo").split("\n")) {
            if (l.startsWith("MemTotal")) {
                long kb = Long.parseLong(l.replaceAll("[^0-9]", ""));
                return String.format("%.1f GiB", kb / 1048576.0);
            }
        }
        return "unknown";
    }

    private static String read(String f) {
        try {
            return String.join("\n", Files.readAllLines(Path.of(f)));
        } catch (IOException e) {
            return "";
        }
    }

    static List<String> keys() {
        return List.of("nproc", "cpu_model", "memory_total", "java", "os", "loadavg_start");
    }
}
