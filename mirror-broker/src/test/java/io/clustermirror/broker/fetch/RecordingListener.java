package io.clustermirror.broker.fetch;

import io.clustermirror.common.MirrorError;
import io.clustermirror.common.records.HeldLogStarts;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.List;

/** A {@link FetchListener} that records what it hears, for the fetch tests to assert on. */
final class RecordingListener implements FetchListener {
    /** A failure the listener heard; the message is left out ("") where a test compares only partitions and errors. */
    record Failure(TopicPartition tp, MirrorError error, String message) {
        Failure(TopicPartition tp, MirrorError error) {
            this(tp, error, "");
        }
    }

    final List<String> events = new ArrayList<>();
    final List<Failure> failures = new ArrayList<>();
    final List<String> oldestUnmirrored = new ArrayList<>();
    final List<String> held = new ArrayList<>();

    List<String> eventsOf(TopicPartition tp) {
        return events.stream().filter(e -> e.contains(" " + tp + " ")).toList();
    }

    @Override
    public void onProgress(TopicPartition partition, long lastMirroredOffset, int lastSourceEpoch,
                           long firstSourceEpochStart, long sourceEndOffset) {
        events.add("progress " + partition + " " + lastMirroredOffset + " " + lastSourceEpoch + " " + firstSourceEpochStart);
    }

    @Override
    public void onSourceEndOffset(TopicPartition partition, long sourceEndOffset) {
    }

    @Override
    public void onLogStartHeld(TopicPartition partition, HeldLogStarts held) {
        this.held.add(partition + " " + held);
    }

    @Override
    public void onOldestUnmirrored(TopicPartition partition, long oldestUnmirroredTimestamp) {
        oldestUnmirrored.add(partition + " " + oldestUnmirroredTimestamp);
    }

    @Override
    public void onBarrier(TopicPartition partition, long barrierOffset) {
    }

    @Override
    public void onFailure(TopicPartition partition, MirrorError error, String message) {
        failures.add(new Failure(partition, error, message));
    }

    @Override
    public void onDivergence(TopicPartition partition, int sourceEpoch, long sourceEpochEndOffset) {
        events.add("divergence " + partition + " " + sourceEpoch + " " + sourceEpochEndOffset);
    }

    @Override
    public void onSourceRecordsLost(TopicPartition partition, long fromOffset, long toOffset) {
        events.add("lost " + partition + " " + fromOffset + " " + toOffset);
    }

    @Override
    public void onSourceTopicGone(TopicPartition partition, MirrorError error, String message) {
        failures.add(new Failure(partition, error, message));
    }

    @Override
    public void onSourceUnavailable(TopicPartition partition, String report) {
        events.add("unavailable " + partition + " " + report);
    }

    @Override
    public void onSourceAvailable(TopicPartition partition) {
        events.add("available " + partition + " ");
    }
}
