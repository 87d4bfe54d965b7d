package io.clustermirror.broker.controller;

import io.clustermirror.common.InternalTopics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.common.errors.TopicExistsException;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Creates missing internal topics (see {@link InternalTopics#newTopic}); concurrent creations are harmless. */
final class InternalTopicsInitializer {
    private InternalTopicsInitializer() {
    }

    static void ensureExist(Admin admin, Collection<String> topics)
            throws ExecutionException, InterruptedException, TimeoutException {
        Set<String> existing = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(30, TimeUnit.SECONDS);
        int brokers = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size();
        for (String topic : topics) {
            if (existing.contains(topic)) {
                continue;
            }
            try {
                admin.createTopics(List.of(InternalTopics.newTopic(topic, brokers))).all().get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
        }
    }
}
