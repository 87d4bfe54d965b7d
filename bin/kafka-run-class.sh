#!/usr/bin/env bash
# Runs a Java main class on the Cluster Mirror classpath (our jars and Kafka's), like Kafka's
# kafka-run-class.sh. Honours KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS, KAFKA_OPTS,
# KAFKA_LOG4J_OPTS, LOG_DIR and JAVA_HOME; KAFKA_LIBS (the libs/ of a Kafka installation) runs on that
# Kafka instead of the one Cluster Mirror ships, which must be a release Cluster Mirror supports.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "USAGE: $0 classname [opts]" >&2
  exit 1
fi

base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target_dir="$base_dir/mirror-server/target"
if [ -n "${KAFKA_LIBS:-}" ]; then
  # The libs/ of a Kafka installation of another supported release: its jars, and of ours the one jar alone.
  if ! compgen -G "$KAFKA_LIBS/kafka-clients-*.jar" >/dev/null; then
    echo "ERROR: KAFKA_LIBS=$KAFKA_LIBS is not the libs/ directory of a Kafka installation (it has no kafka-clients jar)" >&2
    exit 1
  fi
  one_jar=$(compgen -G "$base_dir/libs/cluster-mirror-*.jar" || compgen -G "$target_dir/cluster-mirror-*.jar" || true)
  if [ -z "$one_jar" ]; then
    echo "ERROR: Cluster Mirror is not built: run 'mvn -B install -DskipTests' first (in $base_dir)" >&2
    exit 1
  fi
  CLASSPATH="${one_jar%%$'\n'*}:$KAFKA_LIBS/*"
elif compgen -G "$base_dir/libs/cluster-mirror-*.jar" >/dev/null; then
  # The distribution archive: Kafka's jars and the one jar.
  CLASSPATH="$base_dir/libs/*"
elif compgen -G "$target_dir/mirror-server-*.jar" >/dev/null && compgen -G "$target_dir/lib/kafka_*.jar" >/dev/null; then
  # A checkout.
  CLASSPATH="$target_dir/*:$target_dir/lib/*"
else
  echo "ERROR: Cluster Mirror is not built: run 'mvn -B install -DskipTests' first (in $base_dir)" >&2
  exit 1
fi

LOG_DIR=${LOG_DIR:-"$base_dir/logs"}
mkdir -p "$LOG_DIR"

KAFKA_LOG4J_OPTS=${KAFKA_LOG4J_OPTS:-"-Dlog4j2.configurationFile=$base_dir/config/tools-log4j2.yaml"}
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:-"-Xmx256M"}
KAFKA_JVM_PERFORMANCE_OPTS=${KAFKA_JVM_PERFORMANCE_OPTS:-"-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true"}

if [ -n "${JAVA_HOME:-}" ]; then
  JAVA="$JAVA_HOME/bin/java"
else
  JAVA=java
fi

# Word splitting of the *_OPTS variables is intended: each holds several JVM options.
# shellcheck disable=SC2086
exec "$JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS ${KAFKA_OPTS:-} \
  -Dkafka.logs.dir="$LOG_DIR" $KAFKA_LOG4J_OPTS \
  -cp "$CLASSPATH" "$@"
