#!/usr/bin/env bash
# The README's walk-through, run as written: every command of its `sh` blocks between the
# walkthrough markers, in order (with /tmp/ej-demo replaced by a temp dir, and the binary
# under test as $EJ), with checks between them that what the README says happens does: the
# items split over two copies, the survivor of a kill -9 takes them all, trigger --param,
# disable/enable, config set reschedules, an agent starts an added job; and the outputs the
# README shows are what its commands print (the first `job sharding`, typed right after the
# copies start, and `job list`). The test fails if the README's commands and the ones run
# here differ.
# Usage: readme_walkthrough.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
source "$(dirname "$0")/../lib/ops.sh"
EJ="$(cd "$(dirname "$EJ")" && pwd)/$(basename "$EJ")"
root="$(cd "$(dirname "$ZK")/.." && pwd)"
cd "$root"
unset ELASTICJOB_REGISTRY
ran=()
# step COMMAND: runs one README command (the EJ= line only sets nothing: $EJ is the binary
# under test) and records it for the comparison with the README.
step() {
  ran+=("$1")
  [[ "$1" == EJ=* ]] && return 0
  eval "${1//\/tmp\/ej-demo/$dir}"
}
# step_out COMMAND: as step, for a command whose output the README shows: keeps its output in
# `out` (and prints it) and its exit code in `rc`.
step_out() {
  ran+=("$1")
  out=$(eval "${1//\/tmp\/ej-demo/$dir}")
  rc=$?
  printf '%s\n' "$out"
}
# readme_output N: the README's Nth ```text block of the walk-through.
readme_output() {
  awk -v n="$1" '/<!-- walkthrough:start -->/{on=1} /<!-- walkthrough:end -->/{on=0}
    on && /^```text/{k++; if (k == n) {show=1; next}} show && /^```/{show=0} show' README.md
}
# `job sharding`'s table with its instance ids and IPs as "id" and "ip" (they differ from
# machine to machine; the status of an item may be PENDING or RUNNING).
sharding_shape() {
  awk 'NR == 1 {print; next}
    {print $1, $2, ($3 ~ /^[0-9.]+@-@[0-9]+$/ ? "id" : $3), ($4 ~ /^[0-9.]+$/ ? "ip" : $4), $5}'
}
instances_of() {
  "$EJ" job sharding "$1" --json 2> /dev/null |
    python3 -c 'import json,sys; print(len({r["instance"] for r in json.load(sys.stdin) if r["instance"]}))'
}
instances_are() { [[ "$(instances_of "$1")" == "$2" ]]; }
status_is() {
  [[ "$("$EJ" job list --json | python3 -c 'import json,sys; print({j["job"]: j["status"] for j in json.load(sys.stdin)}["orderSync"])')" == "$1" ]]
}

step 'EJ=$PWD/build/release/src/cli/elasticjob'
step 'scripts/zk-server.sh start /tmp/ej-demo/zk'
step 'export ELASTICJOB_REGISTRY=zookeeper://127.0.0.1:$(cat /tmp/ej-demo/zk/port)/quickstart'
step '$EJ run examples/quickstart.yaml > /tmp/ej-demo/1.log 2>&1 &'
step 'FIRST=$!'
step '$EJ run examples/quickstart.yaml > /tmp/ej-demo/2.log 2>&1 &'
SECOND=$!
# Right away, as a reader would type it: --wait bridges the copies' start.
step_out '$EJ job sharding orderSync --wait'
((rc == 0)) || fail "job sharding --wait right after the start exited $rc"
[[ "$(sharding_shape <<< "$out" | tr -s ' ' | cut -d' ' -f1,3-)" == "$(readme_output 1 | sharding_shape | tr -s ' ' | cut -d' ' -f1,3-)" ]] ||
  fail "job sharding printed
$out
where the README shows
$(readme_output 1)"
# The background command creates its log: wait for the file before following it.
poll_until 10 test -e "$dir/2.log" || fail "no log from the second copy"
wait_for_lines "$dir/2.log" "scheduled" 1 20 || fail "the second copy did not start: $(cat "$dir/2.log")"
grep -q "^elasticjob: registry zookeeper://127.0.0.1:$(cat "$dir/zk/port")/quickstart (from ELASTICJOB_REGISTRY)" "$dir/2.log" ||
  fail "run did not say it uses ELASTICJOB_REGISTRY: $(head -3 "$dir/2.log")"
poll_until 20 instances_are orderSync 2 || fail "the items did not split: $("$EJ" job sharding orderSync)"
step 'kill -9 $FIRST'
poll_until 30 instances_are orderSync 1 || fail "the survivor did not take the items: $("$EJ" job sharding orderSync)"
step '$EJ job sharding orderSync'
mark=$(($(wc -l < "$dir/2.log") + 1))
for item in 0 1 2; do
  wait_for_lines "$dir/2.log" "item=$item instance" 1 20 || fail "the survivor did not run item $item"
done
step '$EJ job list'
step '$EJ job trigger orderSync --param hello'
wait_for_lines "$dir/2.log" '"jobParameter":"hello"' 3 20 || fail "the trigger's parameter did not arrive"
step '$EJ job disable orderSync'
poll_until 10 status_is DISABLED || fail "the job is not DISABLED: $("$EJ" job list)"
step_out '$EJ job list'
[[ "$out" == "$(readme_output 2)" ]] || fail "job list printed
$out
where the README shows
$(readme_output 2)"
step '$EJ job enable orderSync'
poll_until 10 status_is OK || fail "the job is not OK again: $("$EJ" job list)"
step '$EJ job config get orderSync > /tmp/ej-demo/orderSync.yaml'
step "sed -i 's#^cron: .*#cron: 0/10 * * * * ?#' /tmp/ej-demo/orderSync.yaml"
step '$EJ job config set orderSync /tmp/ej-demo/orderSync.yaml'
wait_for_lines "$dir/2.log" "rescheduled to cron '0/10 * * * * ?'" 1 20 || fail "the copy was not rescheduled"
step '$EJ agent > /tmp/ej-demo/agent.log 2>&1 &'
poll_until 10 test -e "$dir/agent.log" || fail "no log from the agent"
wait_for_lines "$dir/agent.log" "agent: following" 1 20 || fail "the agent did not start: $(cat "$dir/agent.log")"
step '$EJ job add examples/agent-job.yaml'
wait_for_lines "$dir/agent.log" "job 'reportJob' scheduled" 1 10 || fail "the agent did not start reportJob"
wait_for_lines "$dir/agent.log" "building report" 2 20 || fail "reportJob's items did not run"
step '$EJ job list'
step 'tail -3 /tmp/ej-demo/agent.log'
step 'kill $(jobs -p)'
poll_until 20 eval '! kill -0 $SECOND 2> /dev/null' || fail "the copy did not stop"
step 'scripts/zk-server.sh stop /tmp/ej-demo/zk'

# The README must show exactly these commands, in this order.
readme=$(awk '/<!-- walkthrough:start -->/{on=1} /<!-- walkthrough:end -->/{on=0}
  on && /^```sh/{code=1; next} on && /^```/{code=0} on && code && !/^#/ && NF' README.md)
here=$(printf '%s\n' "${ran[@]}")
[[ "$readme" == "$here" ]] || fail "README walk-through and this test differ:
$(diff <(echo "$readme") <(echo "$here"))"

e2e_on_failure() { for f in 1 2 agent; do echo "--- $f"; grep -v "outcome=SUCCESS\|^syncing\|^building" "$dir/$f.log" | tail -20; done; }
e2e_finish "the README walk-through works as written"
