#!/usr/bin/env bash
# Workflows on a real ZooKeeper (docs/workflows.md, docs/benchmarks.md): two `elasticjob run`
# hosts share a 10-node chain of SCRIPT jobs (1 item each; node k's script records the
# monotonic time it starts and the time just before it exits). Reports:
#   latency     from node k's script ending to node k+1's script starting (node k's
#               process exit, its report's multi-op, the coordinator's watch event and step,
#               the successor's trigger watch on the instance that runs it, the spawn), over
#               every edge of N back-to-back instances: p50, p95, max;
#   throughput  instances per second and nodes per second of those N instances;
#   garbage     the workflow's instances left in the registry afterwards (retention 5) and
#               any node left under the jobs' trigger/ nodes.
# Usage: workflow_bench.sh EJ_BIN ZK_SCRIPT [INSTANCES (20)]
set -uo pipefail
EJ="$1"
ZK="$2"
n="${3:-20}"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../tests/lib/follow_log.sh"
work="$(mktemp -d)"
declare -a PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 -- "-$p" 2>/dev/null; done
  bash "$ZK" stop "$work/zk"
  rm -rf "$work"
}
trap cleanup EXIT
read -r port _ < <(bash "$ZK" start "$work/zk") || { echo "workflow_bench: cannot start ZooKeeper"; exit 1; }
url="zookeeper://127.0.0.1:$port/wfbench?sessionTimeoutMs=4000"
cat > "$work/node.sh" <<'SH'
#!/bin/sh
# node.sh DIR K: appends "start K NS" and "end K NS" (wall clock, ns) to DIR/times.
echo "start $2 $(date +%s%N)" >> "$1/times"
echo "end $2 $(date +%s%N)" >> "$1/times"
SH
{
  echo "elasticjob:"
  echo "  jobs:"
  for k in $(seq 0 9); do
    cat <<YAML
    chain$k:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 1
      props:
        script.command.line: /bin/sh $work/node.sh $work $k
YAML
  done
} > "$work/jobs.yaml"
for h in 1 2; do
  : > "$work/$h.log"
  ELASTICJOB_PREFERRED_NETWORK_IP="10.9.0.$h" setsid "$EJ" run "$work/jobs.yaml" --registry "$url" \
    > "$work/$h.log" 2>&1 &
  PIDS+=($!)
  wait_for_lines "$work/$h.log" "scheduled" 10 30 || { echo "host $h did not start"; exit 1; }
done
{
  echo "name: chain"
  echo "retention: 5"
  echo "nodes:"
  for k in $(seq 0 9); do echo "  - {id: n$k, job: chain$k}"; done
  echo "edges:"
  for k in $(seq 0 8); do echo "  - {from: n$k, to: n$((k + 1))}"; done
} > "$work/chain.yaml"
"$EJ" workflow add "$work/chain.yaml" --registry "$url" > /dev/null || exit 1
"$EJ" workflow run chain --wait 60 --registry "$url" > /dev/null || { echo "warm-up failed"; exit 1; }
: > "$work/times"
t0=$(date +%s%N)
for i in $(seq 1 "$n"); do
  "$EJ" workflow run chain --wait 60 --registry "$url" > "$work/run.out" || {
    echo "instance $i failed: $(cat "$work/run.out")"
    "$EJ" workflow instance "$(head -1 "$work/run.out")" --registry "$url"
    exit 1
  }
done
t1=$(date +%s%N)
python3 - "$work/times" "$n" "$t0" "$t1" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1])]
n, t0, t1 = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
gaps, last_end = [], None
for kind, k, ns in lines:
    k, ns = int(k), int(ns)
    if kind == "start" and k > 0 and last_end is not None:
        gaps.append((ns - last_end) / 1e6)
    if kind == "end":
        last_end = ns
gaps.sort()
pick = lambda q: gaps[min(len(gaps) - 1, int(q * len(gaps)))]
secs = (t1 - t0) / 1e9
print(f"latency (node end -> successor start, {len(gaps)} edges): p50 {pick(0.5):.1f} ms, "
      f"p95 {pick(0.95):.1f} ms, max {gaps[-1]:.1f} ms")
print(f"throughput: {n} instances of 10 nodes in {secs:.1f} s, one after another "
      f"({n / secs:.2f} instances/s, {10 * n / secs:.1f} nodes/s, each `workflow run --wait` "
      f"a new process and session)")
PY
left=$("$EJ" workflow history chain --limit 1000 --json --registry "$url" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
source "$here/../tests/lib/zk_cli.sh"
triggers=0
for k in $(seq 0 9); do
  c=$(zk_ls /wfbench/chain$k/trigger)
  [[ "$c" == "[]" || -z "$c" ]] || triggers=$((triggers + 1))
done
runs=$(zk_ls "/wfbench/.workflows/chain/instances")
echo "garbage: $left instances kept (retention 5: $runs); jobs with trigger nodes left: $triggers"
