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
#               any run request left under the jobs' workflowRuns/ nodes.
# With CONCURRENT > 0, a third host, and then CONCURRENT instances of a 5-node DAG (n0 -> n1,
# n0 -> n2, n1 and n2 -> n3, n3 -> n4; overlap parallel; SCRIPT jobs of 3 items, one on each
# host) requested at once (`workflow run --count`). Reports:
#   total       from the request to the last instance's end; instances/s, nodes/s;
#   latency     from a node's last item ending to its successor's first item starting, over
#               every edge of every instance: p50, p99, max;
#   requests    ZooKeeper's zk_packets_received (mntr) over the run, per node and per instance;
#   once        every (instance, node, item) ran exactly once (from the scripts' own log), and
#               every instance SUCCEEDED.
# INSTANCES 0 skips the chain.
# Usage: workflow_bench.sh EJ_BIN ZK_SCRIPT [INSTANCES (20)] [CONCURRENT (0)]
set -uo pipefail
EJ="$1"
ZK="$2"
n="${3:-20}"
concurrent="${4:-0}"
hosts=2
((concurrent > 0)) && hosts=3
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../tests/lib/follow_log.sh"
source "$here/lib/zk_mntr.sh"
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
cat > "$work/dag.sh" <<'SH'
#!/bin/sh
# dag.sh DIR JSON: appends "START_NS END_NS JSON" (the sharding context, one line) to DIR/dag.
s=$(date +%s%N)
echo "$s $(date +%s%N) $2" >> "$1/dag"
SH
script_job() {  # NAME ITEMS COMMAND: a SCRIPT job run on demand only
  cat <<YAML
    $1:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: $2
      props:
        script.command.line: $3
YAML
}
{
  echo "elasticjob:"
  echo "  jobs:"
  for k in $(seq 0 9); do script_job "chain$k" 1 "/bin/sh $work/node.sh $work $k"; done
  for k in $(seq 0 4); do script_job "dag$k" 3 "/bin/sh $work/dag.sh $work"; done
} > "$work/jobs.yaml"
for h in $(seq 1 "$hosts"); do
  : > "$work/$h.log"
  ELASTICJOB_PREFERRED_NETWORK_IP="10.9.0.$h" setsid "$EJ" run "$work/jobs.yaml" --registry "$url" \
    > "$work/$h.log" 2>&1 &
  PIDS+=($!)
  wait_for_lines "$work/$h.log" "scheduled" 15 30 || { echo "host $h did not start"; exit 1; }
done
chain() {
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
requests=0
for k in $(seq 0 9); do
  c=$(zk_ls /wfbench/chain$k/workflowRuns)
  [[ "$c" == "[]" || -z "$c" ]] || requests=$((requests + 1))
done
runs=$(zk_ls "/wfbench/.workflows/chain/instances")
echo "garbage: $left instances kept (retention 5: $runs); jobs with run requests left: $requests"
}

dag() {
  {
    echo "name: dag"
    echo "overlap: parallel"
    echo "retention: $((concurrent + 1))"
    echo "nodes:"
    for k in $(seq 0 4); do echo "  - {id: n$k, job: dag$k}"; done
    echo "edges:"
    echo "  - {from: n0, to: n1}"
    echo "  - {from: n0, to: n2}"
    echo "  - {from: n1, to: n3}"
    echo "  - {from: n2, to: n3}"
    echo "  - {from: n3, to: n4}"
  } > "$work/dag.yaml"
  "$EJ" workflow add "$work/dag.yaml" --registry "$url" > /dev/null || exit 1
  "$EJ" workflow run dag --wait 60 --registry "$url" > /dev/null || { echo "dag warm-up failed"; exit 1; }
  : > "$work/dag"
  local p0 p1 t0 t1
  p0=$(zk_packets_received "$port")
  t0=$(date +%s%N)
  "$EJ" workflow run dag --count "$concurrent" --wait 1800 --registry "$url" > "$work/dag.out"
  local rc=$?
  t1=$(date +%s%N)
  p1=$(zk_packets_received "$port")
  python3 - "$work/dag" "$work/dag.out" "$concurrent" "$t0" "$t1" "$p0" "$p1" "$rc" <<'PY'
import collections, json, sys
dag, out, n, t0, t1, p0, p1, rc = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
ends = [l.split() for l in open(out) if l.strip()]
ok = sum(1 for e in ends if len(e) == 2 and e[1] == "SUCCEEDED")
runs = collections.Counter()
first_start, last_end = {}, {}
for line in open(dag):
    s, e, ctx = line.split(" ", 2)
    c = json.loads(ctx)
    w = c["workflow"]
    key = (w["instanceId"], w["node"])
    runs[key + (c["shardingItem"],)] += 1
    first_start[key] = min(first_start.get(key, 1 << 62), int(s))
    last_end[key] = max(last_end.get(key, 0), int(e))
instances = {k[0] for k in first_start}
twice = [k for k, v in runs.items() if v != 1]
expected = n * 5 * 3
edges = [("n0", "n1"), ("n0", "n2"), ("n1", "n3"), ("n2", "n3"), ("n3", "n4")]
gaps = sorted((first_start[(i, b)] - last_end[(i, a)]) / 1e6 for i in instances
              for a, b in edges if (i, a) in last_end and (i, b) in first_start) or [0.0]
pick = lambda q: gaps[min(len(gaps) - 1, int(q * len(gaps)))]
secs = (t1 - t0) / 1e9
print(f"concurrent: {n} instances of a 5-node DAG (3 items a node, 3 hosts) requested at once, "
      f"all ended in {secs:.1f} s ({n / secs:.1f} instances/s, {5 * n / secs:.1f} nodes/s); "
      f"{ok} SUCCEEDED (exit {rc})")
print(f"latency (a node's last item end -> a successor's first item start, {len(gaps)} edges): "
      f"p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {gaps[-1]:.1f} ms")
packets = p1 - p0
print(f"registry requests (zk_packets_received): {packets}, {packets / (5 * n):.1f} per node, "
      f"{packets / n:.1f} per instance (the {n} requests, coordination, runs and reports)")
print(f"once: {len(runs)} (instance, node, item) runs of {expected} expected, "
      f"{len(twice)} ran other than once" + (f" (e.g. {twice[0]})" if twice else ""))
if ok != n or len(runs) != expected or twice:
    sys.exit(1)
PY
}

status=0
if ((n > 0)); then chain || status=1; fi
if ((concurrent > 0)); then dag || status=1; fi
exit "$status"
