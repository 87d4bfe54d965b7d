package io.clustermirror.broker.partition;

import io.clustermirror.broker.fetch.ClusterLogReader;
import io.clustermirror.common.MirrorConfig;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;

/**
 * Probes the source for the records that arrive while partitions are paused: paused partitions are not fetched, so
 * nothing else would notice them, and their lag must still grow. One small read of the source at each destination end
 * finds them, and how old the oldest is; the result goes to {@link PartitionShard#probed}, which decides whether it still
 * applies. Rounds never pile up behind a slow source: a round starts only once the previous one has reported.
 *
 * <p>{@link #round} runs on the runtime's event thread; the reads run on the probe thread.
 */
final class PausedPartitionProbe {
    private static final Logger log = LoggerFactory.getLogger(PausedPartitionProbe.class);
    /** How often the source is probed for the records that arrive while a partition is paused. */
    static final long INTERVAL_MS = 5_000;

    private final int nodeId;
    private final SourceCluster source;
    private final ExecutorService probes;
    private final FetcherRegistry.ShardInputs inputs;
    /** True while a round runs (event thread only). */
    private boolean probing;
    /** The last probe failure logged per mirror, so that an unreachable source is logged once, not every round. */
    private final Map<String, String> failuresLogged = new HashMap<>();

    PausedPartitionProbe(int nodeId, SourceCluster source, ExecutorService probes, FetcherRegistry.ShardInputs inputs) {
        this.nodeId = nodeId;
        this.source = source;
        this.probes = probes;
        this.inputs = inputs;
    }

    /** Starts a round for the paused partitions this broker leads, unless one runs or none is paused. */
    void round(PartitionShard shard) {
        if (probing) {
            return;
        }
        Map<String, Map<TopicPartition, Long>> ends = shard.pausedLogEnds();
        if (ends.isEmpty()) {
            return;
        }
        Map<String, MirrorConfig> configs = new HashMap<>();
        ends.keySet().forEach(name -> configs.put(name, shard.mirrorConfig(name).orElseThrow()));
        probing = true;
        probes.execute(() -> {
            Map<TopicPartition, ClusterLogReader.Head> heads = new HashMap<>();
            Map<String, String> failures = new HashMap<>();
            try {
                ends.forEach((mirror, offsets) -> {
                    try {
                        heads.putAll(source.heads(configs.get(mirror), "cluster-mirror-" + mirror + "-" + nodeId + "-lag-probe", offsets));
                    } catch (RuntimeException e) {
                        failures.put(mirror, String.valueOf(e.getMessage()));
                    }
                });
            } finally {
                inputs.submit(s -> {
                    probing = false;
                    logFailures(ends.keySet(), failures);
                    return s.probed(ends, heads);
                });
            }
        });
    }

    private void logFailures(Set<String> mirrors, Map<String, String> failures) {
        mirrors.forEach(mirror -> {
            String failure = failures.get(mirror);
            if (failure != null && !failure.equals(failuresLogged.get(mirror))) {
                log.warn("Mirror '{}': cannot read the source for the lag of its paused partitions ({}); their lag keeps "
                    + "growing from the oldest missing record seen so far, and records written to the source since are not "
                    + "counted until it can be read", mirror, failure);
            }
            if (failure == null) {
                failuresLogged.remove(mirror);
            } else {
                failuresLogged.put(mirror, failure);
            }
        });
    }
}
