#!/usr/bin/env bash
# `--metrics` and `--log-format json` of `run`, `agent` and `console` (docs/metrics.md): a bad
# address is refused naming the flag and value; /metrics passes Prometheus's own parser
# (`promtool check metrics`) and counts the item runs; /healthz answers; /readyz answers 200
# once the jobs are scheduled; every line the process prints is one JSON object with time,
# level, job, item, instance and message.
# Usage: metrics_test.sh path/to/elasticjob
set -uo pipefail
EJ="$1"
dir="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
command -v promtool > /dev/null || { echo "FAIL promtool is missing (scripts/install-deps.sh installs prometheus)"; exit 1; }

# The address of the metrics server a process printed ("metrics at http://H:P/metrics").
metrics_base() {
  local log="$1" i
  for ((i = 0; i < 100; i++)); do
    local url
    url=$(grep -o 'metrics at http://[^/"]*' "$log" | head -1 | sed 's/metrics at //')
    [[ -n "$url" ]] && { echo "$url"; return 0; }
    sleep 0.1
  done
  return 1
}
# ready BASE: waits (at most 20 s) until /readyz answers 200.
ready() {
  local i
  for ((i = 0; i < 200; i++)); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' "$1/readyz")" == 200 ]] && return 0
    sleep 0.1
  done
  return 1
}
# json_lines FILE: every line is one JSON object with the six fields.
json_lines() {
  python3 - "$1" <<'PY'
import json, sys
bad = 0
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    try:
        o = json.loads(line)
        assert set(o) == {"time", "level", "job", "item", "instance", "message"}, sorted(o)
    except Exception as e:
        print(f"line {n}: {e}: {line!r}")
        bad += 1
sys.exit(1 if bad else 0)
PY
}

cat > "$dir/jobs.yaml" <<'YAML'
elasticjob:
  regCenter:
    namespace: metricstest
  jobs:
    tick:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 2
      props:
        script.command.line: "/bin/echo a line of output"
    slow:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 1
      props:
        script.command.line: "/bin/sh -c 'exec sleep 60'"
YAML

# Bad addresses: exit 2 (malformed) naming the flag and the value; 1 when taken.
out=$("$EJ" run "$dir/jobs.yaml" --metrics nonsense 2>&1); rc=$?
[[ $rc -eq 2 ]] || fail "--metrics nonsense: exit $rc"
[[ "$out" == *"--metrics 'nonsense': expected host:port"* ]] || fail "--metrics nonsense: $out"
out=$("$EJ" console --registry memory://x --metrics 127.0.0.1:70000 2>&1); rc=$?
[[ $rc -eq 2 && "$out" == *"--metrics '127.0.0.1:70000'"* ]] || fail "console --metrics :70000: exit $rc: $out"
out=$("$EJ" agent --registry memory://x --log-format yaml 2>&1); rc=$?
[[ $rc -ne 0 && "$out" == *"--log-format"* ]] || fail "--log-format yaml: exit $rc: $out"

# run: JSON logs, metrics.
"$EJ" run "$dir/jobs.yaml" --metrics 127.0.0.1:0 --log-format json > "$dir/run.out" 2> "$dir/run.err" &
pids+=($!)
run_pid=$!
base=$(metrics_base "$dir/run.out") || fail "run: no metrics address: $(head -3 "$dir/run.out" "$dir/run.err")"
ready "$base" || fail "run: /readyz never 200: $(curl -s "$base/readyz")"
[[ "$(curl -s "$base/healthz")" == ok ]] || fail "run: /healthz"
# A port in use: exit 1, naming it.
port=${base##*:}
out=$("$EJ" run "$dir/jobs.yaml" --metrics "127.0.0.1:$port" 2>&1); rc=$?
[[ $rc -eq 1 && "$out" == *"--metrics 127.0.0.1:$port: cannot listen there (address already in use)"* ]] \
  || fail "a taken port: exit $rc: $out"
# Item runs counted (two items a second).
runs=0
for ((i = 0; i < 100; i++)); do
  curl -s "$base/metrics" > "$dir/metrics.txt"
  runs=$(sed -n 's/^elasticjob_item_runs_total{job_name="tick",outcome="success"} //p' "$dir/metrics.txt")
  [[ "${runs:-0}" -ge 4 ]] && break
  sleep 0.1
done
[[ "${runs:-0}" -ge 4 ]] || fail "run: item runs not counted: '$runs'"
promtool check metrics < "$dir/metrics.txt" > "$dir/promtool.txt" 2>&1 \
  || fail "promtool check metrics: $(cat "$dir/promtool.txt")"
grep -q '^elasticjob_trigger_lateness_seconds_bucket{job_name="tick",le="+Inf"} [1-9]' "$dir/metrics.txt" \
  || fail "run: no lateness observed"
grep -q '^elasticjob_registry_session_state{registry="metricstest",state="connected"} 1$' "$dir/metrics.txt" \
  || fail "run: registry state"
kill -TERM "$run_pid"
wait "$run_pid"; rc=$?
[[ $rc -eq 0 ]] || fail "run: exit $rc after SIGTERM"
grep -q '"message":"SIGTERM sent to 1 running script(s), grace' "$dir/run.out" \
  || fail "run: the graceful stop's lines are not JSON: $(tail -3 "$dir/run.out")"
json_lines "$dir/run.out" || fail "run: stdout is not JSON lines"
json_lines "$dir/run.err" || fail "run: stderr is not JSON lines"
python3 - "$dir/run.out" "$dir/run.err" <<'PY' || fail "run: item lines lack their fields"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if "outcome=SUCCESS" in l]
assert runs and all(o["job"] == "tick" and o["item"] in (0, 1) and "@-@" in o["instance"] for o in runs), runs[:2]
out = [json.loads(l) for l in open(sys.argv[2]) if "a line of output" in l]
assert out and all(o["job"] == "tick" and o["item"] in (0, 1) for o in out), out[:2]
PY

# agent and console: health and readiness on their own registries.
"$EJ" agent --registry memory://metricstest --metrics 127.0.0.1:0 --log-format json > "$dir/agent.out" 2>&1 &
pids+=($!)
disown $!  # killed at the end: no job notice
base=$(metrics_base "$dir/agent.out") || fail "agent: no metrics address: $(head -3 "$dir/agent.out")"
ready "$base" || fail "agent: /readyz never 200: $(curl -s "$base/readyz")"
curl -s "$base/metrics" > "$dir/agent-metrics.txt"
promtool check metrics < "$dir/agent-metrics.txt" > "$dir/promtool.txt" 2>&1 || fail "agent: promtool: $(cat "$dir/promtool.txt")"
"$EJ" console --registry memory://metricstest --listen 127.0.0.1:0 --metrics 127.0.0.1:0 --log-format json > "$dir/console.out" 2>&1 &
pids+=($!)
disown $!
base=$(metrics_base "$dir/console.out") || fail "console: no metrics address: $(head -3 "$dir/console.out")"
ready "$base" || fail "console: /readyz never 200: $(curl -s "$base/readyz")"
[[ "$(curl -s "$base/healthz")" == ok ]] || fail "console: /healthz"
curl -s "$base/metrics" > "$dir/console-metrics.txt"
grep -q '^elasticjob_registry_session_state{registry="metricstest",state="connected"} 1$' "$dir/console-metrics.txt" \
  || fail "console: its registry is not shown"
json_lines "$dir/agent.out" || fail "agent: output is not JSON lines"
json_lines "$dir/console.out" || fail "console: output is not JSON lines"

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "ok   metrics, health, readiness and JSON logs of run, agent and console"
