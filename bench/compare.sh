#!/usr/bin/env bash
# The side-by-side guard: builds two commits' benchmarks (Release) in trees of their own and
# runs them interleaved, several rounds, printing both columns and the ratio.
#
#   bench/compare.sh BASE_REF [HEAD_REF] [--only SETS] [--skip SETS] [--rounds N] [--window S]
#
# HEAD_REF defaults to HEAD. SETS is a comma-separated list of:
#   runtime-1k-mem, runtime-1k-zk      runtime_bench, 1,000 every-second one-item jobs, on
#   runtime-10k-mem, runtime-10k-zk    memory:// or on a fresh ZooKeeper (scripts/zk-server.sh,
#                                      ZK_HEAP=2g, ZK_CONTAINER_CHECK_MS=60000 as
#                                      bench/cluster_bench.sh; stopped by its PID); 10,000 jobs
#                                      take a minute or more to start
#   pure                               pure_bench without the cron benchmarks (sharding plans,
#                                      config YAML, script start)
#   cron                               pure_bench's cron benchmarks (BM_CronMix: the Quartz mix)
#   tracing                            tracing_bench lateness, tracing to SQLite off / on
#   quartz                             cron_mix_bench and Quartz 2.3.2 on the JVM
#                                      (bench/QuartzCronBench.java) on the same mix, in turn:
#                                      ns per call, and Quartz's over each side's
# and the groups runtime-1k, runtime-10k, runtime (all four). Default: every set.
#
# Environment: ROUNDS (3), WINDOW (10: seconds each runtime and tracing window), MIN_TIME
# (0.5: --benchmark_min_time of the Google benchmarks, and the quartz set's seconds per
# side), REAP_WAIT (0: runtime_bench's --reap-wait, seconds to wait for the server to reap
# the start-up's latch containers before the window; 300 to match bench/cluster_bench.sh,
# whose figures are taken once the server has), COMPARE_DIR (build/compare: the trees,
# kept per commit so that a second comparison builds nothing), BUILD_JOBS (2), ZK_HEAP (2g),
# ZK_CONTAINER_CHECK_MS (60000). ccache is used when installed (CCACHE_BASEDIR defaults to
# the repository's parent, CCACHE_NOHASHDIR=1, so the trees hit the checkout's cache).
#
# Each round runs every set on both sides, alternating which goes first. A figure is the
# median over the rounds; the ratio is head / base (below 1: head is faster or smaller). A
# commit without a benchmark, a flag or a figure prints n/a: an older BASE_REF may predate
# some of them. Raw JSON of every run: COMPARE_DIR/runs-<base>-<head>-<time>/.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
base_ref=""
head_ref=""
only="runtime,pure,cron,quartz,tracing"
skip=""
rounds=${ROUNDS:-3}
window=${WINDOW:-10}
while (($#)); do
  case "$1" in
    --only) only="$2"; shift 2 ;;
    --skip) skip="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --window) window="$2"; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "compare.sh: unknown option $1" >&2; usage ;;
    *) if [[ -z "$base_ref" ]]; then base_ref="$1"; elif [[ -z "$head_ref" ]]; then head_ref="$1"; else usage; fi
       shift ;;
  esac
done
[[ -n "$base_ref" ]] || usage
head_ref=${head_ref:-HEAD}
min_time=${MIN_TIME:-0.5}
reap_wait=${REAP_WAIT:-0}

repo=$(git rev-parse --show-toplevel)
base=$(git -C "$repo" rev-parse --verify "$base_ref^{commit}")
head=$(git -C "$repo" rev-parse --verify "$head_ref^{commit}")
compare_dir=${COMPARE_DIR:-$repo/build/compare}
mkdir -p "$compare_dir"
compare_dir=$(cd "$compare_dir" && pwd)

expand() {  # SETS -> one set a line
  local s
  for s in ${1//,/ }; do
    case "$s" in
      runtime) printf '%s\n' runtime-1k-mem runtime-1k-zk runtime-10k-mem runtime-10k-zk ;;
      runtime-1k) printf '%s\n' runtime-1k-mem runtime-1k-zk ;;
      runtime-10k) printf '%s\n' runtime-10k-mem runtime-10k-zk ;;
      runtime-1k-mem|runtime-1k-zk|runtime-10k-mem|runtime-10k-zk|pure|cron|quartz|tracing) echo "$s" ;;
      *) echo "compare.sh: unknown set '$s'" >&2; exit 2 ;;
    esac
  done
}
mapfile -t sets < <(expand "$only" | awk '!seen[$0]++')
mapfile -t skipped < <(expand "$skip")
for k in "${skipped[@]}"; do
  for i in "${!sets[@]}"; do [[ "${sets[$i]}" == "$k" ]] && unset 'sets[i]'; done
done
sets=("${sets[@]}")
((${#sets[@]})) || { echo "compare.sh: nothing to run" >&2; exit 2; }

# --- Build -------------------------------------------------------------------------------
targets=()
for s in "${sets[@]}"; do
  case "$s" in
    runtime-*) targets+=(runtime_bench) ;;
    pure|cron) targets+=(pure_bench) ;;
    tracing) targets+=(tracing_bench) ;;
    quartz) targets+=(cron_mix_bench) ;;
  esac
done
mapfile -t targets < <(printf '%s\n' "${targets[@]}" | sort -u)

if command -v ccache > /dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$repo")}
  export CCACHE_NOHASHDIR=1
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
fi

build() {  # SHA -> the tree's bench directory on stdout; the benchmarks it has are built
  local sha="$1" tree="$compare_dir/$1" t have=()
  if [[ ! -f "$tree/.extracted" ]]; then
    rm -rf "$tree" && mkdir -p "$tree/src"
    git -C "$repo" archive "$sha" | tar -x -C "$tree/src"
    touch "$tree/.extracted"
  fi
  for t in "${targets[@]}"; do
    grep -q "add_executable($t " "$tree/src/bench/CMakeLists.txt" 2> /dev/null && have+=("$t")
  done
  if ((${#have[@]})); then
    (cd "$tree/src" &&
      cmake --preset release -DELASTICJOB_BUILD_TESTS=OFF > "$tree/configure.log" 2>&1 &&
      cmake --build --preset release -j "${BUILD_JOBS:-2}" --target "${have[@]}" > "$tree/build.log" 2>&1) ||
      { echo "compare.sh: building ${sha:0:9} failed; see $tree/build.log" >&2; exit 1; }
  fi
  echo "$tree/src/build/release/bench"
}
echo "base ${base:0:9} ($base_ref), head ${head:0:9} ($head_ref); sets: ${sets[*]}; $rounds rounds"
echo "building (trees in $compare_dir) ..."
base_bin=$(build "$base")
head_bin=$(build "$head")

# --- Run ---------------------------------------------------------------------------------
runs="$compare_dir/runs-${base:0:9}-${head:0:9}-$(date +%Y%m%dT%H%M%S)"
mkdir -p "$runs"
work=$(mktemp -d)
zk_dir=""
zk_script="$repo/scripts/zk-server.sh"
cleanup() {
  [[ -n "$zk_dir" ]] && bash "$zk_script" stop "$zk_dir" > /dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# record SIDE KEY VALUE: one figure of one run (KEY orders the table by first appearance)
record() {
  [[ -n "$3" && "$3" != null ]] || return 0
  grep -qxF "$2" "$work/keys" 2> /dev/null || echo "$2" >> "$work/keys"
  echo "$3" >> "$work/$1.$(echo "$2" | md5sum | cut -c1-12)"
}
note_key() { grep -qxF "$1" "$work/keys" 2> /dev/null || echo "$1" >> "$work/keys"; }

has_flag() { "$1" --help 2>&1 | grep -q -- "$2"; }

run_runtime() {  # SIDE BIN SET ROUND
  local side="$1" bench="$2/runtime_bench" set="$3" r="$4" jobs url out args=()
  [[ -x "$bench" ]] || return 0
  case "$set" in *-1k-*) jobs=1000 ;; *) jobs=10000 ;; esac
  if [[ "$set" == *-zk ]]; then
    zk_dir="$work/zk"
    rm -rf "$zk_dir"
    local port
    read -r port _ < <(ZK_HEAP=${ZK_HEAP:-2g} ZK_CONTAINER_CHECK_MS=${ZK_CONTAINER_CHECK_MS:-60000} \
      bash "$zk_script" start "$zk_dir") || { echo "compare.sh: cannot start ZooKeeper" >&2; return 1; }
    # The fresh server's JVM is cold: one throwaway run first (as cluster_bench.sh).
    "$bench" --registry "zookeeper://127.0.0.1:$port/warm" --jobs 1 --seconds 1 > /dev/null 2>&1 || true
    url="zookeeper://127.0.0.1:$port/bench"
  else
    url="memory://bench"
  fi
  has_flag "$bench" --reap-wait && args+=(--reap-wait "$reap_wait")
  out="$runs/$set.$side.$r.json"
  "$bench" --registry "$url" --jobs "$jobs" --items 1 --cron '* * * * * ?' --seconds "$window" \
    "${args[@]}" > "$out" 2> "$out.err" || echo "compare.sh: $set ($side) failed: $(tail -2 "$out.err")" >&2
  if [[ -n "$zk_dir" ]]; then bash "$zk_script" stop "$zk_dir" > /dev/null 2>&1; zk_dir=""; fi
  [[ -s "$out" ]] || return 0
  local j
  j=$(tail -1 "$out")
  record "$side" "$set: lateness p50 (ms)" "$(jq -r '.lateness_ms.p50 // empty' <<< "$j")"
  record "$side" "$set: lateness p99 (ms)" "$(jq -r '.lateness_ms.p99 // empty' <<< "$j")"
  record "$side" "$set: lateness max (ms)" "$(jq -r '.lateness_ms.max // empty' <<< "$j")"
  record "$side" "$set: CPU per item run (us)" "$(jq -r '.cpu_us_per_item // empty' <<< "$j")"
  record "$side" "$set: start-up, ScheduleAll (ms)" "$(jq -r '.startup_ms // empty' <<< "$j")"
  record "$side" "$set: RSS under load (MB)" "$(jq -r '(.load.rss_kb // empty) / 1024' <<< "$j")"
  record "$side" "$set: threads under load" "$(jq -r '.load.threads // empty' <<< "$j")"
}

run_google() {  # SIDE BIN SET ROUND
  local side="$1" bench="$2/pure_bench" set="$3" r="$4" filter out
  [[ "$set" == cron ]] && filter='Cron' || filter='-Cron'
  [[ -x "$bench" ]] || return 0
  out="$runs/$set.$side.$r.json"
  "$bench" --benchmark_filter="$filter" --benchmark_min_time="$min_time" --benchmark_format=json \
    > "$out" 2> "$out.err" || { echo "compare.sh: $set ($side) failed" >&2; return 0; }
  local name value
  while IFS=$'\t' read -r name value; do
    record "$side" "$set: $name (ns)" "$value"
  done < <(jq -r '.benchmarks[] | select(.run_type != "aggregate") |
    [.name, (.real_time * (if .time_unit == "us" then 1000 elif .time_unit == "ms" then 1e6 else 1 end))] | @tsv' "$out")
}

run_tracing() {  # SIDE BIN SET ROUND
  local side="$1" bench="$2/tracing_bench" r="$4" out db
  [[ -x "$bench" ]] || return 0
  db="$work/tracing-$side-$r"
  mkdir -p "$db"
  out="$runs/tracing.$side.$r.json"
  "$bench" lateness --tracing "sqlite://$db/events.db" --jobs 1000 --seconds "$window" --rounds 1 \
    > "$out" 2> "$out.err" || { echo "compare.sh: tracing ($side) failed: $(tail -2 "$out.err")" >&2; return 0; }
  local j
  j=$(tail -1 "$out")
  record "$side" "tracing: lateness p50 off (ms)" "$(jq -r '.lateness_ms_off.p50 // empty' <<< "$j")"
  record "$side" "tracing: lateness p50 on (ms)" "$(jq -r '.lateness_ms_on.p50 // empty' <<< "$j")"
  record "$side" "tracing: lateness p99 off (ms)" "$(jq -r '.lateness_ms_off.p99 // empty' <<< "$j")"
  record "$side" "tracing: lateness p99 on (ms)" "$(jq -r '.lateness_ms_on.p99 // empty' <<< "$j")"
  rm -rf "$db"
}

quartz_jar=${QUARTZ_JAR:-/usr/share/java/quartz2.jar}
quartz_mix=""
run_quartz() {  # SIDE BIN SET ROUND
  local side="$1" bench="$2/cron_mix_bench" r="$4" out q
  [[ -x "$bench" ]] || return 0
  if ! command -v java > /dev/null || [[ ! -f "$quartz_jar" ]]; then
    echo "compare.sh: quartz needs java and $quartz_jar" >&2
    return 0
  fi
  if [[ -z "$quartz_mix" ]]; then  # the cases Quartz answers, once (QuartzCronBench --kept)
    "$bench" print > "$work/mix.tsv"
    java -cp "$quartz_jar" "$repo/bench/QuartzCronBench.java" "$work/mix.tsv" --kept \
      "$work/kept.tsv" --seconds 0.1 --warmup 0.1 > /dev/null 2>&1
    quartz_mix="$work/kept.tsv"
  fi
  out="$runs/quartz.$side.$r.json"
  "$bench" run "$quartz_mix" --seconds "$min_time" > "$out" 2> "$out.err" || return 0
  java -cp "$quartz_jar" "$repo/bench/QuartzCronBench.java" "$quartz_mix" --seconds "$min_time" \
    --warmup 3 >> "$out" 2> /dev/null || return 0
  local ours theirs
  ours=$(sed -n '1s/.*"ns_per_call":\([0-9.]*\).*/\1/p' "$out")
  theirs=$(sed -n '2s/.*"ns_per_call":\([0-9.]*\).*/\1/p' "$out")
  record "$side" "quartz: cron mix, ns per call" "$ours"
  record "$side" "quartz: Quartz 2.3.2, ns per call (same round)" "$theirs"
  [[ -n "$ours" && -n "$theirs" ]] &&
    record "$side" "quartz: Quartz / this side (x faster)" "$(awk -v q="$theirs" -v o="$ours" 'BEGIN {print q / o}')"
}

for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order=(base head); else order=(head base); fi
  for set in "${sets[@]}"; do
    for side in "${order[@]}"; do
      [[ "$side" == base ]] && bin="$base_bin" || bin="$head_bin"
      echo "round $r/$rounds: $set, $side"
      case "$set" in
        runtime-*) run_runtime "$side" "$bin" "$set" "$r" ;;
        pure|cron) run_google "$side" "$bin" "$set" "$r" ;;
        tracing) run_tracing "$side" "$bin" "$set" "$r" ;;
        quartz) run_quartz "$side" "$bin" "$set" "$r" ;;
      esac
    done
  done
done

# --- Table -------------------------------------------------------------------------------
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "n/a"; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
fmt() { [[ "$1" == n/a ]] && echo n/a || awk -v v="$1" 'BEGIN {
  if (v >= 1000) printf "%.0f", v; else if (v >= 10) printf "%.1f", v; else if (v >= 1) printf "%.2f", v; else printf "%.3f", v }'; }
echo
echo "base ${base:0:9}, head ${head:0:9}: median of $rounds rounds (window ${window}s, min_time ${min_time}s); ratio = head / base"
echo
echo "| figure | base ${base:0:9} | head ${head:0:9} | head / base |"
echo "|---|---|---|---|"
if [[ -f "$work/keys" ]]; then
  while IFS= read -r key; do
    h=$(echo "$key" | md5sum | cut -c1-12)
    b=$(median < <(cat "$work/base.$h" 2> /dev/null || true))
    n=$(median < <(cat "$work/head.$h" 2> /dev/null || true))
    ratio=n/a
    if [[ "$b" != n/a && "$n" != n/a ]]; then
      ratio=$(awk -v a="$n" -v b="$b" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }')
    fi
    echo "| $key | $(fmt "$b") | $(fmt "$n") | $ratio |"
  done < "$work/keys"
fi
for s in "${sets[@]}"; do
  grep -q "^$s: \|^$s:" "$work/keys" 2> /dev/null || echo "| $s | n/a | n/a | n/a |"
done
echo
echo "raw runs: $runs"
