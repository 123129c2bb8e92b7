#!/usr/bin/env bash
# End to end on a real ZooKeeper: `elasticjob job ...` and `elasticjob server ...` operate two
# running `elasticjob run` hosts sharing a job of 4 items whose cron never fires, so every
# run seen here was started by an operation:
#   list/show/sharding read the cluster (tables, --json); trigger runs every instance once,
#   with --param that run only sees the parameter; item disable/enable skips one item;
#   disable/enable --server moves a host's items away and back; config set with bad YAML is
#   refused with its line and the old config kept, a good one reschedules the hosts; server
#   list/disable/enable; shutdown --server stops one host's instance, server shutdown the
#   other; add/remove a job; unknown job or server, a registry that is down (bounded), and
#   bad usage exit as documented.
# Usage: job_commands.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
source "$(dirname "$0")/../lib/ops.sh"
e2e_start_zookeeper
export ELASTICJOB_REGISTRY="$url"
cat > "$dir/jobs.yaml" <<'YAML'
elasticjob:
  jobs:
    ops:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 4
      jobParameter: configured
      description: operated by the test
      props:
        script.command.line: "/bin/sh -c 'echo ran $0'"
YAML
for host in 1 2; do e2e_start_host "$host" "10.5.0.$host" "$dir/jobs.yaml" "$url"; done
list_ok() {
  local j
  j=$("$EJ" job list --json) || return 1
  [[ "$(json_get "$j" 'j[0]["status"], j[0]["instances"]')" == "OK 2" ]]
}
poll_until 20 list_ok || fail "job list never showed ops OK on 2 instances: $("$EJ" job list)"
table=$("$EJ" job list)
[[ "$table" == *"JOB  STATUS  CRON"* && "$table" == *"ops  OK      0 0 0 1 1 ? 2099  2"* ]] ||
  fail "job list table: $table"
# --json: numbers as numbers, flags as booleans, in every command (docs/operations.md).
types() { python3 -c 'import json,sys; j=json.load(sys.stdin); j=j if isinstance(j, list) else [j]; print(" ".join(sorted({k + ":" + type(v).__name__ for r in j for k, v in r.items()})))'; }
[[ "$("$EJ" job list --json | types)" == "cron:str description:str instances:int items:int job:str status:str" ]] ||
  fail "job list --json types: $("$EJ" job list --json | types)"
[[ "$("$EJ" job sharding ops --json | types)" == "failover:bool instance:str item:int server:str status:str" ]] ||
  fail "job sharding --json types: $("$EJ" job sharding ops --json | types)"
[[ "$("$EJ" server list --json | types)" == "disabled_jobs:int instances:int jobs:int server:str" ]] ||
  fail "server list --json types: $("$EJ" server list --json | types)"
[[ "$("$EJ" job show ops --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(type(j["items"]).__name__, type(j["instances"]).__name__, type(j["sharding"][0]["item"]).__name__)')" == "int int int" ]] ||
  fail "job show --json types: $("$EJ" job show ops --json)"
show=$("$EJ" job show ops) || fail "job show failed"
[[ "$show" == *"next fire times  2099-01-01T00:00:00"* ]] || fail "job show: $show"
[[ "$show" == *"operated by the test"* && "$show" == *"PENDING"* ]] || fail "job show: $show"

# Trigger: each host runs its 2 items once; with --param that run sees it, the next does not.
out=$("$EJ" job trigger ops --param 'P 1') || fail "trigger --param failed"
[[ "$out" == "job 'ops' triggered on 2 instance(s)" ]] || fail "trigger said: $out"
wait_for_lines_in '"jobParameter":"P 1"' 4 30 "$dir/1.log" "$dir/2.log" ||
  fail "the parameter did not reach 4 items: $(grep -h ran "$dir"/[12].log)"
"$EJ" job trigger ops > /dev/null || fail "trigger failed"
wait_for_lines_in '"jobParameter":"configured"' 4 30 "$dir/1.log" "$dir/2.log" ||
  fail "the next trigger did not run with the configured parameter"

# One item disabled: a trigger runs the other 3 only.
"$EJ" job item disable ops 0 > /dev/null || fail "item disable failed"
[[ "$("$EJ" job sharding ops --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["status"])')" == DISABLED ]] ||
  fail "item 0 not shown DISABLED"
"$EJ" job trigger ops --param third > /dev/null
wait_for_lines_in '"jobParameter":"third"' 3 30 "$dir/1.log" "$dir/2.log" || fail "3 items did not run"
"$EJ" job item enable ops 0 > /dev/null || fail "item enable failed"
"$EJ" job trigger ops --param fourth > /dev/null
wait_for_lines_in '"jobParameter":"fourth"' 4 30 "$dir/1.log" "$dir/2.log" || fail "4 items did not run"
ran0=$(grep -h '"jobParameter":"third"' "$dir"/[12].log | grep -c '"shardingItem":0')
[[ "$ran0" == 0 ]] || fail "the disabled item ran"

# A host's server disabled: its items move to the other; enabled: they come back.
owners() { "$EJ" job sharding ops --json | python3 -c 'import json,sys; print(" ".join(sorted({r["server"] for r in json.load(sys.stdin)})))'; }
owners_are() { [[ "$(owners)" == "$1" ]]; }
"$EJ" job disable ops --server 10.5.0.1 > /dev/null || fail "disable --server failed"
poll_until 20 owners_are 10.5.0.2 || fail "items did not move off the disabled host: $(owners)"
"$EJ" job enable ops --server 10.5.0.1 > /dev/null || fail "enable --server failed"
poll_until 20 owners_are "10.5.0.1 10.5.0.2" || fail "items did not come back: $(owners)"

# config set: bad YAML refused with its line, the old config kept; a good one reschedules.
"$EJ" job config get ops > "$dir/config.yaml" || fail "config get failed"
printf 'cron: 0/1 * * * * ?\nshardingTotalCount: 4\n  description: x\n' > "$dir/bad.yaml"
expect_exit 1 "line 3" "$EJ" job config set ops "$dir/bad.yaml"
printf 'cron: 0 0 25 * * ?\nshardingTotalCount: 4\n' > "$dir/bad2.yaml"
expect_exit 1 "hour field '25'" "$EJ" job config set ops "$dir/bad2.yaml"
[[ "$("$EJ" job config get ops)" == "$(cat "$dir/config.yaml")" ]] || fail "a refused config changed the job"
sed 's#^cron: .*#cron: 0/1 * * * * ?#' "$dir/config.yaml" > "$dir/every-second.yaml"
"$EJ" job config set ops "$dir/every-second.yaml" > /dev/null || fail "config set failed"
wait_for_lines_in "rescheduled to cron '0/1 * * * * ?'" 2 30 "$dir/1.log" "$dir/2.log" ||
  fail "the hosts were not rescheduled"

# Servers.
servers=$("$EJ" server list --json) || fail "server list failed"
[[ "$(json_get "$servers" '[s["server"] for s in j]')" == "['10.5.0.1', '10.5.0.2']" ]] ||
  fail "server list: $servers"
"$EJ" server disable 10.5.0.2 > /dev/null || fail "server disable failed"
[[ "$(zk_get /e2e/ops/servers/10.5.0.2)" == DISABLED ]] || fail "server disable wrote nothing"
"$EJ" server enable 10.5.0.2 > /dev/null || fail "server enable failed"
[[ "$(zk_get /e2e/ops/servers/10.5.0.2)" == ENABLED ]] || fail "server enable wrote nothing"

# Unknown names, a registry that is down, bad usage.
expect_exit 1 "job 'nope' not found" "$EJ" job show nope
expect_exit 1 "job 'nope' not found" "$EJ" job trigger nope
expect_exit 1 "server '10.9.9.9' not found" "$EJ" server disable 10.9.9.9
expect_exit 1 "server '10.9.9.9' not found in job 'ops'" "$EJ" job shutdown ops --server 10.9.9.9
expect_exit 1 "job 'nope' not found" "$EJ" job remove nope
start=$SECONDS
expect_exit 1 "no server answered" "$EJ" job list --registry "zookeeper://127.0.0.1:1/e2e"
((SECONDS - start <= 10)) || fail "a registry that is down took $((SECONDS - start)) s to fail"
expect_exit 2 "item 'notanumber': not an item number; job 'ops' has items 0 to 3" \
  "$EJ" job item disable ops notanumber
expect_exit 2 "item '99999999999999999999': not an item number; job 'ops' has items 0 to 3" \
  "$EJ" job item enable ops 99999999999999999999
expect_exit 2 "item 9: job 'ops' has items 0 to 3" "$EJ" job item disable ops 9
expect_exit 2 "no registry" env -u ELASTICJOB_REGISTRY "$EJ" job list
# --wait is bounded: a job that never comes is "not found" after the wait.
start=$SECONDS
expect_exit 1 "job 'nope' not found" "$EJ" job sharding nope --wait=1
((SECONDS - start <= 5)) || fail "--wait=1 took $((SECONDS - start)) s"
expect_exit 2 "--wait: 'soon' is not a number of seconds (0 to 3600)" "$EJ" job show ops --wait=soon

# Add a job (`elasticjob run`'s file format), then remove it.
cat > "$dir/add.yaml" <<'YAML'
elasticjob:
  jobs:
    added:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 2
      props:
        script.command.line: /bin/true
YAML
[[ "$("$EJ" job add "$dir/add.yaml")" == *"job 'added' added"* ]] || fail "job add failed"
[[ "$(zk_get /e2e/added)" == SCRIPT ]] || fail "job add did not write the type"
expect_exit 1 "job 'added' already exists" "$EJ" job add "$dir/add.yaml"
[[ "$("$EJ" job list)" == *added*CRASHED* ]] || fail "the added job is not listed"
"$EJ" job remove added > /dev/null || fail "job remove failed"
[[ "$("$EJ" job list)" != *added* ]] || fail "the removed job is still listed"

# Shutdown: one host's instance by --server, then the other by `server shutdown`.
"$EJ" job shutdown ops --server 10.5.0.1 > /dev/null || fail "job shutdown --server failed"
wait_for_lines "$dir/1.log" "instance node removed by an operator" 1 20 || fail "host 1 did not stop"
"$EJ" server shutdown 10.5.0.2 > /dev/null || fail "server shutdown failed"
wait_for_lines "$dir/2.log" "instance node removed by an operator" 1 20 || fail "host 2 did not stop"
[[ "$("$EJ" job list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["status"])')" == CRASHED ]] ||
  fail "job not CRASHED after both shutdowns"

e2e_on_failure() { for host in 1 2; do echo "--- host $host"; grep -v "outcome=SUCCESS\|^ran " "$dir/$host.log" | tail -20; done; }
e2e_finish "job and server commands operate running hosts; bad input exits as documented"
