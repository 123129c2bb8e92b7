#!/usr/bin/env bash
# The console API benchmark (docs/benchmarks.md): a private ZooKeeper, `console_bench` writes
# JOBS jobs into it and times GET jobs and GET one job (p50/p99/max).
# Usage: console_bench.sh CONSOLE_BENCH_BIN ZK_SCRIPT [JOBS (1000)] [REQUESTS (300)]
set -uo pipefail
BENCH="$1"
ZK="$2"
jobs="${3:-1000}"
requests="${4:-300}"
work="$(mktemp -d)"
cleanup() {
  bash "$ZK" stop "$work/zk"
  rm -rf "$work"
}
trap cleanup EXIT
read -r port _ < <(ZK_HEAP=1g bash "$ZK" start "$work/zk") ||
  { echo "console_bench: cannot start ZooKeeper"; exit 1; }
"$BENCH" --registry "zookeeper://127.0.0.1:$port/bench" --jobs "$jobs" --requests "$requests" --json
