#!/usr/bin/env bash
# Page-load benchmark of the web console (docs/benchmarks.md): a private ZooKeeper with N jobs
# (default 1,000, added by `elasticjob job add`), `elasticjob console` over it (read-only: no
# login), and bench/console_page_load.mjs loading the Jobs page in headless chromium RUNS times
# (default 5): first paint, first contentful paint, table drawn, largest contentful paint.
# Usage: bench/console_page_load.sh path/to/elasticjob scripts/zk-server.sh OUT_DIR [N] [RUNS]
set -uo pipefail
EJ="$1"
ZK="$2"
OUT="$3"
N="${4:-1000}"
RUNS="${5:-5}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
source "$root/tests/lib/follow_log.sh"
source "$root/scripts/lib/ports.sh"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
[[ -x "$CHROMIUM" ]] || { echo "$CHROMIUM is missing (scripts/install-deps.sh)"; exit 1; }
bash "$root/tests/browser/npm_install.sh" "$OUT" || exit 1
cp "$here/console_page_load.mjs" "$OUT/"

dir="$(mktemp -d)"
cpid=""
cleanup() {
  [[ -n "$cpid" ]] && kill -TERM "$cpid" 2> /dev/null && wait "$cpid" 2> /dev/null
  bash "$ZK" stop "$dir/zk"
  rm -rf "$dir"
}
trap cleanup EXIT
read -r zkport _ < <(ZK_HEAP=1g bash "$ZK" start "$dir/zk") || { echo "cannot start ZooKeeper"; exit 1; }
registry="zookeeper://127.0.0.1:$zkport/pageload"
{
  echo "elasticjob:"
  echo "  jobs:"
  for i in $(seq -w 1 "$N"); do
    printf '    job-%s:\n      elasticJobType: SCRIPT\n      cron: 0 0/5 * * * ?\n' "$i"
    printf '      shardingTotalCount: 4\n      description: page-load job %s\n' "$i"
    printf '      props:\n        script.command.line: /bin/true\n'
  done
} > "$dir/jobs.yaml"
start=$(date +%s%N)
"$EJ" job add "$dir/jobs.yaml" --registry "$registry" > "$dir/add.log" 2>&1 || { echo "job add failed: $(tail -3 "$dir/add.log")"; exit 1; }
echo "added $N jobs in $((($(date +%s%N) - start) / 1000000)) ms"
cport="$(ports_pick)"
: > "$dir/console.log"
"$EJ" console --registry "$registry" --listen "127.0.0.1:$cport" > "$dir/console.log" 2>&1 &
cpid=$!
wait_for_lines "$dir/console.log" "console at" 1 30 || { echo "console did not start: $(tail -3 "$dir/console.log")"; exit 1; }
node "$OUT/console_page_load.mjs" "http://127.0.0.1:$cport/" "$N" "$RUNS"
