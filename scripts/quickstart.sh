#!/usr/bin/env bash
# Builds the `elasticjob` command on a fresh Debian 12 machine and shows it working: previewing
# a cron's fire times and a job's sharding plan, then running real jobs from
# examples/quickstart.yaml on the embedded registry for a few seconds. No servers needed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target elasticjob_cli
EJ=build/release/src/cli/elasticjob

echo
echo "\$ elasticjob cron next \"0/5 * * * * ?\" --tz Asia/Shanghai -n 3"
"$EJ" cron next "0/5 * * * * ?" --tz Asia/Shanghai -n 3
echo
echo "\$ elasticjob cron next \"0 30 2 * * ?\" --tz America/New_York --from 2026-03-07T00:00:00 -n 3"
echo "  (2026-03-08 02:30 does not exist in New York: Quartz skips that day, so do we)"
"$EJ" cron next "0 30 2 * * ?" --tz America/New_York --from 2026-03-07T00:00:00 -n 3
echo
echo "\$ elasticjob sharding plan --job orderSync --items 10 10.0.0.1@-@4242 10.0.0.2@-@4242 10.0.0.3@-@4242"
"$EJ" sharding plan --job orderSync --items 10 10.0.0.1@-@4242 10.0.0.2@-@4242 10.0.0.3@-@4242
echo
echo "\$ elasticjob cron next \"0 0 25 * * ?\"   # a mistake is caught before deploying"
"$EJ" cron next "0 0 25 * * ?" || echo "(exit $?)"
echo
# The HTTP job's endpoint (examples/quickstart.yaml): a throwaway web server on
# 127.0.0.1:18089, stopped by its PID when this script ends.
web_dir=$(mktemp -d)
python3 -m http.server 18089 --bind 127.0.0.1 --directory "$web_dir" >/dev/null 2>&1 &
web_pid=$!
trap 'kill "$web_pid" 2>/dev/null || true; rm -rf "$web_dir"' EXIT
for _ in $(seq 50); do
  (exec 3<>/dev/tcp/127.0.0.1/18089) 2>/dev/null && break
  sleep 0.1
done
echo "\$ elasticjob run examples/quickstart.yaml   # real jobs; stopped after 7 s (Ctrl-C normally)"
timeout -s INT 7 "$EJ" run examples/quickstart.yaml || true
