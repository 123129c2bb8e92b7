#!/usr/bin/env bash
# End to end on a real ZooKeeper: two `elasticjob run` processes (as two hosts, by their
# preferred IPs) share one job of 10 items. Asserts, from each process's log and from the
# registry, that they split the items as AVG_ALLOCATION over the leader's descending list
# says, that no item ever runs in both, and that a graceful stop removes their instance
# nodes while servers and sharding stay.
# Usage: two_instances_share_items.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
e2e_start_zookeeper
cat > "$dir/jobs.yaml" <<'YAML'
elasticjob:
  jobs:
    shared:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 10
      props:
        script.command.line: /bin/true
YAML


e2e_start_host a 10.1.1.1 "$dir/jobs.yaml" "$url" --wait-later
A=${PID[a]}
follow_log "$dir/a.log" 10 || fail "first instance did not run its items: $(tail -5 "$dir/a.log")"
e2e_start_host b 10.1.1.2 "$dir/jobs.yaml" "$url" --wait-later
B=${PID[b]}
# The join sets the resharding flag; the next trigger reshards before it runs. Wait until
# the newcomer has run two full triggers of its share (5 items each).
follow_log "$dir/b.log" 10 || fail "second instance did not run: $(tail -5 "$dir/b.log")"
mark=$(($(wc -l < "$dir/a.log") + 1))
follow_log "$dir/b.log" 15 || fail "second instance stopped running"
follow_log "$dir/a.log" 5 "$mark" || fail "first instance stopped running after the join"
items_of() {  # log, instance pid, from line: the items it ran after that line
  tail -n +"$3" "$1" | grep -o "item=[0-9]* instance=[0-9.]*@-@$2 outcome=SUCCESS" |
    sed 's/item=\([0-9]*\).*/\1/' | sort -n | uniq | tr '\n' ' '
}
a_items=$(items_of "$dir/a.log" "$A" "$mark")
b_items=$(items_of "$dir/b.log" "$B" 1)
# Leader's list: [10.1.1.2@-@B, 10.1.1.1@-@A] -> B gets 0..4, A gets 5..9.
[[ "$b_items" == "0 1 2 3 4 " ]] || fail "second instance ran items '$b_items', expected '0 1 2 3 4'"
[[ "$a_items" == "5 6 7 8 9 " ]] || fail "first instance ran items '$a_items' after the join, expected '5 6 7 8 9'"

kill -TERM "$A" "$B"
wait "$A"; ra=$?
wait "$B"; rb=$?
PID=()  # stopped already
[[ $ra -eq 0 && $rb -eq 0 ]] || fail "graceful stop exit codes $ra $rb"
[[ "$(zk_ls /e2e/shared/instances)" == "[]" ]] || fail "instances left: $(zk_ls /e2e/shared/instances)"
[[ "$(zk_ls /e2e/shared/servers)" == "[10.1.1.1, 10.1.1.2]" ]] || fail "servers: $(zk_ls /e2e/shared/servers)"
[[ "$(zk_ls /e2e/shared/sharding)" == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]" ]] || fail "sharding: $(zk_ls /e2e/shared/sharding)"

e2e_finish "two instances split 10 items as AVG_ALLOCATION says; graceful stop cleans instances"
