#!/usr/bin/env bash
# The runtime benchmarks on a real ZooKeeper (docs/benchmarks.md): starts a private server,
# runs `runtime_bench` processes against it, and reports a table plus JSON
# ($OUT/results.json, one object per scenario).
#   footprint & lateness  one process of J jobs (every-second cron, 1 item): start-up to
#                         ScheduleAll() returned, to the first run and to steady state
#                         (settled: a fire time every job answered on time), trigger lateness
#                         p50/p99/max once the server has reaped the latch containers the
#                         start-up's elections emptied (reaped: ms after settling; p99_start:
#                         the p99 of a window right after settling, while it may be reaping),
#                         threads and RSS idle and under load, CPU per item;
#   packets               zk_packets_received (mntr) per item execution, one job of a
#                         2-second cron, failover off and on: 1 instance with 1/4/16 items,
#                         2 instances with 1/4/16 items each (a job of 2/8/32) and with the
#                         4-item job of the targets (2 each);
#   resharding            from a joining instance's Schedule() returned to its first item
#                         assignment, seen by its watch;
#   failover              kill -9 to the victim's items running on a survivor
#                         (tests/e2e/failover_and_operations.sh, 3,000 ms session timeout).
# Usage: cluster_bench.sh [--quick] BENCH_BIN EJ_BIN ZK_SCRIPT [OUT_DIR (./bench-results)]
#   --quick: small sizes and short windows (the test suite runs it once to prove it works).
#   BENCH_JOB_COUNTS="1 100": the job counts of the footprint runs (default 1 ... 10000).
#   BENCH_SCENARIOS="packets": the scenarios to run (default: footprint packets resharding
#   failover).
set -uo pipefail
quick=0
if [[ "${1:-}" == "--quick" ]]; then quick=1; shift; fi
BENCH="$1"
EJ="$2"
ZK="$3"
out="${4:-bench-results}"
mkdir -p "$out"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../tests/lib/follow_log.sh"
source "$here/lib/zk_mntr.sh"
work="$(mktemp -d)"
declare -a PIDS=()
declare -A CTL=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  bash "$ZK" stop "$work/zk"
  rm -rf "$work"
}
trap cleanup EXIT
# The server as a production one runs: empty containers reaped at the default interval (the
# tests' 200 ms makes the server scan every node five times a second, a burst of its CPU
# that lands on the jobs' triggers), and a heap for 10,000 jobs' nodes and watches.
read -r port _ < <(ZK_CONTAINER_CHECK_MS=60000 ZK_HEAP=2g bash "$ZK" start "$work/zk") ||
  { echo "cluster_bench: cannot start ZooKeeper"; exit 1; }
results="$out/results.json"
: > "$results.lines"

if ((quick)); then
  # Every scenario once, at its smallest: it proves the harness, it measures nothing.
  job_counts=(100); window=2; packet_shapes=(2:4); failover_modes=(on)
  packet_window=2; trials=1; reap_wait=5
else
  read -r -a job_counts <<< "${BENCH_JOB_COUNTS:-1 10 100 1000 10000}"; window=10
  # instances:items of the job (AVG_ALLOCATION splits them evenly)
  packet_shapes=(1:1 1:4 1:16 2:2 2:4 2:8 2:32)
  failover_modes=(off on); packet_window=20; trials=10; reap_wait=300
fi

packets() { zk_packets_received "$port"; }
record() { echo "$1" >> "$results.lines"; }
ns=0
next_url() { ns=$((ns + 1)); url="zookeeper://127.0.0.1:$port/bench$ns"; }  # a fresh namespace

scenarios=" ${BENCH_SCENARIOS:-footprint packets resharding failover} "
want() { [[ "$scenarios" == *" $1 "* ]]; }

# 1. Footprint, start-up and lateness: one process, J every-second jobs of one item.
want footprint || job_counts=()
# A fresh server's JVM is cold (its first requests are interpreted): one throwaway run first,
# so that start-up is measured against a server in its steady state, as users meet it.
if ((${#job_counts[@]} > 0)); then
  next_url
  "$BENCH" --registry "$url" --jobs 1 --seconds 1 > /dev/null 2>&1 ||
    { echo "cluster_bench: warm-up run failed"; exit 1; }
fi
for jobs in "${job_counts[@]}"; do
  next_url
  json=$("$BENCH" --registry "$url" --jobs "$jobs" --seconds "$window" --reap-wait "$reap_wait" \
    2>"$work/err") ||
    { echo "cluster_bench: $jobs jobs failed: $(tail -3 "$work/err")"; exit 1; }
  # A figure or a failure: a window without its runs measured nothing.
  jq -e '.item_runs >= .jobs and .lateness_ms != null and .startup_ms > 0' <<< "$json" > /dev/null ||
    { echo "cluster_bench: $jobs jobs gave no figure: $json"; exit 1; }
  record "{\"scenario\":\"footprint\",\"result\":$json}"
done

# 2. Packets per item execution: K processes of one job, N items, a 2-second cron; the
# window is opened and closed in every process at once, and mntr is read around it.
want packets || packet_shapes=()
for shape in "${packet_shapes[@]}"; do
  instances=${shape%%:*}
  items=${shape##*:}
  for fo in "${failover_modes[@]}"; do
    next_url
    flags=()
    [[ "$fo" == on ]] && flags+=(--failover)
    PIDS=()
    for k in $(seq 1 "$instances"); do
      mkfifo "$work/ctl$k"
      "$BENCH" --registry "$url" --items "$items" --cron "0/2 * * * * ?" --control \
        --ip "10.9.1.$k" "${flags[@]}" < "$work/ctl$k" > "$work/out$k" 2> "$work/err$k" &
      PIDS+=($!)
      exec {fd}> "$work/ctl$k"
      CTL[$k]=$fd
    done
    for k in $(seq 1 "$instances"); do
      wait_for_lines "$work/err$k" ready 1 60 || { echo "cluster_bench: instance $k not ready"; exit 1; }
    done
    # Let the start-up resharding settle: one execution before the window.
    sleep 3
    before=$(packets)
    for k in $(seq 1 "$instances"); do echo start >&"${CTL[$k]}"; done
    sleep "$packet_window"
    for k in $(seq 1 "$instances"); do echo stop >&"${CTL[$k]}"; done
    after=$(packets)
    runs=0
    for k in $(seq 1 "$instances"); do
      eval "exec ${CTL[$k]}>&-"
      wait "${PIDS[$((k - 1))]}"
      rc=$?
      ((rc == 0)) || { echo "cluster_bench: instance $k exited $rc: $(tail -3 "$work/err$k") $(cat "$work/out$k")"; exit 1; }
      n=$(grep -o '"item_runs":[0-9]*' "$work/out$k" | cut -d: -f2)
      runs=$((runs + n))
      rm -f "$work/ctl$k"
    done
    PIDS=()
    ((runs > 0)) || { echo "cluster_bench: no item ran in the packets window ($shape, failover $fo)"; exit 1; }
    per=$(awk -v p=$((after - before)) -v r="$runs" 'BEGIN { printf "%.2f", (r > 0 ? p / r : -1) }')
    record "{\"scenario\":\"packets\",\"instances\":$instances,\"items\":$items,\"items_per_instance\":$((items / instances)),\"failover\":\"$fo\",\"packets\":$((after - before)),\"item_runs\":$runs,\"packets_per_item_run\":$per}"
  done
done

# 3. Resharding: two instances run; a third joins and waits for its first item.
if want resharding; then
next_url
PIDS=()
for k in 1 2; do
  "$BENCH" --registry "$url" --items 6 --seconds 30 --ip "10.9.2.$k" > /dev/null 2>&1 &
  PIDS+=($!)
done
sleep 2
json=$("$BENCH" --registry "$url" --items 6 --seconds 1 --ip 10.9.2.3 --reshard-watch 2>"$work/err") ||
  { echo "cluster_bench: resharding run failed: $(tail -3 "$work/err")"; exit 1; }
jq -e '.reshard_ms >= 0' <<< "$json" > /dev/null ||
  { echo "cluster_bench: the joiner saw no assignment: $json"; exit 1; }
record "{\"scenario\":\"resharding\",\"result\":$json}"
for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
PIDS=()
fi

# 4. Failover takeover, over several trials of the e2e scenario.
want failover || trials=0
for t in $(seq 1 "$trials"); do
  bash "$here/../tests/e2e/failover_and_operations.sh" "$EJ" "$ZK" > "$work/failover.log" 2>&1
  ms=$(grep "^info takeover" "$work/failover.log" | sed 's/.* started \([0-9]*\) ms after.*/\1/')
  [[ "$ms" =~ ^[0-9]+$ ]] ||
    { echo "cluster_bench: failover trial $t gave no figure:"; cat "$work/failover.log"; exit 1; }
  record "{\"scenario\":\"failover\",\"trial\":$t,\"takeover_ms\":$ms,\"session_timeout_ms\":3000}"
done

# The JSON array and the table.
table() { awk -F'\t' '{ for (i = 1; i <= NF; i++) printf "%-12s ", $i; print "" }'; }
{ echo "["; sed '$!s/$/,/' "$results.lines"; echo "]"; } > "$results"
echo "results: $results"
echo
printf 'jobs\tstartup_ms\tfirst_run\tsettled\treaped\tp99_start\tlate_p50\tlate_p99\tlate_max\tthreads\trss_kb\tcpu_us/item\n' | table
grep '"scenario":"footprint"' "$results.lines" | jq -r '.result | [.jobs, (.startup_ms|round), (.first_run_ms|round),
  (if .settle_ms >= 0 then (.settle_ms|round) else "-" end),
  (if .reaped_ms >= 0 then (.reaped_ms|round) else "-" end),
  (if .lateness_after_start_ms then (.lateness_after_start_ms.p99*100|round/100) else "-" end),
  (if .lateness_ms then (.lateness_ms.p50*100|round/100) else "-" end), (if .lateness_ms then (.lateness_ms.p99*100|round/100) else "-" end), (if .lateness_ms then (.lateness_ms.max*100|round/100) else "-" end),
  "\(.idle.threads)/\(.load.threads)", "\(.idle.rss_kb)/\(.load.rss_kb)", (.cpu_us_per_item|round)] | @tsv' |
  table
echo
printf 'instances\titems\tper_instance\tfailover\tpackets\titem_runs\tper_item_run\n' | table
grep '"scenario":"packets"' "$results.lines" | jq -r '[.instances, .items, .items_per_instance, .failover, .packets, .item_runs, .packets_per_item_run] | @tsv' | table
echo
if grep -q '"scenario":"resharding"' "$results.lines"; then
  grep '"scenario":"resharding"' "$results.lines" | jq -r '"resharding: \(.result.reshard_ms|round) ms from the joiner'"'"'s Schedule() to its first item"'
fi
if grep -q '"scenario":"failover"' "$results.lines"; then
  grep '"scenario":"failover"' "$results.lines" | jq -s -r 'map(.takeover_ms) | sort | "failover takeover (3,000 ms session timeout): median \(.[(length/2|floor)]) ms over \(length) trials, min \(.[0]), max \(.[-1])"'
fi
exit 0
