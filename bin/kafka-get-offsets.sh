#!/usr/bin/env bash
# Kafka's offset tool: prints topic:partition:offset (e.g. log end offsets with --time -1).
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" org.apache.kafka.tools.GetOffsetShell "$@"
