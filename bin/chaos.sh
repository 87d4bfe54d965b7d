#!/usr/bin/env bash
# Runs one seeded chaos run: launched source and destination clusters, a workload, random faults (node kills and
# restarts, network stalls, resets, delays, throttling and corruption through a proxy, pause/resume, failover/failback
# cycles)
# and a checker of the whole history. Writes report.md and report.json to --report DIR (default chaos/reports/seed-N); exits 0 only without
# violations. Build first: mvn -B install -DskipTests (or package). See mirror-chaos/README.md.
#
#   bin/chaos.sh [--seed N] [--duration 10m] [--report DIR] [--source-brokers 1-3] [--cycles N] [--inject-corruption]
#                [--inject-product-bug NAME] [--keep]
set -euo pipefail
base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target_dir="$base_dir/mirror-chaos/target"
if ! compgen -G "$target_dir/mirror-chaos-*.jar" >/dev/null || [ ! -d "$target_dir/lib" ] \
    || ! compgen -G "$base_dir/mirror-server/target/lib/kafka_*.jar" >/dev/null; then
  echo "ERROR: Cluster Mirror is not built: run 'mvn -B install -DskipTests' first (in $base_dir)" >&2
  exit 3
fi
# The module's own jar, whatever the version (not the product-bug test agent built next to it).
chaos_jar=$(ls -t "$target_dir"/mirror-chaos-*.jar | grep -v -- '-agent\.jar$' | head -n 1)
if [ -n "${JAVA_HOME:-}" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
exec "$JAVA" ${CHAOS_HEAP_OPTS:--Xmx1G} -Dchaos.home="$base_dir" \
  -cp "$chaos_jar:$target_dir/lib/*" io.clustermirror.chaos.ChaosMain "$@"
