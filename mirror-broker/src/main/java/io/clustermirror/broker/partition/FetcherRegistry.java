package io.clustermirror.broker.partition;

import io.clustermirror.broker.fetch.FetchListener;
import io.clustermirror.broker.fetch.PartitionFetcher;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.records.HeldLogStarts;
import org.apache.kafka.common.TopicPartition;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The fetchers of each mirror on one broker, built on first use from the mirror's configs, and the reports they make,
 * turned into inputs of {@link PartitionShard}. It decides nothing: the shard says which partition fetches where, and
 * when a mirror's fetchers close or are replaced.
 *
 * <p>Owned by the runtime's event thread. Fetcher callbacks arrive on fetcher threads and are handed to the event thread
 * as shard inputs; those that report a failure or a change of course are dropped there if their fetchers are no longer
 * the mirror's current ones (a replaced fetcher's reports, an old source client's failure, are stale).
 */
final class FetcherRegistry implements AutoCloseable {
    private final FetcherFactory factory;
    private final ShardInputs inputs;
    private final Map<String, MirrorFetchers> fetchers = new HashMap<>();

    /** Creates the fetchers of one mirror ({@link io.clustermirror.broker.fetch.MirrorFetcherManager} on a broker). */
    interface FetcherFactory {
        PartitionFetcher create(MirrorConfig config, FetchListener listener);
    }

    /** Hands an input to the shard on the runtime's event thread, behind those already queued. */
    interface ShardInputs {
        void submit(ShardInput input);
    }

    /** One input of the shard: the effects it returns are performed in order. */
    interface ShardInput {
        List<PartitionEffect> applyTo(PartitionShard shard);
    }

    private record MirrorFetchers(PartitionFetcher fetcher, Listener listener) {
    }

    FetcherRegistry(FetcherFactory factory, ShardInputs inputs) {
        this.factory = factory;
        this.inputs = inputs;
    }

    /**
     * Performs a fetcher effect of the shard.
     *
     * @throws RuntimeException if the mirror's fetchers cannot be built (its source clients, say): the caller reports it
     */
    void perform(PartitionEffect.FetcherEffect effect) {
        if (effect instanceof PartitionEffect.AddToFetcher add) {
            fetchersOf(add.config()).addPartition(add.tp(), add.sourceTopicId(), add.fetchOffset(), add.leaderEpoch(),
                add.lastFetchedEpoch(), add.logStart());
        } else if (effect instanceof PartitionEffect.AddPastLostRecords add) {
            fetchersOf(add.config()).addPartitionPastLostRecords(add.tp(), add.sourceTopicId(), add.fromOffset(), add.toOffset(),
                add.leaderEpoch(), add.logStart());
        } else if (effect instanceof PartitionEffect.RemoveFromFetcher remove) {
            MirrorFetchers f = fetchers.get(remove.mirror());
            if (f != null) {
                f.fetcher().removePartition(remove.tp());
            }
        } else if (effect instanceof PartitionEffect.DecideHeldLogStarts decide) {
            MirrorFetchers f = fetchers.get(decide.mirror());
            if (f != null) {
                f.fetcher().decideHeldLogStarts(decide.tp(), decide.decision());
            }
        } else if (effect instanceof PartitionEffect.CloseFetchers close) {
            MirrorFetchers f = fetchers.remove(close.mirror());
            if (f != null) {
                f.fetcher().close();
            }
        } else if (effect instanceof PartitionEffect.ReplaceFetchers replace) {
            replace(replace);
        } else {
            throw new IllegalArgumentException("not a fetcher effect: " + effect);
        }
    }

    /**
     * Takes the moving partitions from the old fetchers (no append of theirs is then in flight) and closes them; the shard
     * hands the partitions to new ones behind the progress the old ones reported before they let go, so that each
     * continues with its last fetched epoch as of its log end.
     */
    private void replace(PartitionEffect.ReplaceFetchers replace) {
        MirrorFetchers old = fetchers.remove(replace.mirror());
        if (old != null) {
            replace.moving().forEach(p -> old.fetcher().removePartition(p.partition()));
            old.fetcher().close();
        }
        inputs.submit(shard -> shard.fetchersReplaced(replace.moving()));
    }

    private PartitionFetcher fetchersOf(MirrorConfig config) {
        return fetchers.computeIfAbsent(config.name(), name -> {
            Listener listener = new Listener(name);
            return new MirrorFetchers(factory.create(config, listener), listener);
        }).fetcher();
    }

    @Override
    public void close() {
        fetchers.values().forEach(f -> f.fetcher().close());
        fetchers.clear();
    }

    /** The reports of one mirror's fetchers. */
    private final class Listener implements FetchListener {
        private final String mirror;

        Listener(String mirror) {
            this.mirror = mirror;
        }

        @Override
        public void onProgress(TopicPartition tp, long lastMirroredOffset, int lastSourceEpoch, long firstSourceEpochStart,
                               long sourceEndOffset) {
            inputs.submit(shard -> shard.mirrored(tp, lastMirroredOffset, lastSourceEpoch, firstSourceEpochStart, sourceEndOffset));
        }

        @Override
        public void onOldestUnmirrored(TopicPartition tp, long oldestUnmirroredTimestamp) {
            inputs.submit(shard -> shard.oldestUnmirroredSeen(tp, oldestUnmirroredTimestamp));
        }

        @Override
        public void onLogStartHeld(TopicPartition tp, HeldLogStarts held) {
            inputs.submit(shard -> shard.logStartsHeld(tp, held));
        }

        @Override
        public void onSourceEndOffset(TopicPartition tp, long sourceEndOffset) {
            inputs.submit(shard -> shard.sourceEndSeen(tp, sourceEndOffset));
        }

        @Override
        public void onBarrier(TopicPartition tp, long barrierOffset) {
            inputs.submit(shard -> shard.barrierMirrored(tp, barrierOffset));
        }

        /**
         * The fetcher dropped the partition: the shard has the log repaired. Not from replaced fetchers: the new ones fetch
         * from the log end with the last fetched epoch and see any divergence themselves.
         */
        @Override
        public void onDivergence(TopicPartition tp, int sourceEpoch, long sourceEpochEndOffset) {
            post(tp, shard -> shard.handle(tp, new PartitionEvent.SourceDiverged(sourceEpoch, sourceEpochEndOffset)));
        }

        @Override
        public void onSourceRecordsLost(TopicPartition tp, long fromOffset, long toOffset) {
            post(tp, shard -> shard.sourceRecordsLost(tp, fromOffset, toOffset));
        }

        @Override
        public void onSourceTopicGone(TopicPartition tp, MirrorError error, String message) {
            post(tp, shard -> shard.handle(tp, new PartitionEvent.SourceTopicGone(error.format(message))));
        }

        @Override
        public void onSourceUnavailable(TopicPartition tp, String report) {
            post(tp, shard -> shard.handle(tp, new PartitionEvent.SourceUnavailable(MirrorError.SOURCE_UNAVAILABLE.format(report))));
        }

        @Override
        public void onSourceAvailable(TopicPartition tp) {
            post(tp, shard -> shard.handle(tp, new PartitionEvent.SourceAvailable()));
        }

        @Override
        public void onFailure(TopicPartition tp, MirrorError error, String message) {
            post(tp, shard -> shard.handle(tp, new PartitionEvent.FetchFailed(error.format(message))));
        }

        /** Hands {@code input} to the shard if these fetchers are still the mirror's current ones and the partition is theirs. */
        private void post(TopicPartition tp, ShardInput input) {
            inputs.submit(shard -> {
                MirrorFetchers current = fetchers.get(mirror);
                return current != null && current.listener() == this && shard.belongsTo(tp, mirror) ? input.applyTo(shard) : List.of();
            });
        }
    }
}
