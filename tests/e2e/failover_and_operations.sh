#!/usr/bin/env bash
# End to end on a real ZooKeeper, three `elasticjob run` processes (three hosts, by their
# preferred IPs) sharing one job of 6 items whose runs take 6 s, failover on, and a cron that
# never fires during the test, so every run here is started by the registry:
#   1. an operator trigger (`trigger/{id}` for each instance) runs every instance once: each
#      runs exactly its 2 items (AVG_ALLOCATION over the descending ids);
#   2. the leader's host crashes in the middle of that run (kill -9 of its process group):
#      once its session expires, the survivors take its 2 running items over and start them
#      at once (no cron tick), logged with failover=true; a survivor becomes leader and the
#      items are resharded over the two survivors;
#   3. no item ever runs on two hosts at the same time (from the scripts' own start/end
#      records, the crashed host's runs ending at the crash).
# Usage: failover_and_operations.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
session_ms=3000
e2e_start_zookeeper "$session_ms"
events="$dir/events.log"
: > "$events"
# Each item records its own start and end (time in ns, the item, the runner's pid). The
# sharding context JSON is the script's last argument ($0 of sh -c).
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  jobs:
    longjob:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 6
      failover: true
      props:
        script.command.line: >-
          /bin/sh -c 'item=\$(echo "\$0" | sed "s/.*shardingItem.:\\([0-9]*\\).*/\\1/");
          echo "start \$item \$PPID \$(date +%s%N)" >> $events; sleep 6;
          echo "end \$item \$PPID \$(date +%s%N)" >> $events'
YAML

for host in 1 2 3; do e2e_start_host "$host" "10.2.0.$host" "$dir/jobs.yaml" "$url"; done
id_of() { echo "10.2.0.$1@-@${PID[$1]}"; }

# 1. Operator trigger on every instance.
zk create /e2e/longjob/trigger > /dev/null  # zkCli creates no parents
for host in 1 2 3; do zk create "/e2e/longjob/trigger/$(id_of "$host")" > /dev/null; done
wait_for_lines "$events" "start " 6 || fail "the operator trigger did not start 6 items: $(cat "$events")"
for host in 1 2 3; do
  n=$(grep -c "^start [0-9]* ${PID[$host]} " "$events")
  [[ "$n" == 2 ]] || fail "host $host started $n items on the operator trigger, expected 2"
done
[[ "$(zk_ls /e2e/longjob/trigger)" == "[]" ]] || fail "trigger nodes left: $(zk_ls /e2e/longjob/trigger)"

# 2. Crash the leader's host mid-run.
leader=$(zk_get /e2e/longjob/leader/election/instance)
victim=""
for host in 1 2 3; do [[ "$leader" == "$(id_of "$host")" ]] && victim=$host; done
[[ -n "$victim" ]] || { fail "no leader among the instances: '$leader'"; exit 1; }
victim_items=$(grep "^start [0-9]* ${PID[$victim]} " "$events" | awk '{print $2}' | sort -n | tr '\n' ' ')
grep -q "^end [0-9]* ${PID[$victim]} " "$events" && fail "the victim's run ended before the crash"
kill -9 -- "-${PID[$victim]}"
crash_ns=$(date +%s%N)
victim_pid=${PID[$victim]}
unset "PID[$victim]"
# Its items start again on survivors: 6 starts so far, 2 more for the taken-over items.
wait_for_lines "$events" "start " 8 30 || fail "the crashed host's items ($victim_items) were not taken over: $(cat "$events")"
taken=$(awk -v c="$crash_ns" '$1 == "start" && $4 > c {print $2}' "$events" | sort -n | tr '\n' ' ')
[[ "$taken" == "$victim_items" ]] || fail "survivors started items '$taken' after the crash, expected '$victim_items'"
takeover_ms=$(awk -v c="$crash_ns" '$1 == "start" && $4 > c {print int(($4 - c) / 1000000)}' "$events" | sort -n | tail -1)
echo "info takeover: last taken-over item started ${takeover_ms} ms after kill -9 (session timeout ${session_ms} ms)"
# Every run ends: the survivors' 4 own items and the 2 taken over.
wait_for_lines "$events" "end " 6 30 || fail "runs did not end: $(cat "$events")"
# Each run is reported once its script has exited, a moment after its "end" line.
n_victim=$(echo $victim_items | wc -w)
wait_for_lines_in "failover=true" "$n_victim" 10 "$dir"/[123].log ||
  fail "fewer than $n_victim failover runs reported"
logged=$(cat "$dir"/[123].log | grep "outcome=SUCCESS.*failover=true" | sed 's/.*item=\([0-9]*\).*/\1/' |
  sort -n | tr '\n' ' ')
[[ "$logged" == "$victim_items" ]] || fail "failover runs logged for items '$logged', expected '$victim_items'"

# A survivor leads; the leader reshards once the runs are over (bounded wait on zkCli).
deadline=$((SECONDS + 30))
while ((SECONDS < deadline)); do
  leader=$(zk_get /e2e/longjob/leader/election/instance)
  owners=""
  for i in 0 1 2 3 4 5; do owners+="$(zk_get /e2e/longjob/sharding/$i/instance) "; done
  [[ "$leader" != *"@-@$victim_pid" && "$leader" == *"@-@"* && "$owners" != *"@-@$victim_pid "* &&
     "$(zk_ls /e2e/longjob/leader/sharding)" == "[]" ]] && break
  sleep 1
done
[[ "$leader" != *"@-@$victim_pid" && "$leader" == *"@-@"* ]] || fail "no new leader: '$leader'"
[[ "$owners" != *"@-@$victim_pid "* ]] || fail "items still assigned to the crashed host: $owners"
[[ "$(zk_ls /e2e/longjob/leader/failover/items)" == "[]" ]] ||
  fail "failover items left: $(zk_ls /e2e/longjob/leader/failover/items)"

# 3. No item on two hosts at once: per item, intervals in time order must not overlap.
awk '
  $1 == "start" { if (open[$2] != "" && open[$2] != $3) { print "item " $2 " started on " $3 " while running on " open[$2]; bad = 1 }
                  open[$2] = $3 }
  $1 == "end"   { if (open[$2] == $3) open[$2] = "" }
  END { exit bad }' < <(
    # The crashed host runs end at the crash: add those ends, then sort by time.
    { cat "$events"; grep "^start [0-9]* $victim_pid " "$events" | awk -v c="$crash_ns" '{print "end", $2, $3, c}'; } |
      sort -k4,4n) || fail "an item ran on two hosts at the same time"

e2e_on_failure() {
  cat "$events"
  echo "leader: $(zk_get /e2e/longjob/leader/election/instance); leader/sharding: $(zk_ls /e2e/longjob/leader/sharding)"
  for host in 1 2 3; do echo "--- host $host"; grep -v "outcome=SUCCESS" "$dir/$host.log"; done
}
e2e_finish "operator trigger ran every instance once; the crashed leader's items ($victim_items) ran on survivors ${takeover_ms} ms after kill -9; new leader, resharded; no item on two hosts at once"
