#!/usr/bin/env bash
# Builds the Release benchmarks and runs them (docs/benchmarks.md).
#   scripts/bench.sh [GOOGLE_BENCHMARK_ARGS...]   the pure-path Google Benchmarks (cron next
#       fire, sharding plan, config YAML, sharding context JSON), e.g.
#       scripts/bench.sh --benchmark_filter=Cron --benchmark_repetitions=5
#   scripts/bench.sh cluster [--quick] [OUT_DIR]  the runtime on a real ZooKeeper
#       (bench/cluster_bench.sh): footprint, start-up, trigger lateness, packets per item
#       execution, resharding and failover; a table, and JSON in OUT_DIR/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
if [[ "${1:-}" == cluster ]]; then
  shift
  quick=()
  if [[ "${1:-}" == --quick ]]; then quick=(--quick); shift; fi
  cmake --build --preset release --target runtime_bench elasticjob_cli
  exec bash bench/cluster_bench.sh "${quick[@]}" build/release/bench/runtime_bench \
    build/release/src/cli/elasticjob scripts/zk-server.sh "${1:-build/release/bench/results}"
fi
cmake --build --preset release --target pure_bench
build/release/bench/pure_bench "$@"
