#!/usr/bin/env bash
# The web console in a real headless browser (ctest browser.console, label browser): a private
# ZooKeeper, `elasticjob run` with three small SCRIPT jobs traced to SQLite, `elasticjob
# console` over them with an admin and a guest account, and a second console without accounts
# or tracing (read-only); console.test.mjs then drives Debian's chromium through
# puppeteer-core (pinned by package-lock.json, installed by `npm ci` into OUT; nothing
# downloads a browser) and saves screenshots in OUT/screenshots. Everything started here is
# stopped by PID (process groups) on exit.
# Exits 77 (skipped, with the reason) only when node, npm's packages or chromium cannot be had.
# Usage: console_test.sh path/to/elasticjob path/to/zk-server.sh OUT_DIR
set -uo pipefail
EJ="$1"
ZK="$2"
OUT="$3"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../lib/follow_log.sh"
source "$here/../../scripts/lib/ports.sh"
skip() {
  echo "SKIP $*"
  exit 77
}

# The browser and its driver.
command -v node > /dev/null || skip "node is not installed (scripts/install-deps.sh: nodejs npm)"
[[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 18 ]] || skip "node $(node --version) is older than 18"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
[[ -x "$CHROMIUM" ]] || skip "$CHROMIUM is not installed (scripts/install-deps.sh: chromium)"
bash "$here/npm_install.sh" "$OUT" || skip "puppeteer-core could not be installed by npm ci (no npm registry and no cache)"

dir="$(mktemp -d)"
declare -a PIDS=()
cleanup() {
  [[ -s "$dir/console.pid" ]] && PIDS+=("$(cat "$dir/console.pid")")
  for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2> /dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    kill -9 -- "-$p" 2> /dev/null
  done
  bash "$ZK" stop "$dir/zk"
  rm -rf "$dir"
}
trap cleanup EXIT

read -r zkport _ < <(bash "$ZK" start "$dir/zk") || { echo "FAIL cannot start ZooKeeper"; exit 1; }
registry="zookeeper://127.0.0.1:$zkport/browser"
tracing="sqlite://$dir/trace.db"

# `manual` fires only when triggered (its cron's next time is in 2099), as does `hang`, whose
# item sleeps a minute (the Stop button ends it); `html` runs every 10 s
# (the overview's chart) and has an HTML description that must show as text; `failing` fails
# every 10 s (the overview's recent failures).
cat > "$dir/jobs.yaml" << 'YAML'
elasticjob:
  jobs:
    manual:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 2
      timeZone: Asia/Shanghai
      description: Runs when triggered
      props:
        script.command.line: /bin/echo console-test-output
    html:
      elasticJobType: SCRIPT
      cron: 0/10 * * * * ?
      shardingTotalCount: 2
      description: '<img src=x onerror="window.__xss=1">'
      props:
        script.command.line: /bin/true
    failing:
      elasticJobType: SCRIPT
      cron: 0/10 * * * * ?
      shardingTotalCount: 1
      props:
        script.command.line: /bin/false
    hang:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ? 2099
      shardingTotalCount: 1
      props:
        script.command.line: /bin/sh -c 'exec sleep 60'
YAML
: > "$dir/run.log"
setsid "$EJ" run "$dir/jobs.yaml" --registry "$registry" --tracing "$tracing" > "$dir/run.log" 2>&1 &
PIDS+=($!)
wait_for_lines "$dir/run.log" "scheduled" 4 30 || { echo "FAIL elasticjob run did not start: $(tail -5 "$dir/run.log")"; exit 1; }
# The tracing database is created with the first events: `html`'s first run (within 10 s).
follow_log "$dir/run.log" 1 || { echo "FAIL html did not run: $(tail -5 "$dir/run.log")"; exit 1; }
for _ in $(seq 1 100); do [[ -s "$dir/trace.db" ]] && break; sleep 0.1; done
[[ -s "$dir/trace.db" ]] || { echo "FAIL no tracing database after html's first run"; exit 1; }

admin_pw="admin-$RANDOM$RANDOM"
guest_pw="guest-$RANDOM$RANDOM"
admin_hash="$(printf '%s\n' "$admin_pw" | "$EJ" console hash-password)" || { echo "FAIL hash-password"; exit 1; }
guest_hash="$(printf '%s\n' "$guest_pw" | "$EJ" console hash-password)" || { echo "FAIL hash-password"; exit 1; }
cat > "$dir/users.yaml" << YAML
users:
  - name: alice
    role: admin
    passwordHash: "$admin_hash"
  - name: gus
    role: guest
    passwordHash: "$guest_hash"
YAML

# The console, on a free port (retried on another if that one is taken meanwhile), through a
# script that console.test.mjs runs again to restart it (its PID goes into console.pid).
for attempt in 1 2 3; do
  cport="$(ports_pick)"
  cat > "$dir/console.sh" << SH
exec "$EJ" console --registry "$registry" --tracing "$tracing" --users "$dir/users.yaml" \
  --listen "127.0.0.1:$cport"
SH
  : > "$dir/console.log"
  setsid bash "$dir/console.sh" > "$dir/console.log" 2>&1 &
  cpid=$!
  echo "$cpid" > "$dir/console.pid"
  if wait_for_lines "$dir/console.log" "console at" 1 30; then break; fi
  kill -9 -- "-$cpid" 2> /dev/null
  cport=""
  grep -qi "address already in use\|bind" "$dir/console.log" || break
done
[[ -n "$cport" ]] || { echo "FAIL elasticjob console did not start: $(tail -5 "$dir/console.log")"; exit 1; }

# A second console without --users and without --tracing (read-only, no login), over two
# namespaces: the jobs' and an empty one.
: > "$dir/console-ro.log"
for attempt in 1 2 3; do
  roport="$(ports_pick)"
  setsid "$EJ" console --registry "$registry" --registry "zookeeper://127.0.0.1:$zkport/empty" \
    --listen "127.0.0.1:$roport" > "$dir/console-ro.log" 2>&1 &
  ropid=$!
  if wait_for_lines "$dir/console-ro.log" "console at" 1 30; then break; fi
  kill -9 -- "-$ropid" 2> /dev/null
  roport=""
  grep -qi "address already in use\|bind" "$dir/console-ro.log" || break
done
[[ -n "$roport" ]] || { echo "FAIL the read-only console did not start: $(tail -5 "$dir/console-ro.log")"; exit 1; }
PIDS+=("$ropid")

mkdir -p "$OUT/screenshots"
rm -f "$OUT/screenshots"/*.png
READONLY_URL="http://127.0.0.1:$roport/" CONSOLE_URL="http://127.0.0.1:$cport/" SHOTS="$OUT/screenshots" EJ="$EJ" REGISTRY="$registry" \
  CONSOLE_SCRIPT="$dir/console.sh" CONSOLE_PIDFILE="$dir/console.pid" CONSOLE_LOG="$dir/console.log" \
  TRIGGER_JOB=manual OTHER_JOB=html HANG_JOB=hang ADMIN_USER=alice ADMIN_PASSWORD="$admin_pw" \
  GUEST_USER=gus GUEST_PASSWORD="$guest_pw" timeout 150 node "$OUT/console.test.mjs"
rc=$?
if ((rc != 0)); then
  echo "--- console log"
  tail -30 "$dir/console.log"
  echo "--- run log"
  tail -15 "$dir/run.log"
  exit 1
fi
echo "ok   the web console in chromium: login, jobs, live trigger and disable, editor, guest"
