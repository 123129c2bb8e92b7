#!/usr/bin/env bash
# Workflows end to end on a real ZooKeeper (docs/workflows.md): three `elasticjob run`
# processes share four SCRIPT jobs, and each may coordinate. A diamond (A -> B, A -> C,
# B and C -> D) runs in order with D receiving A's, B's and C's results and context keys;
# a cycle and an unknown job are refused; a failing node fails the instance and, allowed to
# fail, does not; a decision node skips the branch it does not pick; kill -9 of the
# coordinator while B runs: the instance still succeeds and D runs exactly once; SIGSTOP of
# the next coordinator past its session, then SIGCONT: fenced, each node once; a stop while
# B runs cancels B's script where it runs.
# Usage: workflows.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
e2e_start_zookeeper
start_ts=$(date +%s)
cat > "$dir/node.sh" <<'SH'
#!/bin/sh
# node.sh DIR NODE JSON: records its start and end, then its result and a context key.
dir=$1 node=$2
echo "start $node $ELASTICJOB_WORKFLOW" >> "$dir/order.log"
[ -f "$dir/slow.$node" ] && sleep "$(cat "$dir/slow.$node")"
if [ -f "$dir/fail.$node" ]; then echo "end $node failed" >> "$dir/order.log"; exit 3; fi
echo "end $node" >> "$dir/order.log"
echo "$3" > "$dir/json.$node"
echo "RESULT:res-$node"
echo "CONTEXT:key$node=\"$node\""
SH
{
  echo "elasticjob:"
  echo "  jobs:"
  for j in A B C D; do
    cat <<YAML
    job$j:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 1
      props:
        script.command.line: /bin/sh $dir/node.sh $dir $j
YAML
  done
} > "$dir/jobs.yaml"
e2e_start_host a 10.3.0.1 "$dir/jobs.yaml" "$url"
e2e_start_host b 10.3.0.2 "$dir/jobs.yaml" "$url"
e2e_start_host c 10.3.0.3 "$dir/jobs.yaml" "$url"
wf() { "$EJ" workflow "$@" --registry "$url"; }

cat > "$dir/diamond.yaml" <<'YAML'
name: diamond
nodes:
  - {id: A, job: jobA}
  - {id: B, job: jobB}
  - {id: C, job: jobC}
  - {id: D, job: jobD}
edges:
  - {from: A, to: B}
  - {from: A, to: C}
  - {from: B, to: D}
  - {from: C, to: D}
YAML
wf add "$dir/diamond.yaml" > /dev/null || fail "diamond not added"
out=$(wf run diamond --wait 30 --param '{"day":"d1"}') || fail "diamond did not succeed: $out"
line() { grep -n "^$1" "$dir/order.log" | head -1 | cut -d: -f1; }
for up in B C; do
  [[ -n "$(line "end $up")" && "$(line "end $up")" -lt "$(line "start D")" ]] ||
    fail "D started before $up ended: $(cat "$dir/order.log" | cut -c1-40)"
done
[[ "$(line "end A")" -lt "$(line "start B")" ]] || fail "B started before A ended"
grep -q '"upstream":{"A":"res-A","B":"res-B","C":"res-C"}' "$dir/json.D" ||
  fail "D's workflow argument: $(cat "$dir/json.D")"
grep "^start D" "$dir/order.log" | grep -q '"keyA":"A","keyB":"B","keyC":"C"' ||
  fail "D's ELASTICJOB_WORKFLOW lacks the context keys: $(grep '^start D' "$dir/order.log")"
grep -q '"day":"d1"' "$dir/json.D" || fail "the run's parameter is not in D's context"

# Refusals name the node.
printf 'name: loop\nnodes:\n  - {id: X, job: jobA}\n  - {id: Y, job: jobB}\nedges:\n  - {from: X, to: Y}\n  - {from: Y, to: X}\n' > "$dir/loop.yaml"
err=$(wf add "$dir/loop.yaml" 2>&1); rc=$?
[[ $rc -eq 2 && "$err" == *"a cycle"* ]] || fail "cycle: exit $rc, $err"
printf 'name: ghost\nnodes:\n  - {id: G, job: noSuchJob}\n' > "$dir/ghost.yaml"
err=$(wf add "$dir/ghost.yaml" 2>&1); rc=$?
[[ $rc -eq 1 && "$err" == *"node 'G'"* ]] || fail "unknown job: exit $rc, $err"

# A failing node fails the instance; allowed to fail, it does not.
touch "$dir/fail.B"
wf run diamond --wait 30 > "$dir/run.out"; rc=$?
[[ $rc -eq 1 ]] && grep -q "node 'B' failed" "$dir/run.out" || fail "B failing: exit $rc, $(cat "$dir/run.out")"
sed 's/  - {id: B, job: jobB}/  - {id: B, job: jobB, allowFailure: true}/' "$dir/diamond.yaml" > "$dir/allow.yaml"
wf add --replace "$dir/allow.yaml" > /dev/null || fail "replace"
wf run diamond --wait 30 > "$dir/run.out" || fail "allowFailure: $(cat "$dir/run.out")"
rm "$dir/fail.B"

# A decision node picks a branch; the other is SKIPPED.
cat > "$dir/branch.yaml" <<'YAML'
name: branch
nodes:
  - {id: A, job: jobA}
  - {id: pick, kind: decision, expression: "ctx.rows > 10"}
  - {id: big, job: jobB}
  - {id: small, job: jobC}
edges:
  - {from: A, to: pick}
  - {from: pick, to: big, when: "true"}
  - {from: pick, to: small, when: "false"}
YAML
wf add "$dir/branch.yaml" > /dev/null || fail "branch not added"
id=$(wf run branch --param '{"rows":3}') || fail "branch run"
json=$(wf instance "$id" --wait 30 --json)
states=$(echo "$json" | jq -r '[.status] + [.nodes[] | "\(.id)=\(.state)=\(.result)"] | join(" ")')
[[ "$states" == "SUCCEEDED A=SUCCEEDED=res-A pick=SUCCEEDED=false big=SKIPPED= small=SUCCEEDED=res-C" ]] ||
  fail "branch: $states"

# kill -9 of the coordinator while B runs: the instance finishes, D runs once.
echo 3 > "$dir/slow.B"
id=$(wf run diamond) || fail "run"
wait_for_lines "$dir/order.log" "\"instanceId\":\"$id\",\"name\":\"diamond\",\"node\":\"B\"" 1 30 ||
  fail "B did not start"
coordinator_of() { wf list --json | jq -r '.[] | select(.workflow == "diamond") | .coordinator'; }
coordinator=$(coordinator_of)
pid=${coordinator##*@-@}
[[ -n "$pid" ]] && kill -9 -- "-$pid" || fail "no coordinator to kill ($coordinator)"
end=$(wf instance "$id" --wait 60 --json)
echo "$end" | grep -q '"status":"SUCCEEDED"' || fail "after the kill: $end"
d_runs=$(grep -c "^start D .*\"instanceId\":\"$id\"" "$dir/order.log")
[[ "$d_runs" -eq 1 ]] || fail "D ran $d_runs times in $id"
now=$(coordinator_of)
[[ -n "$now" && "$now" != "$coordinator" ]] || fail "no new coordinator: '$now'"

# SIGSTOP of the coordinator while B runs, past its session (4 s): another host takes over;
# SIGCONT: the paused one's steps are fenced (its term node is gone), so the instance
# finishes with A, C and D run once (B twice at most: once more when the paused host was
# also B's runner, its run mark gone with its session).
echo 8 > "$dir/slow.B"
id=$(wf run diamond) || fail "run"
wait_for_lines "$dir/order.log" "\"instanceId\":\"$id\",\"name\":\"diamond\",\"node\":\"B\"" 1 30 ||
  fail "B did not start"
paused=$(coordinator_of)
ppid_=${paused##*@-@}
taken=$(cat "$dir"/[abc].log | grep -c "workflow 'diamond': coordinated here")
[[ -n "$ppid_" ]] && kill -STOP "$ppid_" || fail "no coordinator to pause ($paused)"
wait_for_lines_in "workflow 'diamond': coordinated here" $((taken + 1)) 30 "$dir/a.log" "$dir/b.log" "$dir/c.log" ||
  { kill -CONT "$ppid_"; fail "no host took over from the paused coordinator"; }
kill -CONT "$ppid_"
end=$(wf instance "$id" --wait 60 --json)
echo "$end" | grep -q '"status":"SUCCEEDED"' || fail "after the pause: $end"
for node in A C D; do
  runs=$(grep -c "^start $node .*\"instanceId\":\"$id\"" "$dir/order.log")
  [[ "$runs" -eq 1 ]] || fail "after the pause: $node ran $runs times in $id"
done
b_runs=$(grep -c "^start B .*\"instanceId\":\"$id\"" "$dir/order.log")
[[ "$b_runs" -ge 1 && "$b_runs" -le 2 ]] || fail "after the pause: B ran $b_runs times in $id"
[[ "$(coordinator_of)" != "$paused" ]] || fail "the paused coordinator $paused leads again"
rm "$dir/slow.B"

# Stop while B runs: B's script is killed where it runs, D never starts.
echo 30 > "$dir/slow.B"
id=$(wf run diamond) || fail "run"
wait_for_lines "$dir/order.log" "\"instanceId\":\"$id\",\"name\":\"diamond\",\"node\":\"B\"" 1 30 ||
  fail "B did not start"
wf stop "$id" > /dev/null || fail "stop"
stopped=$(wf instance "$id" --wait 20 --json | jq -r .status)
[[ "$stopped" == STOPPED ]] || fail "stop: $stopped"
wait_for_lines_in "workflow instance $id stopped" 1 10 "$dir/a.log" "$dir/b.log" "$dir/c.log" ||
  fail "B was not cancelled on any host"
sleep 1  # a D would start at once; give it the moment it would take
grep -q "^start D .*\"instanceId\":\"$id\"" "$dir/order.log" && fail "D started after the stop"
rm "$dir/slow.B"

echo "killed coordinator $coordinator; now $now; B starts in $id: $(grep -c "^start B .*\"instanceId\":\"$id\"" "$dir/order.log")"
e2e_finish "workflows: diamond order and results, refusals, failure, decision, coordinator kill ($(($(date +%s) - start_ts)) s)"
