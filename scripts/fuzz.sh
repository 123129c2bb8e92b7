#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset: clang, ASan+UBSan) and runs each for a
# bounded time, one after another, starting from its seed corpus in tests/fuzz/corpus/.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default: 60 s, every target)
#   FUZZ_PRESET=asan: the targets of the asan preset's tree (clang, Debug, the one the test
#   command builds anyway) instead of the fuzz preset's (-O1: more inputs per second).
# New inputs go to build/<preset>/corpus/<target>/ (not the repo); a crash, leak, timeout or
# failed check is saved under build/<preset>/artifacts/<target>/ and makes the script exit 1.
# To keep an input as a seed, copy it into tests/fuzz/corpus/<target>/; to turn a crash into
# a regression test, see docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(cron_fuzzer config_yaml_fuzzer run_file_fuzzer sharding_item_parameters_fuzzer
           sharding_context_fuzzer registry_values_fuzzer dump_request_fuzzer)
fi
bash scripts/install-deps.sh >/dev/null
preset="${FUZZ_PRESET:-fuzz}"
dir="build/$preset"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "${JOBS:-2}" --target fuzz_targets >/dev/null
failed=()
for t in "${targets[@]}"; do
  work="$dir/corpus/$t" artifacts="$dir/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  echo "== fuzz $t (${seconds}s)"
  if ! UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
       "$dir/tests/fuzz/$t" "$work" "tests/fuzz/corpus/$t" \
         -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
         -artifact_prefix="$artifacts/" > "$dir/$t.log" 2>&1; then
    failed+=("$t")
    grep -E "ERROR|FUZZ_CHECK|Test unit written|SUMMARY" "$dir/$t.log" | head -5 || true
  fi
  grep -E "^stat::number_of_executed_units|^Done" "$dir/$t.log" | tr '\n' ' ' || true
  echo
done
if ((${#failed[@]} > 0)); then
  echo "fuzz: FAILED: ${failed[*]} (logs: $dir/<target>.log)"
  exit 1
fi
echo "fuzz: ${#targets[@]} target(s) ran ${seconds}s each, nothing found"
