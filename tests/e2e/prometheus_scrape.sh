#!/usr/bin/env bash
# Debian's Prometheus server scrapes a running cluster (docs/metrics.md): two `elasticjob run`
# instances (one with event tracing), an agent and a console, each with --metrics on a free
# loopback port, on a private ZooKeeper; then every query of every panel of the Grafana
# dashboard (docs/grafana/elasticjob-dashboard.json, its $job_name variable as "All") must
# answer with at least one series.
# Usage: prometheus_scrape.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
DASHBOARD="$(cd "$(dirname "$0")/../.." && pwd)/docs/grafana/elasticjob-dashboard.json"
command -v prometheus > /dev/null || { echo "FAIL prometheus is missing (scripts/install-deps.sh installs it)"; exit 1; }
e2e_start_zookeeper 10000
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# The metrics address a process printed, host:port.
metrics_target() {
  local log="$1" i t
  for ((i = 0; i < 200; i++)); do
    t=$(grep -o 'metrics at http://[^/]*' "$log" | head -1 | sed 's#metrics at http://##')
    [[ -n "$t" ]] && { echo "$t"; return 0; }
    sleep 0.1
  done
  return 1
}
cat > "$dir/jobs.yaml" <<'YAML'
elasticjob:
  jobs:
    scraped:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 4
      failover: true
      props:
        script.command.line: /bin/true
YAML
start() {  # start NAME ARGS...: one process of the cluster, its log $dir/NAME.log
  local n="$1"
  shift
  setsid "$EJ" "$@" --metrics 127.0.0.1:0 > "$dir/$n.log" 2>&1 &
  PID[$n]=$!
  disown "$!"
}
start a run "$dir/jobs.yaml" --registry "$url" --tracing "sqlite://$dir/events.db"
start b run "$dir/jobs.yaml" --registry "$url"
start agent agent --registry "$url"
start console console --registry "$url" --listen 127.0.0.1:0
targets=()
for n in a b agent console; do
  t=$(metrics_target "$dir/$n.log") || { fail "$n: no metrics address: $(tail -3 "$dir/$n.log")"; continue; }
  targets+=("\"$t\"")
done
prom_port=$(free_port)
cat > "$dir/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: elasticjob
    static_configs:
      - targets: [$(IFS=,; echo "${targets[*]}")]
YAML
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/prom" \
  --web.listen-address="127.0.0.1:$prom_port" > "$dir/prometheus.log" 2>&1 &
PID[prometheus]=$!
disown "$!"
api="http://127.0.0.1:$prom_port/api/v1"
query() { curl -s --get --data-urlencode "query=$1" "$api/query"; }
# Every target up, and the cluster running long enough for the 1m rates (a few samples).
up=0
for ((i = 0; i < 600; i++)); do
  up=$(query 'count(up{job="elasticjob"} == 1)' | jq -r '.data.result[0].value[1] // 0' 2>/dev/null)
  [[ "$up" == 4 ]] && break
  sleep 0.1
done
[[ "$up" == 4 ]] || fail "targets up: ${up:-none} of 4: $(curl -s "$api/targets" | jq -c '[.data.activeTargets[] | {scrapeUrl, health, lastError}]')"
follow_log "$dir/a.log" 6 || fail "instance a ran no items: $(tail -3 "$dir/a.log")"
# rate() and increase() need two samples of a series: wait until every target has them.
for ((i = 0; i < 300; i++)); do
  n=$(query 'count(increase(elasticjob_registry_reconnects_total[1m]))' | jq -r '.data.result[0].value[1] // 0' 2>/dev/null)
  [[ "${n:-0}" -ge 4 ]] && break
  sleep 0.1
done
panels=0
queries=0
while IFS=$'\t' read -r title expr; do
  queries=$((queries + 1))
  q="${expr//\$job_name/.+}"
  answer=$(query "$q")
  status=$(jq -r '.status' <<< "$answer" 2>/dev/null)
  series=$(jq -r '.data.result | length' <<< "$answer" 2>/dev/null)
  if [[ "$status" != success || "${series:-0}" -lt 1 ]]; then
    fail "panel '$title': $q: $answer"
  fi
done < <(jq -r '.panels[] | .title as $t | .targets[] | [$t, .expr] | @tsv' "$DASHBOARD")
panels=$(jq '.panels | length' "$DASHBOARD")
((queries >= panels && panels >= 10)) || fail "the dashboard has $panels panels, $queries queries"
# The runs counted agree with the cluster: items ran on both instances.
runs=$(query 'sum(elasticjob_item_runs_total{job_name="scraped",outcome="success"})' | jq -r '.data.result[0].value[1] // 0')
((${runs%.*} >= 4)) || fail "item runs seen by Prometheus: $runs"
e2e_on_failure() { tail -5 "$dir/prometheus.log"; }
e2e_finish "Prometheus scraped run, agent and console; $queries queries of $panels panels answered"
