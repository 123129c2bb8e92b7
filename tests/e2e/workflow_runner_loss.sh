#!/usr/bin/env bash
# A workflow node's runner lost around the moment its run request is written (docs/workflows.md
# "How a node runs"), on a real ZooKeeper: hosts y and z run jobA and jobB, host x runs jobB
# only (so A never runs on x, and x never coordinates: it starts after the workflow has its
# leader). A (3 items, slow) -> B (3 items, one per host). Swept over the moment x goes:
#   stopped   SIGSTOP of x while A runs, then kill -9 once B's requests are out: x never took
#             its request;
#   +N ms     kill -9 of x N ms after A's last item ended (before, while or after x takes its
#             request and runs its item).
# Each time: the instance SUCCEEDS long before maxRunTimeSeconds (300; the loss is noticed
# through the watch of /jobB/instances when x's session ends, 4 s), every item of B ran, A's
# items ran once, and no run request is left under /jobB/workflowRuns.
# Usage: workflow_runner_loss.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
e2e_start_zookeeper
start_ts=$(date +%s)
cat > "$dir/node.sh" <<'SH'
#!/bin/sh
# node.sh DIR NODE JSON: "start|end NODE ITEM INSTANCE" lines in DIR/order.log.
item=$(echo "$3" | sed -n 's/.*"shardingItem":\([0-9]*\).*/\1/p')
inst=$(echo "$3" | sed -n 's/.*"instanceId":"\([^"]*\)".*/\1/p')
echo "start $2 $item $inst" >> "$1/order.log"
[ "$2" = A ] && sleep 1
echo "end $2 $item $inst" >> "$1/order.log"
SH
job() {  # NAME: a SCRIPT job of 3 items, run on demand only
  cat <<YAML
    $1:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 3
      props:
        script.command.line: /bin/sh $dir/node.sh $dir ${1#job}
YAML
}
{ echo "elasticjob:"; echo "  jobs:"; job jobA; job jobB; } > "$dir/ab.yaml"
{ echo "elasticjob:"; echo "  jobs:"; job jobB; } > "$dir/b.yaml"
: > "$dir/order.log"
e2e_start_host y 10.5.0.2 "$dir/ab.yaml" "$url"
e2e_start_host z 10.5.0.3 "$dir/ab.yaml" "$url"
wf() { "$EJ" workflow "$@" --registry "$url"; }
cat > "$dir/ab.yaml.wf" <<'YAML'
name: ab
maxRunTimeSeconds: 300
nodes:
  - {id: A, job: jobA}
  - {id: B, job: jobB}
edges:
  - {from: A, to: B}
YAML
wf add "$dir/ab.yaml.wf" > /dev/null || fail "workflow not added"
wf run ab --wait 60 > /dev/null || fail "the first run (y and z only) did not succeed"

count() { grep -c "^$1 $2 $3\$" "$dir/order.log"; }
for offset in stopped 0 30 100 300; do
  e2e_start_host x 10.5.0.1 "$dir/b.yaml" "$url"
  xpid=${PID[x]}
  ended=$(grep -c "^end A " "$dir/order.log")
  t0=$(date +%s)
  id=$(wf run ab) || { fail "$offset: run"; continue; }
  if [[ "$offset" == stopped ]]; then
    wait_for_lines "$dir/order.log" "start A" $((ended + 1)) 30 || fail "$offset: A did not start"
    kill -STOP "$xpid"
    # B's requests are out once B starts on y or z.
    wait_for_lines "$dir/order.log" "start B" $(($(grep -c "^start B " "$dir/order.log") + 1)) 30 ||
      fail "$offset: B did not start"
  else
    wait_for_lines "$dir/order.log" "end A" $((ended + 3)) 30 || fail "$offset: A did not end"
    sleep "$(printf '0.%03d' "$offset")"  # the sweep's offset, not a wait for a condition
  fi
  kill -9 -- "-$xpid"
  end=$(wf instance "$id" --wait 60 --json)
  took=$(($(date +%s) - t0))
  status=$(echo "$end" | jq -r .status)
  [[ "$status" == SUCCEEDED ]] || fail "$offset: $id ended $status: $(echo "$end" | jq -c .)"
  ((took < 60)) || fail "$offset: $id took $took s (maxRunTimeSeconds 300)"
  for item in 0 1 2; do
    a=$(count start "A $item" "$id")
    b=$(count end "B $item" "$id")
    [[ "$a" -eq 1 ]] || fail "$offset: A item $item ran $a times in $id"
    [[ "$b" -ge 1 ]] || fail "$offset: B item $item never ended in $id"
  done
  left=$(zk_ls /e2e/jobB/workflowRuns)
  [[ "$left" == "[]" || -z "$left" ]] || fail "$offset: run requests left: $left"
  echo "$offset: $id $status in $took s, B attempts $(echo "$end" | jq '.nodes[1].attempt'), B item runs $(grep -c "^end B .* $id\$" "$dir/order.log")"
done
e2e_finish "workflow runner loss: x stopped or killed at 5 moments around B's requests ($(($(date +%s) - start_ts)) s)"
