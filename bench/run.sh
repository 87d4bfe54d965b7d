#!/usr/bin/env bash
# Runs the whole benchmark: Cluster Mirror vs MirrorMaker 2 vs Kafka follower replication, for lz4 and
# uncompressed data. Writes bench/results/<date>-<codec>.{md,json,png}. See docs/performance.md.
#
# Scenarios run interleaved, --repeats times; each figure is the median with min and max.
# Options are passed through as --name=value, e.g.:
#   bench/run.sh --codecs=lz4 --repeats=3 --mm2.sweep=true
# (defaults of the default run / of --full=true: repeats 5, volume.mb 256 / 4096, codecs lz4,none,
#  partitions 12, lag.rate.mb 20, lag.warmup.s 4 / 15, lag.measure.s 10 / 60, lag.drain.s 30,
#  scenarios mirror,mm2,replication / also mirror-fsync,mirror3,replication3,mirror-tls,mirror-wan-20,mirror-wan-80,
#  mirror-throttle-50 (mirror-wan-<round trip ms>, mirror-tls and mirror-throttle-<MB/s> read the source through that
#  link; mirror-fsync mirrors onto a destination that forces every append to disk), lag.trace false (true: a consumer
#  on the source and the destination brokers' request log split the lag), profile false (true or jfr: a JFR CPU profile
#  of each catch-up of the mirror and the follower; native: async-profiler's, kernel and JVM included; profile in a run
#  of its own), fetch.max.bytes 52428800,
#  fetch.partition.max.bytes 1048576 (all three copiers), mm2.tasks 4, mm2.sweep false (true: tasks.max
#  1, 4 and the partition count), label <date>, work bench/results/tmp, broker.heap "-Xmx1G -Xms1G" (every
#  broker's heap options))
#
# --scale=true runs only the scale part instead (issue 16): per partition layout, --start until every partition is
# MIRRORING and caught up, the destination broker's idle CPU and heap against a Kafka follower of as many partitions,
# a client's produce p99 (acks=all) before --start, next to the mirror partitions and after --stop (each window after
# the same idle window and forced GC) and next to Kafka's followers, --stop until every partition is STOPPED.
# Writes bench/results/<label>-scale.{md,json,png}. Its options and defaults:
#   scale.partitions 12,1000,10000 (one topic each), scale.layout topics:1000x10 (T topics of P partitions; empty to
#   skip), scale.repeats 3, scale.records.per.partition 10, scale.settle.s 10, scale.idle.s 60, scale.produce.rate.mb 1,
#   scale.produce.warmup.s 5, scale.produce.measure.s 30, scale.timeout.s 1800 (per wait), scale.codec lz4,
#   scale.brokers 1 (brokers of the source and of the destination, the partitions spread evenly; more than 1 runs the
#   mirror part only: --scale.parts=mirror), scale.pause.source false (true, a diagnostic: one more produce window next to the mirror partitions with the source
#   broker's process stopped; keep warm-up plus window under 25 s, the mirror's fetch request timeout is 30 s),
#   scale.profile false (true, jfr or native: a CPU profile of both brokers over the idle window next to the partitions),
#   scale.histogram false (true: a class histogram of the copying broker's live heap at the end of that window, the
#   largest classes in the results, the whole histogram in the work directory),
#   scale.parts mirror,replication (either alone to run one; outage, a run of its own: the outage catch-up with
#   scale.outage.backlog.mb 4096, scale.outage.throttle.mb 0 (a list of link throttles, 0 none),
#   scale.outage.probe.warmup.s 2 and scale.outage.probe.measure.s 10, see docs/BENCHMARK.md), scale.windows true (false: no idle and produce windows,
#   only the start, the flap and the stop), scale.flap.s 60 (the link flap after the windows: the mirror reads the source
#   through a proxy that then forwards nothing for that long, connections kept open; 0 for no flap and no proxy),
#   scale.mirror.* (mirror configs: --scale.mirror.fetch.max.wait.ms=2000 sets mirror.fetch.max.wait.ms; none by default).
# Its brokers get log.index.size.max.bytes=1048576, num.replica.fetchers=1, replica.fetch.wait.max.ms=500, and it
# needs per broker about 1000 open files plus one per partition it holds (ulimit -n) and 5000 memory maps plus two per
# partition (vm.max_map_count); it checks both first. 50,000 partitions need three brokers where ulimit -n is 20,000. Small smoke run:
#   bench/run.sh --scale=true --scale.partitions=12,200 --scale.layout=topics:20x10 --scale.repeats=1 \
#     --scale.idle.s=10 --scale.settle.s=2 --scale.produce.warmup.s=2 --scale.produce.measure.s=5
# Set BENCH_SKIP_BUILD=1 to skip the build. Set BENCH_KEEP_WORK=1 to keep each run's node directories (data, logs) in
# the work directory, and BENCH_BROKER_OPTS to add JVM options to every broker, where {dir} is the node's directory; to
# profile the brokers:
#   BENCH_KEEP_WORK=1 BENCH_BROKER_OPTS='-XX:StartFlightRecording=filename={dir}/broker.jfr,settings=profile,dumponexit=true'
set -euo pipefail
base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$base_dir"
if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  echo "Building (mvn -B -q install -DskipTests) ..."
  mvn -B -q install -DskipTests
fi
if [ -n "${JAVA_HOME:-}" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
bench_jar=$(ls -t "$base_dir"/mirror-bench/target/mirror-bench-*.jar | head -n 1)
cp="$bench_jar:$base_dir/mirror-bench/target/lib/*"
start=$SECONDS
"$JAVA" -Xmx2G -XX:+UseParallelGC -Dlog4j2.configurationFile="$base_dir/bench/log4j2.properties" \
  -cp "$cp" io.clustermirror.bench.Bench --home="$base_dir" "$@"
echo "Benchmark finished in $((SECONDS - start)) s; results in bench/results/"
