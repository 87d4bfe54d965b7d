#!/usr/bin/env bash
# Kafka's console consumer.
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" org.apache.kafka.tools.consumer.ConsoleConsumer "$@"
