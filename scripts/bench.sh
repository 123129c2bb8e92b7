#!/usr/bin/env bash
# Builds the Release benchmarks and runs the pure-path Google Benchmarks (cron next fire,
# sharding plan, config YAML, sharding context JSON). Extra arguments go to the benchmark,
# e.g. scripts/bench.sh --benchmark_filter=Cron --benchmark_repetitions=5
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target pure_bench
build/release/bench/pure_bench "$@"
