#!/usr/bin/env bash
# Kafka's log segment dump tool (byte-level checks of mirrored partitions), with the MIRROR_PID_RESET
# barrier named: see io.clustermirror.server.tools.MirrorDumpLog.
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" io.clustermirror.server.tools.MirrorDumpLog "$@"
