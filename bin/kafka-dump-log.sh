#!/usr/bin/env bash
# Kafka's log segment dump tool (byte-level checks of mirrored partitions).
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" org.apache.kafka.tools.DumpLogSegments "$@"
