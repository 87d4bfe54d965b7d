#!/usr/bin/env bash
# Starts one KRaft node (broker, controller or combined) of stock Kafka with the Cluster Mirror
# extension attached to its broker. Same arguments as Kafka's kafka-server-start.sh.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "USAGE: $0 server.properties [--override property=value]*" >&2
  exit 1
fi

base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KAFKA_LOG4J_OPTS=${KAFKA_LOG4J_OPTS:-"-Dlog4j2.configurationFile=$base_dir/config/log4j2.yaml"}
export KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:-"-Xmx1G -Xms1G"}

exec "$base_dir/bin/kafka-run-class.sh" io.clustermirror.server.ClusterMirrorServer "$@"
