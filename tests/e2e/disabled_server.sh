#!/usr/bin/env bash
# End to end on a real ZooKeeper: two `elasticjob run` processes (two hosts, by their
# preferred IPs) share one every-second job of 4 items. An operator sets the first host's
# server DISABLED (as the console does, with zkCli): its items move to the other host, which
# then runs all 4, the disabled host runs nothing more, and leadership is on the enabled host.
# Usage: disabled_server.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
e2e_start_zookeeper
cat > "$dir/jobs.yaml" <<'YAML'
elasticjob:
  jobs:
    shared:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 4
      props:
        script.command.line: /bin/true
YAML
for host in 1 2; do e2e_start_host "$host" "10.4.0.$host" "$dir/jobs.yaml" "$url"; done
# Both run their share (2 items each after the join's resharding).
follow_log "$dir/2.log" 4 || fail "host 2 did not run: $(tail -3 "$dir/2.log")"
follow_log "$dir/1.log" 2 || fail "host 1 did not run: $(tail -3 "$dir/1.log")"

zk set /e2e/shared/servers/10.4.0.1 DISABLED > /dev/null
[[ "$(zk_get /e2e/shared/servers/10.4.0.1)" == "DISABLED" ]] || fail "could not disable host 1"
# The resharding reaches host 2 within a trigger or two.
mark2=$(($(wc -l < "$dir/2.log") + 1))
follow_log "$dir/2.log" 8 "$mark2" || fail "host 2 stopped running"
# From now on host 1 must run nothing: watch two more seconds of host 2's triggers.
mark1=$(($(wc -l < "$dir/1.log") + 1))
mark2=$(($(wc -l < "$dir/2.log") + 1))
follow_log "$dir/2.log" 8 "$mark2" || fail "host 2 did not keep running all items"
items2=$(tail -n +"$mark2" "$dir/2.log" | grep -o "item=[0-9]*" | sort -u | tr '\n' ' ')
[[ "$items2" == "item=0 item=1 item=2 item=3 " ]] || fail "host 2 ran '$items2' after the disable"
ran1=$(tail -n +"$mark1" "$dir/1.log" | grep -c "outcome=" || true)
[[ "$ran1" == 0 ]] || fail "the disabled host ran $ran1 items after its items moved"
leader=$(zk_get /e2e/shared/leader/election/instance)
[[ "$leader" == "10.4.0.2@-@${PID[2]}" ]] || fail "leader is '$leader', expected the enabled host"

e2e_on_failure() {
  echo "leader: $(zk_get /e2e/shared/leader/election/instance); leader/sharding: $(zk_ls /e2e/shared/leader/sharding)"
  for i in 0 1 2 3; do echo "sharding/$i: $(zk_get /e2e/shared/sharding/$i/instance) $(zk_ls /e2e/shared/sharding/$i)"; done
  for host in 1 2; do echo "--- host $host"; grep -v "outcome=SUCCESS" "$dir/$host.log"; done
}
e2e_finish "a DISABLED server's items moved to the other host; it runs nothing and does not lead"
