#!/usr/bin/env bash
# End to end on a real ZooKeeper: one `elasticjob run` process with a job that never fires
# (a cron in 2099). An operator writes a new config to the registry (zkCli, a one-line
# YAML) with an every-second cron: the job is rescheduled without a restart. Its first run
# takes 2.5 s, over two fire times: exactly one misfire re-run follows it, then runs are
# back to one per second with no more re-runs.
# Usage: reschedule_and_misfire.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
e2e_start_zookeeper
# The first run (no mark file yet) is long; every later one is short.
command="/bin/sh -c 'if [ ! -e $dir/mark ]; then touch $dir/mark; sleep 2.5; fi'"
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  jobs:
    cronjob:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 1
      props:
        script.command.line: "$command"
YAML
e2e_start_host 1 10.7.0.1 "$dir/jobs.yaml" "$url"
log="$dir/1.log"
[[ "$(grep -c outcome= "$log")" == 0 ]] || fail "the job ran before its cron was changed"

zk set /e2e/cronjob/config "{jobName: cronjob, cron: '0/1 * * * * ?', shardingTotalCount: 1, misfire: true, props: {script.command.line: \"$command\"}}" > /dev/null
wait_for_lines "$log" "rescheduled to cron '0/1 * * * * ?'" 1 10 || fail "not rescheduled: $(tail -3 "$log")"
# The long run, its one re-run, and four short runs.
follow_log "$log" 6 || fail "fewer than 6 runs after the cron change"
runs=$(grep "outcome=SUCCESS" "$log")
reruns=$(echo "$runs" | grep -c "misfire_rerun=true")
[[ "$reruns" == 1 ]] || fail "$reruns misfire re-runs, expected exactly 1"
[[ "$(echo "$runs" | sed -n 1p)" != *misfire_rerun=true* && "$(echo "$runs" | sed -n 2p)" == *misfire_rerun=true* ]] ||
  fail "the re-run does not follow the long run: $runs"
first_ms=$(echo "$runs" | sed -n 1p | sed 's/.*duration_ms=\([0-9]*\).*/\1/')
((first_ms >= 2500)) || fail "the first run took ${first_ms} ms, expected at least 2500"
e2e_on_failure() { cat "$log"; }
e2e_finish "a cron written to the registry rescheduled the job without a restart; a 2.5 s run over two fire times gave exactly one misfire re-run"
