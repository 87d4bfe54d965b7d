#!/usr/bin/env bash
# Kafka's storage tool (format, info, random-uuid, ...), exactly as Kafka ships it.
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" kafka.tools.StorageTool "$@"
