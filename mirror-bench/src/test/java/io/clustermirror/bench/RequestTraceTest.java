package io.clustermirror.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The summary of Kafka's request log lines (the JSON of RequestConvertToJson.requestDescMetrics) over a window. */
class RequestTraceTest {

    private static String line(long at, String api, String clientId, double total, double remote) {
        return at + " Completed request:{\"isForwarded\":false,\"requestHeader\":{\"requestApiKey\":1,\"requestApiVersion\":17,"
            + "\"correlationId\":7,\"clientId\":\"" + clientId + "\",\"requestApiKeyName\":\"" + api + "\"},\"request\":\"\","
            + "\"response\":\"\",\"connection\":\"127.0.0.1:9092-127.0.0.1:5000-0\",\"totalTimeMs\":" + total
            + ",\"requestQueueTimeMs\":0.1,\"localTimeMs\":0.5,\"remoteTimeMs\":" + remote + ",\"throttleTimeMs\":0,"
            + "\"responseQueueTimeMs\":0.2,\"sendTimeMs\":0.3,\"securityProtocol\":\"PLAINTEXT\",\"principal\":\"User:ANONYMOUS\","
            + "\"listener\":\"PLAINTEXT\",\"clientInformation\":{\"softwareName\":\"apache-kafka-java\",\"softwareVersion\":\"4.3.1\"}}";
    }

    @Test
    void requestsInTheWindowAreSummarisedByKind(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("request.log");
        Files.write(log, List.of(
            line(999, "FETCH", "broker-2-fetcher-0", 500, 499), // before the window
            line(1000, "FETCH", "broker-2-fetcher-0", 12.5, 11.0),
            line(1500, "FETCH", "broker-3-fetcher-0", 30.0, 29.0),
            line(1600, "FETCH", "consumer-null-1", 40.0, 38.0),
            line(1700, "METADATA", "adminclient-1", 1.0, 0.0),
            "[2026-12-01 10:00:00] an unrelated line",
            line(2000, "FETCH", "consumer-null-1", 900, 899))); // at the window's end: out
        Map<String, Object> summary = RequestTrace.summarise(List.of(log, dir.resolve("absent.log")), 1000, 2000);
        assertEquals(List.of("FETCH from a consumer", "FETCH from a follower", "METADATA"), List.copyOf(summary.keySet()));
        assertEquals(2.0, Bench.get(summary, "FETCH from a follower", "count"));
        assertEquals(12.5, Bench.get(summary, "FETCH from a follower", "totalTimeMs", "p50"));
        assertEquals(30.0, Bench.get(summary, "FETCH from a follower", "totalTimeMs", "p99"));
        assertEquals(38.0, Bench.get(summary, "FETCH from a consumer", "remoteTimeMs", "max"));
        assertEquals(0.2, Bench.get(summary, "METADATA", "responseQueueTimeMs", "p50"));
    }

    @Test
    void aTracedNodeLogsRequestsToItsOwnFile(@TempDir Path dir) throws Exception {
        String option = RequestTrace.log4jOption(dir);
        Path config = Path.of(option.substring("-Dlog4j2.configurationFile=".length()));
        String text = Files.readString(config);
        assertTrue(text.contains("logger.requests.name=kafka.request.logger\nlogger.requests.level=DEBUG"), text);
        assertTrue(text.contains("appender.requests.fileName=" + RequestTrace.log(dir)), text);
    }
}
