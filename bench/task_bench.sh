#!/usr/bin/env bash
# The task models' benchmark (docs/benchmarks.md, docs/task-models.md) on a private ZooKeeper:
#   mapreduce  three local mapreduce_sum instances sum 1..N through N no-op sub-tasks (two map
#              levels, 1,000 numbers per first-level sub-task): the leader's run time (root
#              task to the end of Reduce), sub-tasks per second, the coordinator's peak RSS
#              (VmHWM) and the workers';
#   broadcast  three broadcast_hello instances on an every-second cron: each run's time from
#              the start of PreProcess to the end of PostProcess (the coordinator's run line).
# Usage: task_bench.sh EXAMPLES_DIR ZK_SCRIPT [N (1000000)]
#   TASK_BENCH_ARGS="--prop task.batch.size=5000": more mapreduce_sum flags.
set -uo pipefail
BIN="$1"
ZK="$2"
N="${3:-1000000}"
dir="$(mktemp -d)"
declare -A PID
cleanup() {
  for p in "${PID[@]}"; do kill -9 -- "-$p" 2>/dev/null; done
  bash "$ZK" stop "$dir/zk"
  rm -rf "$dir"
}
trap cleanup EXIT
source "$(dirname "$0")/../tests/lib/follow_log.sh"
read -r port _ < <(bash "$ZK" start "$dir/zk") || { echo "cannot start ZooKeeper"; exit 1; }
url="zookeeper://127.0.0.1:$port/bench"
start() {
  local name="$1" prog="$2"
  shift 2
  : > "$dir/$name.log"
  setsid "$BIN/$prog" --registry "$url" "$@" > "$dir/$name.log" 2>&1 &
  PID[$name]=$!
  wait_for_lines "$dir/$name.log" "scheduled" 1 || { echo "$name did not start"; exit 1; }
}
hwm_mb() { awk '/VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }

start m1 mapreduce_sum --job sum --subtasks "$N" ${TASK_BENCH_ARGS:-}  # first: the leader, the coordinator
start m2 mapreduce_sum --job sum --subtasks "$N" ${TASK_BENCH_ARGS:-}
start m3 mapreduce_sum --job sum --subtasks "$N" ${TASK_BENCH_ARGS:-} --execute-when-workers 3
wait_for_lines "$dir/m1.log" "created=" 1 600 || { echo "no result: $(tail -3 "$dir/m1.log")"; exit 1; }
result=$(grep RESULT "$dir/m1.log")
ms=$(sed 's/.*ms=//' <<< "$result")
echo "mapreduce: $result"
echo "mapreduce: $N sub-tasks in $ms ms = $((N * 1000 / (ms > 0 ? ms : 1))) sub-tasks/s"
echo "mapreduce: coordinator peak RSS $(hwm_mb "${PID[m1]}") MB; workers $(hwm_mb "${PID[m2]}") MB, $(hwm_mb "${PID[m3]}") MB"
grep -h "created=" "$dir/m1.log"
for m in m1 m2 m3; do kill -- "-${PID[$m]}"; unset "PID[$m]"; done

start b1 broadcast_hello --job hello --cron "* * * * * ?"
start b2 broadcast_hello --job hello --cron "* * * * * ?"
start b3 broadcast_hello --job hello --cron "* * * * * ?"
wait_for_lines "$dir/b1.log" "done in" 10 60 || { echo "broadcast: fewer than 10 runs"; exit 1; }
grep -o "done in [0-9]* ms" "$dir/b1.log" | awk '{print $3}' | sort -n |
  awk '{a[NR]=$1} END {printf "broadcast to 3: %d runs, PreProcess..PostProcess p50 %d ms, max %d ms\n", NR, a[int((NR+1)/2)], a[NR]}'
