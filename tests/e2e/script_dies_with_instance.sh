#!/usr/bin/env bash
# End to end on a real ZooKeeper: a SCRIPT item's processes die with their instance. One
# `elasticjob run` process runs a job of 2 items whose script starts a grandchild (`sleep 300`)
# and waits for it; each script records its own PID and its grandchild's. Then:
#   1. each item runs in a process group of its own, not the instance's;
#   2. kill -9 of the instance process alone (not its group: a crash of the process, as the
#      kernel's OOM killer does it) leaves no process of either item alive, so failover can
#      never hand an item to a survivor while its old run goes on unsupervised.
# Usage: script_dies_with_instance.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
source "$(dirname "$0")/../lib/procs.sh"
e2e_start_zookeeper 3000
pids="$dir/pids"
: > "$pids"
cat > "$dir/item.sh" <<SH
echo "script \$\$" >> $pids
sleep 300 &
echo "grandchild \$!" >> $pids
wait
SH
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  jobs:
    holder:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 2
      failover: true
      props:
        script.command.line: /bin/sh $dir/item.sh
YAML
trap 'kill_recorded "$pids"; e2e_cleanup' EXIT  # whatever happens

e2e_start_host 1 10.3.0.1 "$dir/jobs.yaml" "$url"
instance=${PID[1]}
wait_for_lines "$pids" "grandchild " 2 30 || fail "the items did not start: $(cat "$pids"; tail -3 "$dir/1.log")"
targets=()
for p in $(awk '{print $2}' "$pids"); do
  proc_alive "$p" || { fail "process $p ended before the crash"; continue; }
  pgid=$(proc_pgid "$p")
  [[ "$pgid" != "$(proc_pgid "$instance")" ]] || fail "process $p runs in the instance's process group $pgid"
  targets+=("$p" "-$pgid")
done

kill -9 "$instance"
wait_gone 10 "$instance" > /dev/null || fail "the instance survived kill -9"
unset "PID[1]"
if ! left=$(wait_gone 10 "${targets[@]}"); then
  fail "processes of the items outlived their instance by 10 s:$left"
fi

e2e_on_failure() {
  cat "$pids"
  ps -eo pid,ppid,pgid,stat,args | grep -v grep | grep "sleep 300\|item.sh"
  tail -5 "$dir/1.log"
}
e2e_finish "kill -9 of the instance: its items' scripts and their grandchildren (own process groups) died with it"
