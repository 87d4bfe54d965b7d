#!/usr/bin/env bash
# Kafka's topic tool.
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" org.apache.kafka.tools.TopicCommand "$@"
