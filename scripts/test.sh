#!/usr/bin/env bash
# Builds and runs the whole test suite on a fresh Debian 12 machine:
#   1. installs the dependencies (scripts/install-deps.sh, idempotent);
#   2. Debug build of everything;
#   3. ASan+UBSan build (clang, which also checks the thread-safety annotations) and its run
#      of the unit, CLI and registry conformance tests (labels unit, registry);
#   4. the Debug run of every other test (reference, integration, e2e, chaos, cluster,
#      browser, database: the ones ASan does not run); `scripts/test.sh debug` alone runs
#      every test in the Debug tree;
#   5. a bounded run of the libFuzzer targets, built in the ASan tree (scripts/fuzz.sh,
#      FUZZ_SECONDS each, default 10);
#   6. TSan build of the concurrency tests only (label tsan, tests/CMakeLists.txt) and their
#      run, the registry conformance suite over both backends included.
# The registry tests start real ZooKeeper servers (scripts/zk-server.sh) on free ports.
# Each stage prints how long it took, so CI's log shows where the budget goes.
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

# With an argument, a ctest label regex to leave out (what another stage already ran).
test_debug() {
  if [[ $# -gt 0 ]]; then
    echo "== Tests (Debug: all but labels $1, which the ASan stage ran)"
    ctest --preset debug -j "$JOBS" -LE "$1"
  else
    echo "== Tests (Debug: everything)"
    ctest --preset debug -j "$JOBS"
  fi
}

build_asan() {
  echo "== ASan+UBSan build (clang; the libFuzzer targets too)"
  cmake --preset asan >/dev/null
  # Every binary with a test labelled unit or registry: the full run's Debug stage skips them
  # (unit_tests: every module's <module>_unit_tests).
  cmake --build --preset asan -j "$JOBS" --target unit_tests elasticjob_cli registry_tests \
    lifecycle_tests fuzz_targets
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

# Runs its arguments as one stage and prints how long it took.
timed() {
  local start=$SECONDS
  "$@"
  echo "== $1: $((SECONDS - start)) s (total $SECONDS s)"
}

if [[ $# -eq 0 ]]; then
  timed build_debug
  timed build_asan
  timed test_asan
  timed test_debug "unit|registry"
  timed fuzz
  timed tsan
  exit 0
fi
for stage in "$@"; do
  case "$stage" in
    debug) timed build_debug && timed test_debug ;;
    asan) timed build_asan && timed test_asan ;;
    fuzz) build_asan && timed fuzz ;;
    tsan) timed tsan ;;
    *) echo "scripts/test.sh: unknown stage '$stage' (debug, asan, fuzz, tsan)" >&2; exit 2 ;;
  esac
done
