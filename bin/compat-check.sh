#!/usr/bin/env bash
# Answers "does Cluster Mirror run on Kafka <version>?" for a Kafka release, for example one published today, and prints
# a table of what passed. From a checkout:
#
#   bin/compat-check.sh 4.4.1
#
# 1. collects the release's libs/ (kafka-releases/kafka-<version>, written from the newest one there if it is new);
# 2. builds Cluster Mirror as usual (against the Kafka its pom names) and, in a scratch copy, compiles the product's
#    modules against <version>;
# 3. checks every Kafka internal the one jar uses against the release (KafkaReleasesLinkageTest);
# 4. runs the drop-in smoke suite on launched nodes of the release (KafkaReleasesSmokeTest): a dedicated controller and
#    two brokers mirroring every kind of batch in every codec, refusing produce and deletion, a leader restart, a stop
#    with its barrier, a failback.
#
# A release of a line this build does not support is refused at start by design: the smoke suite then fails on the
# node's one-line refusal, and the linkage table (mirror-it/target/kafka-releases-linkage.txt) lists what a port to
# the line has to change. To declare a tested release, add it to KafkaSupport.TESTED_RELEASES and its module to the
# parent pom. Exits non-zero if any check failed. Environment: MAVEN_OPTS as for any build.
set -Euo pipefail

base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$base_dir"

usage() {
  echo "usage: bin/compat-check.sh <kafka-version>   (a release on Maven Central, e.g. 4.4.1)" >&2
  exit 2
}
[[ $# -eq 1 ]] || usage
version=$1
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9.]+)?$ ]] || {
  echo "compat-check: '$version' is not a Kafka release number such as 4.4.1" >&2
  usage
}

work="$base_dir/target/compat-check/$version"
rm -rf "$work"
mkdir -p "$work"
declare -a rows=()
failed=0

# Appends a row to the table: check, result, detail.
row() {
  rows+=("$(printf '%-44s %-6s %s' "$1" "$2" "$3")")
  [[ $2 == PASS ]] || failed=1
}

# One row per test case of a surefire report: "<class>.<method> PASS|FAIL|SKIP".
report_rows() {
  local report=$1 label=$2
  if [[ ! -f $report ]]; then
    row "$label" FAIL "no test report (see $work)"
    return
  fi
  while IFS=$'\t' read -r name result; do
    row "$label: $name" "$result" ""
  done < <(awk '
    /<testcase / {
      if (name != "") print name "\t" result
      match($0, /name="[^"]*"/); name = substr($0, RSTART + 6, RLENGTH - 7); result = "PASS"
      if ($0 ~ /\/>[[:space:]]*$/) { print name "\t" result; name = "" }
      next
    }
    /<(failure|error)[ >]/ { result = "FAIL" }
    /<skipped/ { result = "SKIP" }
    /<\/testcase>/ { if (name != "") print name "\t" result; name = "" }
  ' "$report")
}

module="kafka-releases/kafka-$version"
if [[ ! -f $module/pom.xml ]]; then
  template=$(ls -d kafka-releases/kafka-*/ | sort -V | tail -1)
  template_version=${template#kafka-releases/kafka-}
  template_version=${template_version%/}
  mkdir -p "$module"
  sed "s/$template_version/$version/g" "$template/pom.xml" > "$module/pom.xml"
  echo "compat-check: wrote $module/pom.xml from ${template}pom.xml"
fi

echo "==> collecting Kafka $version"
if mvn -B -q -f "$module/pom.xml" package > "$work/collect.log" 2>&1; then
  row "collect Kafka $version from Maven Central" PASS "$module/target/libs"
else
  row "collect Kafka $version from Maven Central" FAIL "see $work/collect.log"
  printf '%s\n' "${rows[@]}"
  exit 1
fi

echo "==> building Cluster Mirror"
if mvn -B -q install -DskipTests > "$work/build.log" 2>&1; then
  row "build (the pom's Kafka)" PASS ""
else
  row "build (the pom's Kafka)" FAIL "see $work/build.log"
  printf '%s\n' "${rows[@]}"
  exit 1
fi

echo "==> compiling the product's modules against Kafka $version"
scratch="$work/source"
mkdir -p "$scratch"
tar --exclude=./target --exclude='./*/target' --exclude='./*/*/target' --exclude=./.git -cf - . | tar -xf - -C "$scratch"
if (cd "$scratch" && mvn -B -q compile -Dkafka.version="$version" -pl mirror-common,mirror-broker,mirror-admin,mirror-server -am) \
    > "$work/compile.log" 2>&1; then
  row "compile against Kafka $version" PASS ""
else
  row "compile against Kafka $version" FAIL "$(grep -c 'ERROR.*\.java' "$work/compile.log") errors, see $work/compile.log"
fi

reports=mirror-it/target/surefire-reports
echo "==> checking every Kafka internal the one jar uses"
rm -f "$reports"/TEST-io.clustermirror.it.KafkaReleasesLinkageTest.xml
mvn -B -pl mirror-it test -Dtest=KafkaReleasesLinkageTest -Dsurefire.failIfNoSpecifiedTests=false > "$work/linkage.log" 2>&1
missing=$(awk -v v="$version" '$1 == v { print $3 " missing (" $2 " line)" }' mirror-it/target/kafka-releases-linkage.txt 2>/dev/null)
report_rows "$reports/TEST-io.clustermirror.it.KafkaReleasesLinkageTest.xml" "linkage"
row "internals of the one jar on Kafka $version" "$([[ $missing == 0\ missing* ]] && echo PASS || echo FAIL)" \
  "${missing:-not checked}; see mirror-it/target/kafka-releases-linkage.txt"

echo "==> drop-in smoke suite on launched nodes of Kafka $version"
rm -f "$reports"/TEST-io.clustermirror.it.KafkaReleasesSmokeTest.xml
mvn -B -pl mirror-it test -Dgroups=process -DexcludedTestGroups=slow,chaos -Dtest=KafkaReleasesSmokeTest \
  -Dsurefire.failIfNoSpecifiedTests=false -Dcluster.mirror.kafka.releases="$version" > "$work/smoke.log" 2>&1
report_rows "$reports/TEST-io.clustermirror.it.KafkaReleasesSmokeTest.xml" "smoke"

echo
echo "Cluster Mirror on Kafka $version (logs in $work)"
printf '%-44s %-6s %s\n' "CHECK" "RESULT" "DETAIL"
printf '%s\n' "${rows[@]}"
exit $failed
