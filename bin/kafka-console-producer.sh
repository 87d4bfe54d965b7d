#!/usr/bin/env bash
# Kafka's console producer.
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" org.apache.kafka.tools.ConsoleProducer "$@"
