package io.clustermirror.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the time of a destination's requests goes during a lag window ({@code --lag.trace=true}): the brokers run with
 * Kafka's request log ({@code kafka.request.logger} at DEBUG: one line per completed request with its queue, local,
 * remote (purgatory), response-queue and send times), and the requests completed in the window are summarised per kind:
 * a follower's fetch (client id {@code broker-N-fetcher-M}), a consumer's fetch, and every other API by name. A
 * follower's or consumer's remote time is how long its fetch waited for data (for a consumer: for the high watermark or
 * the last stable offset to pass its position); queue times show request threads and network threads short of CPU.
 */
final class RequestTrace {
    private static final Pattern API = Pattern.compile("\"requestApiKeyName\":\"(\\w+)\"");
    private static final Pattern CLIENT = Pattern.compile("\"clientId\":\"([^\"]*)\"");
    private static final Pattern TIME = Pattern.compile(
        "\"(totalTimeMs|requestQueueTimeMs|localTimeMs|remoteTimeMs|responseQueueTimeMs|sendTimeMs)\":([0-9.Ee+-]+)");
    private static final List<String> COMPONENTS = List.of("totalTimeMs", "requestQueueTimeMs", "localTimeMs", "remoteTimeMs",
        "responseQueueTimeMs", "sendTimeMs");

    private RequestTrace() {
    }

    /** The request log a traced node writes in its directory. */
    static Path log(Path nodeDir) {
        return nodeDir.resolve("request.log");
    }

    /**
     * Writes a logging configuration for a traced node (the broker's usual lines on the console, the request log in
     * {@link #log}, each line prefixed with its epoch milliseconds) and returns the JVM option that selects it.
     */
    static String log4jOption(Path nodeDir) {
        Path config = nodeDir.resolve("request-trace-log4j2.properties");
        String text = String.join("\n",
            "rootLogger.level=INFO",
            "rootLogger.appenderRef.out.ref=STDOUT",
            "appender.out.type=Console",
            "appender.out.name=STDOUT",
            "appender.out.layout.type=PatternLayout",
            "appender.out.layout.pattern=[%d] %p %m (%c)%n",
            "appender.requests.type=File",
            "appender.requests.name=REQUESTS",
            "appender.requests.fileName=" + log(nodeDir),
            "appender.requests.layout.type=PatternLayout",
            "appender.requests.layout.pattern=%d{UNIX_MILLIS} %m%n",
            "logger.requests.name=kafka.request.logger",
            "logger.requests.level=DEBUG",
            "logger.requests.additivity=false",
            "logger.requests.appenderRef.requests.ref=REQUESTS",
            "");
        try {
            Files.createDirectories(nodeDir);
            Files.writeString(config, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return "-Dlog4j2.configurationFile=" + config;
    }

    /** Requests completed in {@code [fromMs, toMs)} in the given logs, by kind: count and p50 / p99 / max of each time. */
    static Map<String, Object> summarise(List<Path> logs, long fromMs, long toMs) throws IOException {
        Map<String, Map<String, List<Double>>> byKind = new TreeMap<>();
        for (Path log : logs) {
            if (!Files.exists(log)) {
                continue;
            }
            for (String line : Files.readAllLines(log)) {
                int space = line.indexOf(' ');
                long at;
                try {
                    at = Long.parseLong(line.substring(0, Math.max(space, 0)));
                } catch (NumberFormatException e) {
                    continue;
                }
                Matcher api = API.matcher(line);
                if (at < fromMs || at >= toMs || !api.find()) {
                    continue;
                }
                Matcher client = CLIENT.matcher(line);
                String id = client.find() ? client.group(1) : "";
                String kind = !api.group(1).equals("FETCH") ? api.group(1)
                    : id.startsWith("broker-") && id.contains("-fetcher-") ? "FETCH from a follower" : "FETCH from a consumer";
                Map<String, List<Double>> times = byKind.computeIfAbsent(kind, k -> new LinkedHashMap<>());
                Matcher time = TIME.matcher(line);
                while (time.find()) {
                    times.computeIfAbsent(time.group(1), k -> new ArrayList<>()).add(Double.parseDouble(time.group(2)));
                }
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        byKind.forEach((kind, times) -> {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("count", times.getOrDefault("totalTimeMs", List.of()).size());
            for (String component : COMPONENTS) {
                double[] v = times.getOrDefault(component, List.of()).stream().mapToDouble(Double::doubleValue).sorted().toArray();
                if (v.length > 0) {
                    Map<String, Object> stats = new LinkedHashMap<>();
                    stats.put("p50", Bench.round(v[rank(v.length, 0.50)]));
                    stats.put("p99", Bench.round(v[rank(v.length, 0.99)]));
                    stats.put("max", Bench.round(v[v.length - 1]));
                    row.put(component, stats);
                }
            }
            out.put(kind, row);
        });
        return out;
    }

    private static int rank(int n, double q) {
        return (int) Math.max(0, Math.ceil(q * n) - 1);
    }
}
