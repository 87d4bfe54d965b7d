package io.clustermirror.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Which code a result measured: the checkout's commit and whether its tree had uncommitted changes, so that a
 * figure can be traced to its source and a result from a dirty tree recognised as such.
 */
final class Provenance {
    private Provenance() {
    }

    static Map<String, Object> of(Path checkout) {
        Map<String, Object> m = new LinkedHashMap<>();
        String commit = git(checkout, "rev-parse", "HEAD");
        String status = git(checkout, "status", "--porcelain", "--untracked-files=no");
        m.put("commit", commit == null ? "unknown" : commit.trim());
        m.put("dirty", status == null ? "unknown" : (Object) !status.isBlank());
        return m;
    }

    private static String git(Path dir, String... args) {
        try {
            List<String> cmd = new java.util.ArrayList<>(List.of("git", "-C", dir.toString()));
            cmd.addAll(List.of(args));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                return null;
            }
            return out;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
