package io.clustermirror.common;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class InternalTopicsTest {
    @Test
    void theStateTopicsAreCreatedWithTheConfigsTheCheckRequires() {
        for (String topic : List.of(InternalTopics.METADATA, InternalTopics.STATE)) {
            assertEquals(List.of(), InternalTopics.misconfigurations(topic, InternalTopics.newTopic(topic, 3).configs()), topic);
        }
    }

    @Test
    void theStateTopicRollsSmallSegmentsSoThatTheCleanerKeepsItNearItsLiveRecords() {
        assertEquals("1048576", InternalTopics.newTopic(InternalTopics.STATE, 3).configs().get("segment.bytes"));
    }

    @Test
    void retentionOrUncleanElectionOnTheStateTopicsIsAMisconfiguration() {
        List<InternalTopics.Misconfiguration> problems = InternalTopics.misconfigurations(InternalTopics.STATE,
            Map.of("cleanup.policy", "compact,delete", "unclean.leader.election.enable", "true"));
        assertEquals(List.of(
            new InternalTopics.Misconfiguration(InternalTopics.STATE, "cleanup.policy", "compact,delete", "compact"),
            new InternalTopics.Misconfiguration(InternalTopics.STATE, "unclean.leader.election.enable", "true", "false")), problems);
        String message = problems.get(0).message();
        assertTrue(message.contains("__mirror_state") && message.contains("cleanup.policy=compact,delete")
            && message.contains("--entity-name __mirror_state --add-config cleanup.policy=compact"), message);
    }

    @Test
    void theCommandLogsRetentionIsItsOwnBusiness() {
        assertEquals(List.of(), InternalTopics.misconfigurations(InternalTopics.COMMANDS, Map.of("cleanup.policy", "delete")));
    }
}
