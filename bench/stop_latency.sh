#!/usr/bin/env bash
# Stop latency on a real ZooKeeper (docs/benchmarks.md, docs/scheduling.md): two
# `elasticjob run` hosts share a SCRIPT job of 2 items that sleep a minute. Each round
# triggers the job (`job trigger`), waits until both items run, then times
# `elasticjob job stop --item 1` from the CLI's start (its process start and ZooKeeper session
# included) to the stopped item's report line in the host's log; then stops the rest. Prints
# p50, p99 and max over the rounds.
# Usage: stop_latency.sh EJ_BIN ZK_SCRIPT [ROUNDS (200)]
set -uo pipefail
rounds="${3:-200}"
source "$(dirname "$0")/../tests/lib/e2e.sh" "$1" "$2"
e2e_start_zookeeper 4000
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  jobs:
    stopme:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 2
      props:
        script.command.line: "/bin/sh -c 'echo started >> $dir/started; exec sleep 60'"
YAML
e2e_start_host 1 10.8.0.1 "$dir/jobs.yaml" "$url"
e2e_start_host 2 10.8.0.2 "$dir/jobs.yaml" "$url"
touch "$dir/started"
: > "$dir/latencies"
for ((r = 1; r <= rounds; r++)); do
  "$EJ" job trigger stopme --registry "$url" > /dev/null || { echo "FAIL trigger $r"; exit 1; }
  wait_for_lines "$dir/started" started $((2 * r)) 20 || { echo "FAIL round $r: items did not start"; exit 1; }
  t0=$(date +%s%N)
  "$EJ" job stop stopme --item 1 --registry "$url" > /dev/null || { echo "FAIL stop $r"; exit 1; }
  wait_for_lines_in "job=stopme item=1" "$r" 20 "$dir/1.log" "$dir/2.log" ||
    { echo "FAIL round $r: item 1 was not reported"; exit 1; }
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000)) >> "$dir/latencies"
  "$EJ" job stop stopme --registry "$url" > /dev/null || { echo "FAIL stop all $r"; exit 1; }
  wait_for_lines_in "job=stopme item=0" "$r" 20 "$dir/1.log" "$dir/2.log" ||
    { echo "FAIL round $r: item 0 was not reported"; exit 1; }
done
sort -n "$dir/latencies" | awk -v n="$rounds" '
  { v[NR] = $1 }
  END {
    i99 = int(NR * 0.99); if (i99 < 1) i99 = 1
    p50 = v[int((NR + 1) * 0.50)]; p99 = v[i99]
    printf "stop --item to item reported (ms, CLI start included), %d rounds: p50 %d  p99 %d  max %d\n", NR, p50, p99, v[NR]
  }'
