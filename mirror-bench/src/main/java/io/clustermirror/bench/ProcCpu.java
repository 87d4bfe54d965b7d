package io.clustermirror.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** CPU time of a process from /proc/&lt;pid&gt;/stat (utime + stime, in clock ticks of 1/100 s on Linux). */
final class ProcCpu {
    private static final double TICKS_PER_SECOND = 100.0;

    private ProcCpu() {
    }

    static double cpuSeconds(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            // Fields after the command name (which may contain spaces) in parentheses.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // f[0] is field 3 (state): utime is field 14, stime field 15.
            long utime = Long.parseLong(f[11]);
            long stime = Long.parseLong(f[12]);
            return (utime + stime) / TICKS_PER_SECOND;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }
}
