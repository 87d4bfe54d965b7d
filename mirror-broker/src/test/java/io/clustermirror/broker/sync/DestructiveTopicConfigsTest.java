package io.clustermirror.broker.sync;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

class DestructiveTopicConfigsTest {
    @ParameterizedTest(name = "{0}: {1} -> {2} deletes sooner: {3}")
    @CsvSource(nullValues = "unset", value = {
        "retention.ms, 86400000, 1, true",
        "retention.ms, 1, 86400000, false",
        "retention.ms, 86400000, -1, false",
        "retention.ms, -1, 86400000, true",
        "retention.ms, unset, -1, false",
        "retention.ms, unset, 86400000, true",
        "retention.ms, 86400000, unset, true",
        "retention.ms, 86400000, not-a-number, true",
        "retention.bytes, 1000, 10, true",
        "local.retention.ms, -2, 1000, true",
        "local.retention.ms, 1000, -2, true",
        "local.retention.bytes, 10, 1000, false",
        "delete.retention.ms, 86400000, 0, true",
        "min.compaction.lag.ms, 1000, 0, true",
        "max.compaction.lag.ms, 1000, 10, true",
        "max.compaction.lag.ms, 10, 1000, false",
        "cleanup.policy, delete, compact, true",
        "cleanup.policy, compact, 'compact,delete', true",
        "cleanup.policy, 'compact,delete', compact, false",
        "cleanup.policy, 'delete,compact', 'compact, delete', false",
        "cleanup.policy, unset, delete, true",
        "cleanup.policy, compact, unset, true",
        "max.message.bytes, 100000, 1, false",
        "segment.ms, 100000, 1, false",
    })
    void whatDeletesSooner(String key, String destination, String source, boolean expected) {
        assertEquals(expected, DestructiveTopicConfigs.deletesSooner(key, destination, source));
    }
}
