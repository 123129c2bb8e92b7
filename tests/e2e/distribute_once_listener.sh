#!/usr/bin/env bash
# End to end on a real ZooKeeper: three `elasticjob run` processes share a job of 6 items
# with two listeners, DISTRIBUTE_ONCE_LOG (once per execution across the cluster) and LOG
# (on every instance). Three times, an operator triggers every instance; each execution
# must give exactly one before_last_started and one after_last_completed line across the
# three logs, one LOG before/after per instance, every item once, and leave no guarantee
# nodes behind.
# Usage: distribute_once_listener.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
e2e_start_zookeeper
cat > "$dir/jobs.yaml" <<'YAML'
elasticjob:
  jobs:
    oncejob:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 6
      jobListenerTypes: DISTRIBUTE_ONCE_LOG, LOG
      props:
        script.command.line: /bin/true
YAML
for host in 1 2 3; do e2e_start_host "$host" "10.5.0.$host" "$dir/jobs.yaml" "$url"; done
logs=("$dir/1.log" "$dir/2.log" "$dir/3.log")
count() { cat "${logs[@]}" | grep -c -- "$1"; }

# The assignment must be settled (every instance owns items) before an execution, or the
# set of started items cannot complete and the listener waits for its timeout (ElasticJob
# behaves the same). Bounded wait on zkCli.
ids() { for host in 1 2 3; do echo "10.5.0.$host@-@${PID[$host]}"; done; }
deadline=$((SECONDS + 30))
while ((SECONDS < deadline)); do
  owners=""
  for i in 0 1 2 3 4 5; do owners+="$(zk_get /e2e/oncejob/sharding/$i/instance) "; done
  settled=1
  for id in $(ids); do [[ "$owners" == *"$id "* ]] || settled=0; done
  [[ $settled == 1 && "$(zk_ls /e2e/oncejob/leader/sharding)" == "[]" ]] && break
  sleep 1
done
[[ $settled == 1 ]] || fail "items not shared by the three hosts: $owners"

zk create /e2e/oncejob/trigger > /dev/null  # zkCli creates no parents
for round in 1 2 3; do
  for id in $(ids); do zk create "/e2e/oncejob/trigger/$id" > /dev/null; done
  # LOG's after-hook runs last on each instance (listeners run in the configured order).
  wait_for_lines_in "listener=LOG phase=after" $((3 * round)) 60 "${logs[@]}" ||
    fail "round $round: not every instance finished"
  wait_for_lines_in "phase=after_last_completed" "$round" 10 "${logs[@]}" ||
    fail "round $round: no after_last_completed"
  [[ "$(count phase=before_last_started)" == "$round" ]] ||
    fail "round $round: $(count phase=before_last_started) before_last_started lines, expected $round"
  [[ "$(count phase=after_last_completed)" == "$round" ]] ||
    fail "round $round: $(count phase=after_last_completed) after_last_completed lines, expected $round"
  [[ "$(count "listener=LOG phase=before")" == $((3 * round)) ]] ||
    fail "round $round: $(count "listener=LOG phase=before") LOG before lines, expected $((3 * round))"
  [[ "$(count outcome=SUCCESS)" == $((6 * round)) ]] ||
    fail "round $round: $(count outcome=SUCCESS) item runs, expected $((6 * round))"
done
# The once-hooks carry the items of the instance that completed the set.
grep -h "phase=before_last_started" "${logs[@]}" | grep -q "items=[0-9]" ||
  fail "before_last_started without items"
guarantee=$(zk_ls /e2e/oncejob/guarantee)
echo "$guarantee" | tr -d '[] ' | tr ',' '\n' | grep -qx 'started\|completed' &&
  fail "guarantee nodes left: $guarantee"
e2e_on_failure() { for host in 1 2 3; do echo "--- host $host"; cat "$dir/$host.log"; done; }
e2e_finish "a distribute-once listener ran once per execution (3 executions, 3 instances); LOG ran on every instance; guarantee nodes cleared ($guarantee)"
