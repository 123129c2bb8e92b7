#!/usr/bin/env bash
# Builds and runs the whole test suite on a fresh Debian 12 machine:
#   1. installs the dependencies (scripts/install-deps.sh, idempotent);
#   2. Debug build: unit, CLI and reference (Quartz, SnakeYAML, JVM) tests;
#   3. ASan+UBSan build (clang, which also checks the thread-safety annotations): the unit,
#      CLI and registry conformance tests again;
#   4. a bounded run of the libFuzzer targets, built in that same tree (scripts/fuzz.sh,
#      FUZZ_SECONDS each, default 10);
#   5. TSan build of the concurrency tests only (label tsan, tests/CMakeLists.txt) and their
#      run, the registry conformance suite over both backends included.
# The registry tests start real ZooKeeper servers (scripts/zk-server.sh) on free ports.
# Usage: scripts/test.sh [debug|asan|fuzz|tsan]...  (no argument: all of them, in the order
# above; JOBS=n to override parallelism; FUZZ_SECONDS=0 skips the fuzz run)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
JOBS="${JOBS:-$(nproc)}"

build_debug() {
  echo "== Debug build"
  cmake --preset debug >/dev/null
  cmake --build --preset debug -j "$JOBS"
}

test_debug() {
  echo "== Tests (Debug: everything)"
  ctest --preset debug -j "$JOBS"
}

build_asan() {
  echo "== ASan+UBSan build (clang; the libFuzzer targets too)"
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$JOBS" --target unit_tests elasticjob_cli registry_tests \
    fuzz_targets
}

test_asan() {
  echo "== Tests (ASan+UBSan: unit, CLI, registry conformance)"
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
    LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --preset asan -j "$JOBS"
}

# A short bounded fuzz run of every target (scripts/fuzz.sh, docs/testing.md).
fuzz() {
  if [[ "${FUZZ_SECONDS:-10}" != 0 ]]; then
    echo "== Fuzz (${FUZZ_SECONDS:-10} s per target)"
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
      LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
      UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
      FUZZ_PRESET=asan bash scripts/fuzz.sh "${FUZZ_SECONDS:-10}"
  fi
}

# The concurrency tests under ThreadSanitizer (docs/testing.md): only their binaries are
# built (tsan_tests, registry_tests and its session holder), not the whole tree.
tsan() {
  echo "== TSan build (the concurrency tests)"
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j "$JOBS" --target tsan_tests registry_tests session_holder
  echo "== Tests (TSan: label tsan)"
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp" \
    ctest --preset tsan -j "$JOBS"
}

if [[ $# -eq 0 ]]; then
  build_debug
  build_asan
  test_asan
  test_debug
  fuzz
  tsan
  exit 0
fi
for stage in "$@"; do
  case "$stage" in
    debug) build_debug && test_debug ;;
    asan) build_asan && test_asan ;;
    fuzz) build_asan && fuzz ;;
    tsan) tsan ;;
    *) echo "scripts/test.sh: unknown stage '$stage' (debug, asan, fuzz, tsan)" >&2; exit 2 ;;
  esac
done
