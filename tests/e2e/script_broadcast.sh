#!/usr/bin/env bash
# A SCRIPT job broadcast by its prop (`task.broadcast: "true"`, docs/task-models.md) through
# `elasticjob run` on three hosts of a real ZooKeeper: every trigger runs the script once on
# each live instance, all with the run's id as taskId.
# Usage: script_broadcast.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
e2e_start_zookeeper
mkdir -p "$dir/out"
# The script appends the sharding context's taskId (the run id) to a file of its parent's pid.
cat > "$dir/ran.sh" <<SH
#!/bin/sh
echo "\$1" | sed 's/.*"taskId":"\([^"]*\)".*/\1/' >> "$dir/out/\$PPID"
SH
chmod +x "$dir/ran.sh"
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  jobs:
    everywhere:
      elasticJobType: SCRIPT
      cron: 0/2 * * * * ?
      shardingTotalCount: 1
      props:
        script.command.line: $dir/ran.sh
        task.broadcast: "true"
YAML
e2e_start_host a 10.1.1.1 "$dir/jobs.yaml" "$url"
e2e_start_host b 10.1.1.2 "$dir/jobs.yaml" "$url"
e2e_start_host c 10.1.1.3 "$dir/jobs.yaml" "$url"
# Two full runs: some run id written by all three.
full=0
for _ in $(seq 1 60); do  # at most 30 s
  full=$(cat "$dir"/out/* 2>/dev/null | sort | uniq -c | awk '$1 == 3' | wc -l)
  ((full >= 2)) && break
  sleep 0.5
done
((full >= 2)) || fail "fewer than two runs on all three: $(cat "$dir"/out/* 2>/dev/null | sort | uniq -c)"
[[ $(ls "$dir/out" | wc -l) == 3 ]] || fail "ran in $(ls "$dir/out" | wc -l) processes, not 3"
over=$(cat "$dir"/out/* | sort | uniq -c | awk '$1 > 3' | wc -l)
[[ $over == 0 ]] || fail "a run ran more than once on an instance"
e2e_on_failure() { for f in "$dir"/?.log; do echo "== $f"; tail -n 10 "$f"; done; }
e2e_finish "script broadcast by prop: every run once on each of three instances"
