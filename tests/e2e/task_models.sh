#!/usr/bin/env bash
# The task models end to end (docs/task-models.md) on a real ZooKeeper, three instances each:
# a broadcast job one-off and on a cron (PreProcess and PostProcess once on the leader,
# Process once on every instance, one run id); MapReduce summing 1..N in two map levels
# (every sub-task once, the reduce sees all); a throwing sub-task retried, then reported; a
# payload over the limit refused with a clear error; a worker killed (-9) mid-run, its
# sub-tasks finished elsewhere and the result still exact; the coordinator killed (-9), the
# next trigger run from the root on the new leader, naming the lost run; a worker stopped
# (SIGSTOP) given up on after task.rpc.deadline.ms, its sub-tasks finished elsewhere.
# Usage: task_models.sh path/to/examples-dir path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
BIN="$1"
e2e_start_zookeeper
n=0
# start NAME PROGRAM ARGS...: runs an example as its own process group (log $dir/NAME.log)
# and waits until its job is scheduled.
start() {
  local name="$1" prog="$2"
  shift 2
  : > "$dir/$name.log"
  setsid "$BIN/$prog" --registry "$url" "$@" > "$dir/$name.log" 2>&1 &
  PID[$name]=$!
  disown "$!"
  wait_for_lines "$dir/$name.log" "scheduled" 1 || fail "$name did not start: $(tail -3 "$dir/$name.log")"
}
stop() { for p in "$@"; do kill -- "-${PID[$p]}" 2>/dev/null; unset "PID[$p]"; done; }
count() { grep -c -F "$2" "$dir/$1.log"; }

# 1. Broadcast, one-off: the first instance leads.
start b1 broadcast_hello --job bcast
start b2 broadcast_hello --job bcast
start b3 broadcast_hello --job bcast --execute-when-workers 3
wait_for_lines "$dir/b1.log" "POST " 1 || fail "broadcast: no PostProcess: $(tail -5 "$dir/b1.log")"
grep -q -F "POST results=3 ok=3" "$dir/b1.log" || fail "broadcast: $(grep POST "$dir/b1.log")"
run=$(grep -o 'run=[^ ]*' "$dir/b1.log" | head -1)
for b in b1 b2 b3; do
  [[ $(count $b "PROCESS") == 1 ]] || fail "broadcast: $b processed $(count $b PROCESS) times"
  grep -q -F "$run" "$dir/$b.log" || fail "broadcast: $b did not run $run"
done
[[ $(cat "$dir"/b?.log | grep -c "^PRE ") == 1 ]] || fail "broadcast: PreProcess not once"
stop b1 b2 b3

# 2. Broadcast on a cron: two runs, each on all three, PostProcess once per run.
start c1 broadcast_hello --job bcron --cron "0/2 * * * * ?"
start c2 broadcast_hello --job bcron --cron "0/2 * * * * ?"
start c3 broadcast_hello --job bcron --cron "0/2 * * * * ?"
wait_for_lines_in "POST results=3 ok=3" 2 60 "$dir/c1.log" "$dir/c2.log" "$dir/c3.log" ||
  fail "broadcast cron: fewer than two full runs: $(grep -h POST "$dir"/c?.log)"
leader=$(grep -l "POST results=3" "$dir"/c?.log | head -1)
for run in $(grep "POST results=3" -B4 "$leader" | grep -o 'run=[^ ]*' | sort -u | head -2); do
  [[ $(cat "$dir"/c?.log | grep -c -F "$run") == 3 ]] || fail "broadcast cron: $run not on 3"
done
stop c1 c2 c3

# 3. MapReduce: 1..20000 in batches of 1000, two levels, three instances.
start m1 mapreduce_sum --job sum --subtasks 20000
start m2 mapreduce_sum --job sum --subtasks 20000
start m3 mapreduce_sum --job sum --subtasks 20000 --execute-when-workers 3
wait_for_lines "$dir/m1.log" "created=" 1 || fail "mapreduce: no result: $(tail -5 "$dir/m1.log")"
grep -q -F "RESULT 200010000 subtasks=20000 " "$dir/m1.log" || fail "mapreduce: $(grep RESULT "$dir/m1.log")"
grep -q "created=20020 succeeded=20020 failed=0 retried=0" "$dir/m1.log" ||
  fail "mapreduce counts: $(grep created= "$dir/m1.log")"
for m in m2 m3; do
  [[ $(count $m progress) -ge 1 ]] || fail "mapreduce: $m ran no sub-task"
done
stop m1 m2 m3

# 4. A throwing sub-task: every 7th number fails its first attempt (retried, then fine);
#    number 500 always fails (3 attempts, then reported to Reduce).
start f1 mapreduce_sum --job flaky --subtasks 2000 --flaky-every 7 --always-fail 500 \
  --prop task.max.attempts=3
start f2 mapreduce_sum --job flaky --subtasks 2000 --flaky-every 7 --always-fail 500 \
  --prop task.max.attempts=3 --execute-when-workers 2
wait_for_lines "$dir/f1.log" "created=" 1 || fail "flaky: no result: $(tail -5 "$dir/f1.log")"
grep -q -F "RESULT $((2001000 - 500)) subtasks=1999 " "$dir/f1.log" || fail "flaky: $(grep RESULT "$dir/f1.log")"
grep -q -F "FAILED 1 first=threw: number 500 always fails" "$dir/f1.log" ||
  fail "flaky: failure not reported: $(grep FAILED "$dir/f1.log")"
grep -q "failed=1 retried=287" "$dir/f1.log" || fail "flaky counts: $(grep created= "$dir/f1.log")"
stop f1 f2

# 5. A payload over task.max.payload.bytes: the run fails, naming the limit.
start o1 mapreduce_sum --job over --subtasks 10 --oversize --execute-when-workers 1
wait_for_lines "$dir/o1.log" "RUN FAILED" 1 || fail "oversize: no failure: $(tail -5 "$dir/o1.log")"
grep -q "RUN FAILED.*sub-task 1: payload of 1048577 bytes is over task.max.payload.bytes (1048576)" \
  "$dir/o1.log" || fail "oversize: $(grep 'RUN FAILED' "$dir/o1.log")"
stop o1

# 6. kill -9 of a worker mid-run: its sub-tasks finish on the others, the sum is exact.
start k1 mapreduce_sum --job kill --subtasks 6000 --slow-us 1000 --prop task.batch.size=50
start k2 mapreduce_sum --job kill --subtasks 6000 --slow-us 1000 --prop task.batch.size=50
start k3 mapreduce_sum --job kill --subtasks 6000 --slow-us 1000 --prop task.batch.size=50 \
  --execute-when-workers 3
wait_for_lines "$dir/k2.log" "progress 1000" 1 || fail "kill: k2 did no work: $(tail -3 "$dir/k2.log")"
kill -9 -- "-${PID[k2]}"
unset "PID[k2]"
wait_for_lines "$dir/k1.log" "RESULT" 1 90 || fail "kill: no result: $(tail -5 "$dir/k1.log")"
grep -q -F "RESULT 18003000 subtasks=6000 " "$dir/k1.log" || fail "kill: $(grep RESULT "$dir/k1.log")"
grep -q "failed an RPC" "$dir/k1.log" || fail "kill: the lost worker was not noticed"
stop k1 k3

# 7. kill -9 of the coordinator (the local store dies with it): once its session has expired,
#    an operator trigger runs the job from the root on the new leader, which names the lost
#    run; the result is exact.
start l1 mapreduce_sum --job loss --subtasks 6000 --slow-us 1000 --prop task.batch.size=50
start l2 mapreduce_sum --job loss --subtasks 6000 --slow-us 1000 --prop task.batch.size=50
start l3 mapreduce_sum --job loss --subtasks 6000 --slow-us 1000 --prop task.batch.size=50 \
  --execute-when-workers 3
wait_for_lines "$dir/l2.log" "progress 1000" 1 || fail "loss: l2 did no work: $(tail -3 "$dir/l2.log")"
kill -9 -- "-${PID[l1]}"
unset "PID[l1]"
left=""
for _ in $(seq 1 60); do  # the session expires in 4 s; at most 30 s
  left=$(zk_ls /e2e/loss/instances)
  [[ "$left" =~ ^\[[^,]*,[^,]*\]$ ]] && break
  sleep 0.5
done
[[ "$left" =~ ^\[[^,]*,[^,]*\]$ ]] || fail "loss: instances after the kill: $left"
for id in $(echo "$left" | tr -d '[] ' | tr ',' ' '); do zk create "/e2e/loss/trigger/$id" > /dev/null; done
wait_for_lines_in "RESULT" 1 60 "$dir/l2.log" "$dir/l3.log" || fail "loss: no result after the trigger"
grep -h "RESULT" "$dir/l2.log" "$dir/l3.log" | grep -q -F "RESULT 18003000 subtasks=6000 " ||
  fail "loss: $(grep -h RESULT "$dir/l2.log" "$dir/l3.log")"
grep -h "was lost with its coordinator" "$dir/l2.log" "$dir/l3.log" | grep -q "starts from the root" ||
  fail "loss: the lost run was not named"
stop l2 l3

# 8. A worker that stops answering (SIGSTOP): given up on after task.rpc.deadline.ms (1.5 s),
#    before its session expires (4 s), and its sub-tasks finish on the others; exact result.
start s1 mapreduce_sum --job stopped --subtasks 6000 --slow-us 1000 --prop task.batch.size=20 \
  --prop task.rpc.deadline.ms=1500
start s2 mapreduce_sum --job stopped --subtasks 6000 --slow-us 1000 --prop task.batch.size=20 \
  --prop task.rpc.deadline.ms=1500
start s3 mapreduce_sum --job stopped --subtasks 6000 --slow-us 1000 --prop task.batch.size=20 \
  --prop task.rpc.deadline.ms=1500 --execute-when-workers 3
wait_for_lines "$dir/s2.log" "progress 1000" 1 || fail "stop: s2 did no work: $(tail -3 "$dir/s2.log")"
kill -STOP -- "-${PID[s2]}"
wait_for_lines "$dir/s1.log" "RESULT" 1 90 || fail "stop: no result: $(tail -5 "$dir/s1.log")"
grep -q -F "RESULT 18003000 subtasks=6000 " "$dir/s1.log" || fail "stop: $(grep RESULT "$dir/s1.log")"
grep -q "did not answer within task.rpc.deadline.ms (1500 ms); its sub-tasks go to the other" \
  "$dir/s1.log" || fail "stop: the stopped worker was not given up on by the deadline"
kill -CONT -- "-${PID[s2]}"
stop s1 s2 s3

e2e_on_failure() { for f in "$dir"/*.log; do echo "== $f"; tail -n 15 "$f"; done; }
e2e_finish "task models: broadcast (one-off, cron), mapreduce, retries, oversize, kill -9 of a worker and of the coordinator, a stopped worker past the RPC deadline"
