package io.clustermirror.broker.fetch;

import io.clustermirror.common.MirrorConfig;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;

class FetchSettingsTest {
    private static FetchSettings of(Map<String, String> mirrorConfigs) {
        Map<String, String> configs = new HashMap<>(mirrorConfigs);
        configs.put(MirrorConfig.BOOTSTRAP_SERVERS, "source:9092");
        return FetchSettings.of(MirrorConfig.validate("dr", configs), new Properties());
    }

    @Test
    void aRateLimitCapsTheResponseSizeAtOneSecondOfIt() {
        assertEquals(50 * 1024 * 1024, of(Map.of()).maxBytes(), "no limit: mirror.fetch.max.bytes as configured");
        assertEquals(100_000, of(Map.of(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC, "100000")).maxBytes());
        assertEquals(4096, of(Map.of(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC, "100000",
            MirrorConfig.FETCH_MAX_BYTES, "4096")).maxBytes(), "never above mirror.fetch.max.bytes");
        assertEquals(1024 * 1024, of(Map.of(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC, "100000")).partitionMaxBytes(),
            "the partition limit stays: a batch above the response limit still comes whole");
    }
}
