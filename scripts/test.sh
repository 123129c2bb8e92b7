#!/usr/bin/env bash
# Builds and runs the whole test suite on a fresh Debian 12 machine:
#   1. installs the dependencies (scripts/install-deps.sh, idempotent);
#   2. Debug build: unit, CLI and reference (Quartz, SnakeYAML, JVM) tests;
#   3. ASan+UBSan build (clang): the unit, CLI and registry conformance tests again;
#   4. a bounded run of the libFuzzer targets, built in that same tree (scripts/fuzz.sh,
#      FUZZ_SECONDS each, default 10).
# The registry tests start real ZooKeeper servers (scripts/zk-server.sh) on free ports.
# Usage: scripts/test.sh  (JOBS=n to override parallelism; FUZZ_SECONDS=0 skips step 4)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
JOBS="${JOBS:-$(nproc)}"

echo "== Debug build"
cmake --preset debug >/dev/null
cmake --build --preset debug -j "$JOBS"

echo "== ASan+UBSan build (clang; the libFuzzer targets too)"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$JOBS" --target unit_tests elasticjob_cli registry_tests \
  fuzz_targets

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
echo "== Tests (ASan+UBSan: unit, CLI, registry conformance)"
ctest --preset asan -j "$JOBS"
echo "== Tests (Debug: everything)"
ctest --preset debug -j "$JOBS"

# A short bounded fuzz run of every target (scripts/fuzz.sh, docs/testing.md).
if [[ "${FUZZ_SECONDS:-10}" != 0 ]]; then
  echo "== Fuzz (${FUZZ_SECONDS:-10} s per target)"
  FUZZ_PRESET=asan bash scripts/fuzz.sh "${FUZZ_SECONDS:-10}"
fi
