#!/usr/bin/env bash
# End to end on a real ZooKeeper: three `elasticjob run` processes share a job of 10 items.
#   1. The registry's assignment is AVG_ALLOCATION's for the three instances (as
#      `elasticjob sharding plan` computes it), and an operator trigger runs exactly those
#      items on each host.
#   2. A fourth host joins; the very next trigger (written as soon as it is scheduled) runs
#      on the assignment for four: each item once, each host its new items.
# Usage: sharding_and_join.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
e2e_start_zookeeper
cat > "$dir/jobs.yaml" <<'YAML'
elasticjob:
  jobs:
    shardjob:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 10
      props:
        script.command.line: /bin/true
YAML
id_of() { echo "10.6.0.$1@-@${PID[$1]}"; }
# plan HOSTS...: "item owner" lines, as the leader assigns them for those hosts.
plan() {
  local ids=()
  for h in "$@"; do ids+=("$(id_of "$h")"); done
  "$EJ" sharding plan --job shardjob --items 10 "${ids[@]}" |
    awk -F'\t' '{ n = split($2, items, ","); for (i = 1; i <= n; i++) print items[i], $1 }' | sort -n
}
# registry_owners: "item owner" lines from the registry.
registry_owners() {
  for i in $(seq 0 9); do echo "$i $(zk_get /e2e/shardjob/sharding/$i/instance)"; done
}
# ran FROM_LINES: "item owner" lines of the item runs logged after line FROM_LINES[host].
ran() {
  for h in "${!PID[@]}"; do
    tail -n +"${from[$h]:-1}" "$dir/$h.log" | grep "outcome=SUCCESS" |
      sed 's/.*item=\([0-9]*\) instance=\([^ ]*\).*/\1 \2/'
  done | sort -n
}
trigger_all() {
  for h in "${!PID[@]}"; do zk create "/e2e/shardjob/trigger/$(id_of "$h")" > /dev/null; done
}

for host in 1 2 3; do e2e_start_host "$host" "10.6.0.$host" "$dir/jobs.yaml" "$url"; done
# 1. The leader shards as soon as the flag is up and nothing runs (bounded wait on zkCli).
deadline=$((SECONDS + 30))
while ((SECONDS < deadline)); do
  [[ "$(registry_owners)" == "$(plan 1 2 3)" && "$(zk_ls /e2e/shardjob/leader/sharding)" == "[]" ]] &&
    break
  sleep 1
done
[[ "$(registry_owners)" == "$(plan 1 2 3)" ]] ||
  fail "assignment for 3 hosts: $(registry_owners | tr '\n' ';') expected $(plan 1 2 3 | tr '\n' ';')"
zk create /e2e/shardjob/trigger > /dev/null  # zkCli creates no parents
declare -A from
trigger_all
wait_for_lines_in "outcome=SUCCESS" 10 60 "$dir"/[123].log || fail "the trigger did not run 10 items"
[[ "$(ran)" == "$(plan 1 2 3)" ]] ||
  fail "runs for 3 hosts: $(ran | tr '\n' ';') expected $(plan 1 2 3 | tr '\n' ';')"

# 2. A fourth host joins; trigger everyone at once.
for h in 1 2 3; do from[$h]=$(($(wc -l < "$dir/$h.log") + 1)); done
e2e_start_host 4 10.6.0.4 "$dir/jobs.yaml" "$url"
from[4]=1
trigger_all
wait_for_lines_in "outcome=SUCCESS" 20 60 "$dir"/[1234].log || fail "the second trigger did not run 10 items"
[[ "$(ran)" == "$(plan 1 2 3 4)" ]] ||
  fail "runs after the join: $(ran | tr '\n' ';') expected $(plan 1 2 3 4 | tr '\n' ';')"
[[ "$(registry_owners)" == "$(plan 1 2 3 4)" ]] ||
  fail "assignment for 4 hosts: $(registry_owners | tr '\n' ';')"
e2e_on_failure() { for host in 1 2 3 4; do echo "--- host $host"; grep -v outcome=SUCCESS "$dir/$host.log"; done; }
e2e_finish "10 items split 4/3/3 as AVG_ALLOCATION says; a fourth host joined and the next trigger ran on the new assignment ($(plan 1 2 3 4 | awk '{print $2}' | sort | uniq -c | awk '{print $1}' | tr '\n' '/' | sed 's#/$##'))"
