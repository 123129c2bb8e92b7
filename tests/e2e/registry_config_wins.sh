#!/usr/bin/env bash
# End to end on a real ZooKeeper (issue 31, items 2 and 3): the registry's configuration wins
# for every way of running a job. Two `elasticjob run` instances and an agent run a SCRIPT
# job; `elasticjob job config set` changes its command, and each of them runs the new one at
# the next fire (never the old one after it). A `run` instance started later with the stale
# file runs the registry's command and logs one line saying the registry's wins. Then
# `job config set` and `job add` refuse names no instance can run (exit 1, the known names
# listed) and write nothing; the job goes on running.
# Usage: registry_config_wins.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
source "$(dirname "$0")/../lib/ops.sh"
e2e_start_zookeeper
export ELASTICJOB_REGISTRY="$url"
cat > "$dir/jobs.yaml" <<'YAML'
elasticjob:
  jobs:
    orderSync:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 4
      props:
        script.command.line: "/bin/sh -c 'echo cmd=v1'"
YAML
e2e_start_host a 10.7.0.1 "$dir/jobs.yaml" "$url"
e2e_start_host b 10.7.0.2 "$dir/jobs.yaml" "$url"
: > "$dir/c.log"
ELASTICJOB_PREFERRED_NETWORK_IP=10.7.0.3 setsid "$EJ" agent > "$dir/c.log" 2>&1 &
PID[c]=$!
disown "$!"
wait_for_lines "$dir/c.log" "job 'orderSync' scheduled" 1 20 || fail "the agent did not start the job: $(tail -3 "$dir/c.log")"
for n in a b c; do
  wait_for_lines "$dir/$n.log" "cmd=v1" 1 30 || fail "instance $n never ran the first command"
done

# The command changes in the registry: every instance runs the new one at its next fire.
"$EJ" job config get orderSync | sed 's#cmd=v1#cmd=v2#' > "$dir/v2.yaml"
"$EJ" job config set orderSync "$dir/v2.yaml" > /dev/null || fail "config set failed"
for n in a b c; do
  wait_for_lines "$dir/$n.log" "cmd=v2" 1 30 || fail "instance $n did not run the new command: $(grep cmd= "$dir/$n.log" | tail -3)"
  after=$(sed -n '/cmd=v2/,$p' "$dir/$n.log")
  [[ "$after" != *"cmd=v1"* ]] || fail "instance $n ran the old command after the new one"
done

# A `run` instance started later with the stale file: the registry's command, and one line.
e2e_start_host d 10.7.0.4 "$dir/jobs.yaml" "$url"
wait_for_lines "$dir/d.log" "cmd=v2" 1 30 || fail "the late instance did not run the registry's command: $(tail -5 "$dir/d.log")"
grep -q "cmd=v1" "$dir/d.log" && fail "the late instance ran its stale file's command"
wins=$(grep -c "the registry's wins" "$dir/d.log")
[[ "$wins" == 1 ]] || fail "the late instance logged $wins lines on which config wins, expected 1"
grep "the registry's wins" "$dir/d.log" | grep -q "props.script.command.line" ||
  fail "the line does not name the differing prop: $(grep "the registry's wins" "$dir/d.log")"

# Names no instance can run: refused by the writers, nothing written.
"$EJ" job config get orderSync > "$dir/now.yaml"
for bad in "jobShardingStrategyType: NO_SUCH|AVG_ALLOCATION" \
           "jobExecutorThreadPoolSizeProviderType: NO_SUCH|SINGLE_THREAD" \
           "jobErrorHandlerType: NO_SUCH|DINGTALK"; do
  { cat "$dir/now.yaml"; echo "${bad%%|*}"; } > "$dir/bad.yaml"
  expect_exit 1 "${bad##*|}" "$EJ" job config set orderSync "$dir/bad.yaml"
  sed 's/orderSync:/other:/' "$dir/jobs.yaml" > "$dir/add.yaml"
  sed -i "s/      shardingTotalCount: 4/      shardingTotalCount: 4\n      ${bad%%|*}/" "$dir/add.yaml"
  expect_exit 1 "${bad##*|}" "$EJ" job add "$dir/add.yaml"
done
"$EJ" job config get orderSync | grep -q NO_SUCH && fail "a refused config was written"
[[ -z "$(zk_ls /e2e/other)" ]] || fail "a refused job was added"
mark=$(($(wc -l < "$dir/a.log") + 1))
wait_for_lines "$dir/a.log" "cmd=v2" "$(( $(grep -c cmd=v2 "$dir/a.log") + 2 ))" 30 ||
  fail "the job stopped running after the refused writes"
e2e_finish "registry config wins for run and agent instances; unrunnable names refused"
