#!/usr/bin/env bash
# A flame graph of where a runtime_bench process spends its CPU in the steady state of every-
# second jobs (docs/benchmarks.md, "Where the fire path's CPU goes").
#
#   bench/flamegraph.sh RUNTIME_BENCH REGISTRY_URL OUT.svg [JOBS] [SECONDS]
#
# Starts `RUNTIME_BENCH --registry REGISTRY_URL --jobs JOBS --items 1 --cron '* * * * * ?'
# --control --reap-wait 0` (JOBS 1000), opens its window once it has settled (every job
# answering its fires), records it with `perf record -e cpu-clock -F 4999 --call-graph dwarf`
# for SECONDS (20), closes the window and turns the stacks into OUT.svg (one tower per
# thread, named by its thread; symbol offsets dropped) with the `flamegraph` tool pinned by
# bench/flamegraph/package-lock.json (npm ci into a temporary directory; Debian has no
# flame graph package). The benchmark's JSON is written beside it (OUT.svg.json).
# Needs perf (linux-perf: installed when missing, as root) and node/npm
# (scripts/install-deps.sh). A Release build's symbol table names the frames.
set -euo pipefail

if (($# < 3)); then sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
bench=$1
registry=$2
out=$3
jobs=${4:-1000}
seconds=${5:-20}
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v perf > /dev/null; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get > /dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf > /dev/null
  else
    echo "flamegraph.sh: perf is not installed (apt install linux-perf)" >&2
    exit 1
  fi
fi
command -v npm > /dev/null || { echo "flamegraph.sh: npm is not installed" >&2; exit 1; }

work=$(mktemp -d)
pid=""
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2> /dev/null; then kill "$pid" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

cp "$here/flamegraph/package.json" "$here/flamegraph/package-lock.json" "$work/"
(cd "$work" && npm ci --no-audit --no-fund --loglevel=error > /dev/null)

mkfifo "$work/control"
"$bench" --registry "$registry" --jobs "$jobs" --items 1 --cron '* * * * * ?' --control \
  --reap-wait 0 < "$work/control" > "$out.json" 2> "$work/stderr" &
pid=$!
exec 3> "$work/control"
# "ready" once every job has answered a fire (the benchmark's steady state).
{ timeout 600 tail -n +1 -f "$work/stderr" || true; } | grep -q -m1 '^ready' || {
  echo "flamegraph.sh: the benchmark never became ready:" >&2
  cat "$work/stderr" >&2
  exit 1
}
echo start >&3
# cpu-clock: a virtual machine may have no hardware counters to sample on.
perf record -q -e cpu-clock -F 4999 --call-graph dwarf,16384 -p "$pid" -o "$work/perf.data" \
  -- sleep "$seconds" 2> /dev/null
echo stop >&3
exec 3>&-
wait "$pid"
pid=""
# The tool files every sample under the first thread name it meets: each sample's thread
# becomes its stack's root frame instead, under one process name.
perf script -i "$work/perf.data" 2> /dev/null | awk '
  /^[^ \t]/ { thread = $1; $1 = "runtime_bench"; print; next }
  /^[ \t]+[0-9a-f]+ / { sub(/\+0x[0-9a-f]+ \(/, " ("); print; next }
  /^$/ { if (thread != "") printf "\t0 [%s] ([threads])\n", thread; thread = ""; print; next }
  { print }' |
  "$work/node_modules/.bin/flamegraph" -t perf --titletext \
    "runtime_bench, $jobs every-second one-item jobs on ${registry%%:*}://, $seconds s" |
  sed 's/ && / \&amp;\&amp; /g' > "$out"  # the tool's event handlers are not escaped for XML
echo "flamegraph.sh: $out ($(grep -c '<g ' "$out") frames), the benchmark's JSON in $out.json"
