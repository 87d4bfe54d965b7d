#!/usr/bin/env bash
# Cluster Mirror quickstart: starts two local single-node Kafka clusters (source and destination),
# mirrors a topic from one to the other, shows that the destination holds the same records at the
# same offsets, fails over (stop) and produces on the destination, and tears everything down. Run it from a checkout after 'mvn -B install -DskipTests'.
#
# Environment: QUICKSTART_TIMEOUT (seconds to wait for each step, default 60), KAFKA_HEAP_OPTS.
set -Eeuo pipefail

base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="$base_dir/bin"
timeout_s=${QUICKSTART_TIMEOUT:-60}
topic=quickstart-events
mirror=quickstart
records=10

work=$(mktemp -d "${TMPDIR:-/tmp}/cluster-mirror-quickstart.XXXXXX")
declare -A pids=()
picked_ports=()

step() {
  echo
  echo "==> $*"
}

fail() {
  echo >&2
  echo "QUICKSTART FAILED: $*" >&2
  exit 1
}

# Stops the servers (SIGTERM: clean shutdown through their shutdown hooks, SIGKILL after 30 s) and
# removes every file the quickstart created. On failure, shows the end of each server's output first.
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ "$rc" -ne 0 ]; then
    for name in source destination; do
      if [ -s "$work/$name/server.out" ]; then
        echo >&2
        # The first error names the cause; the tail shows where the server was when it stopped.
        if grep -q -E '(\] ERROR |^ERROR: )' "$work/$name/server.out"; then
          echo "--- first error in the $name server's output ---" >&2
          grep -m 1 -A 3 -E '(\] ERROR |^ERROR: )' "$work/$name/server.out" >&2
        fi
        echo "--- last lines of the $name server's output ---" >&2
        tail -n 15 "$work/$name/server.out" >&2
      fi
    done
  fi
  for name in "${!pids[@]}"; do
    kill "${pids[$name]}" 2>/dev/null || true
  done
  for name in "${!pids[@]}"; do
    local pid=${pids[$name]} waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 30 ]; do
      sleep 1
      waited=$((waited + 1))
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'fail "unexpected failure (line $LINENO): $BASH_COMMAND"' ERR

# Polls "$@" once a second until it succeeds, or fails after $timeout_s seconds with $what.
wait_until() {
  local what=$1
  shift
  local deadline=$((SECONDS + timeout_s))
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      fail "timed out after ${timeout_s}s waiting for $what"
    fi
    sleep 1
  done
}

port_in_use() {
  (exec 3<>"/dev/tcp/localhost/$1") 2>/dev/null
}

# The ports the kernel hands to outgoing connections; a listener port taken from them can be in use by
# a client socket (even one of the servers' own) by the time the server binds it.
ephemeral_low=32768
if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then
  read -r ephemeral_low _ </proc/sys/net/ipv4/ip_local_port_range
fi
port_floor=10000
[ "$ephemeral_low" -gt $((port_floor + 1000)) ] || port_floor=1024

# Sets REPLY to a free port below the ephemeral range, not picked before: fixed ports could clash
# with other local services.
pick_port() {
  while :; do
    REPLY=$((port_floor + RANDOM % (ephemeral_low - port_floor)))
    if [[ " ${picked_ports[*]} " != *" $REPLY "* ]] && ! port_in_use "$REPLY"; then
      picked_ports+=("$REPLY")
      return
    fi
  done
}

# True once the cluster answers a metadata request; fails the quickstart if its server died.
cluster_ready() {
  local name=$1 bootstrap=$2
  if ! kill -0 "${pids[$name]}" 2>/dev/null; then
    wait "${pids[$name]}" || true
    local error
    error=$(grep -h '^ERROR: ' "$work/$name/server.out" | tail -n 1 || true)
    fail "the $name server exited during startup: ${error:-see its output below}"
  fi
  port_in_use "${bootstrap#*:}" && "$bin/kafka-topics.sh" --bootstrap-server "$bootstrap" --list >/dev/null 2>&1
}

# Formats and starts a node from config/<name>.properties, on free ports and with its data in $work.
# Sets <name>_bootstrap.
start_cluster() {
  local name=$1 broker_port controller_port internal_listener=""
  pick_port; broker_port=$REPLY
  pick_port; controller_port=$REPLY
  # A config with a listener of its own for brokers (the destination's) keeps it, on a free port too.
  if grep -q '^inter.broker.listener.name=INTERNAL' "$base_dir/config/$name.properties"; then
    pick_port; internal_listener=",INTERNAL://localhost:$REPLY"
  fi
  local bootstrap=localhost:$broker_port
  printf -v "${name}_bootstrap" '%s' "$bootstrap"
  mkdir -p "$work/$name"
  # The example config with other ports and data dir: in a properties file the last value wins.
  cp "$base_dir/config/$name.properties" "$work/$name/server.properties"
  cat >> "$work/$name/server.properties" <<PROPERTIES

# quickstart overrides
listeners=PLAINTEXT://$bootstrap$internal_listener,CONTROLLER://localhost:$controller_port
advertised.listeners=PLAINTEXT://$bootstrap$internal_listener,CONTROLLER://localhost:$controller_port
controller.quorum.bootstrap.servers=localhost:$controller_port
log.dirs=$work/$name/data
PROPERTIES
  "$bin/kafka-storage.sh" format --standalone -t "$("$bin/kafka-storage.sh" random-uuid)" \
    -c "$work/$name/server.properties" > "$work/$name/format.out" 2>&1 \
    || fail "formatting the $name node failed: $(tail -n 1 "$work/$name/format.out")"
  LOG_DIR="$work/$name/logs" KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:-"-Xmx512M -Xms512M"} \
    "$bin/cluster-mirror-server-start.sh" "$work/$name/server.properties" > "$work/$name/server.out" 2>&1 &
  pids[$name]=$!
  echo "$name cluster starting at $bootstrap (pid ${pids[$name]}, logs in $work/$name/logs)"
}

# Prints partition, offset and value of the topic's first $records records.
read_topic() {
  "$bin/kafka-console-consumer.sh" --bootstrap-server "$1" --topic "$topic" --from-beginning \
    --max-messages "$records" --timeout-ms $((timeout_s * 1000)) \
    --formatter-property print.partition=true --formatter-property print.offset=true 2>/dev/null
}

end_offset() {
  "$bin/kafka-get-offsets.sh" --bootstrap-server "$1" --topic "$topic" --time -1 2>/dev/null | cut -d: -f3
}

destination_caught_up() {
  [ "$(end_offset "$destination_bootstrap")" = "$source_end" ]
}

mirrors() {
  "$bin/kafka-cluster-mirrors.sh" --bootstrap-server "$destination_bootstrap" "$@"
}

step "Checking the build"
"$bin/kafka-storage.sh" version >/dev/null || fail "the build is missing: run 'mvn -B install -DskipTests' first"
echo "working directory: $work"

step "Starting the source and destination clusters"
start_cluster source
start_cluster destination
wait_until "the source cluster to accept connections" cluster_ready source "$source_bootstrap"
echo "source cluster is up"
wait_until "the destination cluster to accept connections" cluster_ready destination "$destination_bootstrap"
echo "destination cluster is up"

step "Creating topic '$topic' on the source and producing $records records"
"$bin/kafka-topics.sh" --bootstrap-server "$source_bootstrap" --create --topic "$topic" \
  --partitions 1 --replication-factor 1 >/dev/null || fail "creating topic $topic on the source failed"
for i in $(seq 1 "$records"); do echo "event-$i"; done \
  | "$bin/kafka-console-producer.sh" --bootstrap-server "$source_bootstrap" --topic "$topic" \
  || fail "producing to the source failed"
source_end=$(end_offset "$source_bootstrap") || fail "reading the source's log end offset failed"
[ "$source_end" = "$records" ] || fail "the source's log end offset is '$source_end', expected $records"
echo "source log end offset: $source_end"

step "Creating mirror '$mirror' on the destination and mirroring '$topic'"
# config/mirror.properties, pointed at this quickstart's source.
cp "$base_dir/config/mirror.properties" "$work/mirror.properties"
printf '\n# quickstart override\nbootstrap.servers=%s\n' "$source_bootstrap" >> "$work/mirror.properties"
mirrors --create --mirror "$mirror" --mirror-config "$work/mirror.properties" \
  || fail "creating the mirror failed"
mirrors --start --mirror "$mirror" --topics "$topic" || fail "starting to mirror $topic failed"
wait_until "the destination to reach offset $source_end" destination_caught_up
echo "destination log end offset: $(end_offset "$destination_bootstrap")"

step "Reading both topics with their offsets"
read_topic "$source_bootstrap" > "$work/source.records" || fail "reading the source's topic failed"
read_topic "$destination_bootstrap" > "$work/destination.records" || fail "reading the destination's topic failed"
echo "source:"
sed 's/^/  /' "$work/source.records"
echo "destination:"
sed 's/^/  /' "$work/destination.records"
[ "$(wc -l < "$work/source.records")" -eq "$records" ] || fail "read $(wc -l < "$work/source.records") records from the source, expected $records"
diff -u "$work/source.records" "$work/destination.records" >&2 \
  || fail "the destination's records differ from the source's (diff above)"
echo "identical: same records at the same offsets"

step "Describing mirror '$mirror'"
mirrors --describe --mirror "$mirror" || fail "describing the mirror failed"

step "Producing to the mirror topic on the destination (refused: it is read-only while mirrored)"
if echo "not-allowed" | "$bin/kafka-console-producer.sh" --bootstrap-server "$destination_bootstrap" --topic "$topic" \
    --producer-property delivery.timeout.ms=10000 --producer-property request.timeout.ms=5000 \
    --producer-property max.block.ms=10000 > "$work/denied.out" 2>&1 \
  && ! grep -q "TopicAuthorizationException\|TOPIC_AUTHORIZATION_FAILED\|Not authorized" "$work/denied.out"; then
  fail "producing to the mirror topic was accepted; it must be read-only until it is stopped"
fi
grep -q "TopicAuthorizationException\|TOPIC_AUTHORIZATION_FAILED\|Not authorized" "$work/denied.out" \
  || fail "producing to the mirror topic failed, but not with an authorization error: $(tail -n 1 "$work/denied.out")"
echo "refused with TOPIC_AUTHORIZATION_FAILED, as expected"

step "Failing over: stopping the mirroring of '$topic'"
mirrors --stop --mirror "$mirror" --topics "$topic" || fail "stopping the mirror topic failed"
topic_stopped() {
  mirrors --describe --mirror "$mirror" --json > "$work/describe.json" 2>/dev/null \
    && grep -q '"state" *: *"STOPPED"' "$work/describe.json"
}
wait_until "the mirror topic to be STOPPED" topic_stopped
mirrors --describe --mirror "$mirror" || fail "describing the mirror failed"

step "Producing on the destination after the failover"
for i in $(seq 1 3); do echo "after-failover-$i"; done \
  | "$bin/kafka-console-producer.sh" --bootstrap-server "$destination_bootstrap" --topic "$topic" \
  || fail "producing to the destination after the failover failed"
"$bin/kafka-console-consumer.sh" --bootstrap-server "$destination_bootstrap" --topic "$topic" --from-beginning \
  --max-messages $((records + 3)) --timeout-ms $((timeout_s * 1000)) \
  --formatter-property print.partition=true --formatter-property print.offset=true 2>/dev/null > "$work/after.records" \
  || fail "reading the destination after the failover failed"
sed 's/^/  /' "$work/after.records"
grep -q "after-failover-3" "$work/after.records" || fail "the records produced after the failover are missing"
new_first=$(grep "after-failover-1" "$work/after.records" | sed 's/.*Offset:\([0-9]*\).*/\1/')
echo "the first record produced after the failover is at offset $new_first: offset $records holds the failover barrier"

step "Summary"
fold -s -w 100 <<SUMMARY
Two single-node Kafka clusters ran on this machine: a source at $source_bootstrap and a destination at $destination_bootstrap whose broker runs the Cluster Mirror extension. We produced $records records to '$topic' on the source, created the mirror '$mirror' on the destination and started mirroring the topic. The destination's broker fetched the source's record batches and appended them as they are, so the destination's '$topic' holds the same $records records at the same offsets (0 to $((records - 1))), compared above record by record. No client copied anything and the source needed no change. Producing to the mirror topic on the destination was refused while it was mirrored. Then we failed over with --stop: the destination truncated to its last stable offset (nothing was open here), wrote the MIRROR_PID_RESET barrier at offset $records (invisible to consumers) and made the topic writable; records produced on the destination afterwards start at offset $new_first, after the mirrored ones. On exit, both clusters are shut down and their data deleted.
SUMMARY
