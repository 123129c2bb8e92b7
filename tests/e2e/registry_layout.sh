#!/usr/bin/env bash
# End to end on a real ZooKeeper: the registry tree two `elasticjob run` processes leave is
# the one ../shared/design/zk-layout.md (docs/registry.md) describes, node for node: every
# node's path matches a row of the layout, with its mode (persistent, ephemeral, container)
# and its value. The tree is read twice with zkCli, as an operator's tools read it: in the
# middle of a run (running marks, persistent because failover is on; distribute-once
# guarantee nodes) and after it.
# Usage: registry_layout.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
shopt -s extglob  # the layout's patterns, e.g. sharding/+([0-9])
source "$(dirname "$0")/../lib/e2e.sh" "$@"
e2e_start_zookeeper
events="$dir/events.log"
: > "$events"
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  jobs:
    layoutjob:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 4
      failover: true
      maxTimeDiffSeconds: 60
      jobListenerTypes: DISTRIBUTE_ONCE_LOG
      props:
        script.command.line: /bin/sh -c 'echo start >> $events; timeout 60 sh -c "until [ -e $dir/release ]; do sleep 0.1; done"'
YAML
for host in 1 2; do e2e_start_host "$host" "10.8.0.$host" "$dir/jobs.yaml" "$url"; done
ids="10.8.0.1@-@${PID[1]} 10.8.0.2@-@${PID[2]}"

# tree: "path<TAB>mode<TAB>value" for every node under /e2e (newlines in values as ¶),
# from one zkCli session: `ls -R`, then `get -s` per node, each after `ls /zookeeper`, whose
# output line ("[config, quota]") marks where a node's block starts. A node deleted since
# `ls -R` gives an empty block (zkCli says so on stderr) and is left out.
tree() {
  local paths
  paths=$(echo "ls -R /e2e" | "$ZK_CLI" -server "127.0.0.1:$port" 2>/dev/null | grep '^/e2e')
  { for p in $paths; do echo "ls /zookeeper"; echo "get -s $p"; done; } |
    "$ZK_CLI" -server "127.0.0.1:$port" 2>/dev/null |
    awk -v paths="$paths" '
      BEGIN { split(paths, path, "\n"); i = 0 }
      function flush() {
        if (i == 0 || !stat) return
        printf "%s\t%s\t%s\n", path[i], mode, value
      }
      /^\[config, quota\]$/ { flush(); i++; inval = 1; stat = 0; value = ""; lines = 0; next }
      /^cZxid = / { inval = 0; stat = 1; next }
      # ZooKeeper reports containers with ephemeralOwner 0, like persistent nodes.
      /^ephemeralOwner = / { mode = ($3 == "0x0") ? "persistent" : "ephemeral"; next }
      /^WATCHER::/ { inval = 0 }
      i > 0 && inval { value = (lines++ ? value "¶" : "") $0 }
      END { flush() }'
}

# check TREE LABEL: every node matches a layout row; prints "FAIL" lines through fail().
check() {
  local label="$1" path mode value rel want_mode want_value id
  while IFS=$'\t' read -r path mode value; do
    rel="${path#/e2e}"; rel="${rel#/layoutjob}"
    want_value="*"
    case "$path" in
      /e2e) want_mode=persistent ;;  # a container (see tree)
      /e2e/layoutjob) want_mode=persistent want_value=SCRIPT ;;
      *)
        case "$rel" in
          /config) want_mode=persistent want_value="*jobName: layoutjob*" ;;
          /servers|/instances|/sharding|/trigger|/systemTime) want_mode=persistent want_value="" ;;
          /servers/*) want_mode=persistent want_value="@(ENABLED|DISABLED)" ;;
          /instances/*) id="${rel#/instances/}"
            want_mode=ephemeral want_value="jobInstanceId: $id¶serverIp: ${id%%@-@*}¶" ;;
          /sharding/+([0-9])) want_mode=persistent want_value="" ;;
          /sharding/+([0-9])/instance) want_mode=persistent want_value="@(${ids// /|})" ;;
          /sharding/+([0-9])/running) want_mode=persistent want_value="@(${ids// /|})" ;;  # failover on
          /sharding/+([0-9])/@(misfire|disabled)) want_mode=persistent want_value="" ;;
          /sharding/+([0-9])/failover) want_mode=ephemeral want_value="@(${ids// /|})" ;;
          /sharding/+([0-9])/failovering) want_mode=persistent want_value="@(${ids// /|})" ;;
          /leader|/leader/election|/leader/election/latch|/leader/failover/latch) want_mode=persistent ;;
          /leader/election/instance) want_mode=ephemeral want_value="@(${ids// /|})" ;;
          /leader/@(election|failover)/latch/_c_*-latch-+([0-9])) want_mode=ephemeral ;;
          /leader/sharding) want_mode=persistent ;;
          /leader/sharding/necessary) want_mode=persistent want_value="" ;;
          /leader/sharding/processing) want_mode=ephemeral want_value="" ;;
          /leader/failover|/leader/failover/items) want_mode=persistent ;;
          /leader/failover/items/+([0-9])) want_mode=persistent want_value="" ;;
          /guarantee) want_mode=persistent ;;
          /guarantee/@(started|completed)) want_mode=persistent want_value="" ;;
          /guarantee/@(started|completed)/+([0-9])) want_mode=persistent want_value="" ;;
          /guarantee/@(started|completed)-latch) want_mode=persistent ;;
          /guarantee/@(started|completed)-latch/_c_*-latch-+([0-9])) want_mode=ephemeral ;;
          /trigger/*) want_mode=persistent want_value="" ;;
          /systemTime/current) want_mode=persistent want_value="" ;;
          # Layout extensions (docs/runtime.md; new subtrees Java ignores, zk-layout.md).
          /runtime) want_mode=persistent want_value="" ;;
          /runtime/*) id="${rel#/runtime/}"
            [[ " $ids " == *" $id "* ]] || fail "$label: $path names no instance of the run"
            want_mode=ephemeral want_value='{*"version":*}' ;;
          *) fail "$label: $path is not in zk-layout.md"; continue ;;
        esac ;;
    esac
    # shellcheck disable=SC2053
    [[ "$mode" == $want_mode ]] || fail "$label: $path is $mode, zk-layout.md says $want_mode"
    [[ "$want_value" == "*" || "$value" == $want_value ]] ||
      fail "$label: $path = '$value', zk-layout.md says '$want_value'"
  done
}

zk create /e2e/layoutjob/trigger "" > /dev/null  # zkCli creates no parents
for id in $ids; do zk create "/e2e/layoutjob/trigger/$id" > /dev/null; done
wait_for_lines "$events" "start" 4 || fail "the trigger did not start 4 items"
during=$(tree)
touch "$dir/release"  # the items run until the tree is read (two zkCli starts: seconds under load)
wait_for_lines_in "phase=after_last_completed" 1 30 "$dir/1.log" "$dir/2.log" || fail "the run did not end"
after=$(tree)
check "during the run" <<< "$during"
check "after the run" <<< "$after"
# What must be there, beyond matching rows.
running=$(grep -c "/running	" <<< "$during")
[[ "$running" == 4 ]] || fail "during the run: $running running marks, expected 4"
[[ "$(grep -c "/running	" <<< "$after")" == 0 ]] || fail "after the run: running marks left"
for id in $ids; do
  grep -q "^/e2e/layoutjob/instances/$id	" <<< "$after" || fail "no instance node for $id"
done
[[ "$(grep -c "^/e2e/layoutjob/sharding/[0-9]/instance	" <<< "$after")" == 4 ]] ||
  fail "not 4 sharding owners"
grep -q "^/e2e/layoutjob/systemTime/current	" <<< "$after" || fail "no systemTime/current (maxTimeDiffSeconds is set)"
grep -q "^/e2e/layoutjob/guarantee/started	" <<< "$after" && fail "guarantee/started left after the run"
e2e_on_failure() { echo "--- during"; echo "$during"; echo "--- after"; echo "$after"; }
e2e_finish "the registry tree matches zk-layout.md node for node ($(wc -l <<< "$during") nodes during the run, $(wc -l <<< "$after") after)"
