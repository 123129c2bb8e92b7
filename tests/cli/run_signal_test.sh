#!/usr/bin/env bash
# `elasticjob run` stops gracefully whichever of its threads the kernel gives a SIGTERM:
# every thread blocks it and the main one takes it by sigwait. Sent to the first thread
# after the main one (the tracer's writer, started before the jobs), it must not end the
# process at once (exit 143, nothing flushed).
# Usage: run_signal_test.sh path/to/elasticjob
set -uo pipefail
source "$(dirname "$0")/../lib/follow_log.sh"
EJ="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

cat > "$dir/jobs.yaml" <<'YAML'
elasticjob:
  regCenter:
    namespace: signaltest
  jobs:
    tick:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 1
      props:
        script.command.line: /bin/true
YAML
: > "$dir/out.log"
"$EJ" run "$dir/jobs.yaml" --tracing "sqlite://$dir/events.db" > "$dir/out.log" 2>&1 &
pid=$!
follow_log "$dir/out.log" 1 || fail "no item run: $(tail -3 "$dir/out.log")"
tid=$(ls "/proc/$pid/task" | sort -n | grep -vx "$pid" | head -1)
[[ -n "$tid" ]] || fail "no thread besides the main one"
kill -TERM "${tid:-$pid}"
wait "$pid"; rc=$?
[[ $rc -eq 0 ]] || fail "SIGTERM to thread $tid: exited $rc: $(tail -3 "$dir/out.log")"
grep -q "SIGTERM received, shutting down" "$dir/out.log" || fail "no graceful stop: $(tail -3 "$dir/out.log")"
n=$("$EJ" trace executions --tracing "sqlite://$dir/events.db" --json | jq 'length')
[[ "${n:-0}" -ge 1 ]] || fail "the item runs were not written: $n"

if ((failures > 0)); then
  echo "$failures signal test(s) failed"
  exit 1
fi
echo "ok   run: a SIGTERM to any thread stops it gracefully"
