#!/usr/bin/env bash
# Creates, starts, describes, pauses, resumes, stops and deletes cluster mirrors.
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" io.clustermirror.admin.cli.ClusterMirrorsCommand "$@"
