#!/usr/bin/env bash
# Fixed-rate lateness on a real ZooKeeper (docs/benchmarks.md, docs/scheduling.md): two
# `elasticjob run` hosts share a `fixedRate: 1s` SCRIPT job of 2 items whose command writes
# its start time (epoch ms). Over WINDOW seconds, the lateness of each start is its distance
# past the epoch-aligned instant (a multiple of 1 s); drift would show as a lateness that
# grows from the window's first third to its last. It includes the script's spawn and the
# `date` it runs (a few ms: docs/benchmarks.md, script item start).
# Usage: fixed_rate_lateness.sh EJ_BIN ZK_SCRIPT [WINDOW_SECONDS (120)]
set -uo pipefail
window="${3:-120}"
source "$(dirname "$0")/../tests/lib/e2e.sh" "$1" "$2"
e2e_start_zookeeper 4000
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  jobs:
    rate:
      elasticJobType: SCRIPT
      fixedRate: 1s
      shardingTotalCount: 2
      props:
        script.command.line: "/bin/sh -c 'date +%s%3N >> $dir/starts'"
YAML
e2e_start_host 1 10.9.0.1 "$dir/jobs.yaml" "$url"
e2e_start_host 2 10.9.0.2 "$dir/jobs.yaml" "$url"
touch "$dir/starts"
wait_for_lines "$dir/starts" "" 10 20 || { echo "FAIL the job does not run"; exit 1; }
: > "$dir/starts"  # the window starts with both hosts in the sharding
sleep "$window"    # the measured window itself (not a wait for a condition)
awk '{ print $1 % 1000 }' "$dir/starts" | sort -n | awk -v w="$window" '
  { v[NR] = $1 }
  END {
    i50 = int((NR + 1) / 2); i99 = int(NR * 0.99); if (i99 < 1) i99 = 1
    printf "fixedRate 1s, 2 hosts, %d s: %d starts, lateness ms p50 %d  p99 %d  max %d\n",
      w, NR, v[i50], v[i99], v[NR]
  }'
n=$(wc -l < "$dir/starts")
third=$((n / 3))
first=$(head -n "$third" "$dir/starts" | awk '{ s += $1 % 1000 } END { printf "%.1f", s / NR }')
last=$(tail -n "$third" "$dir/starts" | awk '{ s += $1 % 1000 } END { printf "%.1f", s / NR }')
echo "drift: mean lateness of the first third ${first} ms, of the last third ${last} ms"
