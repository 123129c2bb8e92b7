#!/usr/bin/env bash
# Tests of event tracing through the command line: `elasticjob run --tracing` (and the
# file's elasticjob.tracing) records item runs, trigger steps and a script's output in a
# SQLite file; `elasticjob trace executions|status|logs` reads them back as tables and JSON;
# bad usage exits 2, an unreachable database 1 with the reason; a password is never printed.
# Usage: trace_test.sh path/to/elasticjob
set -uo pipefail
source "$(dirname "$0")/../lib/follow_log.sh"
EJ="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
db="sqlite://$dir/events.db"

cat > "$dir/job.sh" <<'SH'
echo first
echo second >&2
echo third
case "$1" in *'"shardingItem":1'*) exit 4 ;; esac
SH
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  regCenter:
    namespace: tracetest
  jobs:
    orderSync:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 2
      props:
        script.command.line: /bin/sh $dir/job.sh
YAML

: > "$dir/out.log"
"$EJ" run "$dir/jobs.yaml" --tracing "$db" > "$dir/out.log" 2>&1 &
pid=$!
# Two triggers' item runs: item 0 succeeds, item 1 fails (the log counts successes).
follow_log "$dir/out.log" 2
kill -TERM "$pid" 2>/dev/null
wait "$pid"; rc=$?
[[ $rc -eq 0 ]] || fail "run --tracing exited $rc: $(tail -5 "$dir/out.log")"
grep -q "tracing to $db" "$dir/out.log" || fail "no tracing line: $(head -3 "$dir/out.log")"

json=$("$EJ" trace executions --tracing "$db" --json); rc=$?
[[ $rc -eq 0 ]] || fail "trace executions: exit $rc"
n=$(jq 'length' <<< "$json")
[[ "$n" -ge 4 ]] || fail "expected >= 4 executions, got $n: $json"
[[ $(jq '[.[] | select(.complete_time == null)] | length' <<< "$json") -eq 0 ]] ||
  fail "executions left incomplete after a graceful stop: $json"
[[ $(jq '[.[] | select(.sharding_item == 1 and .is_success)] | length' <<< "$json") -eq 0 ]] ||
  fail "item 1 should fail: $json"
# The stop sends SIGTERM to the scripts still running: it may cut short the newest trigger's
# runs (their cause: killed by signal 15), and no other. Every other item-1 run failed by
# its exit code (the first trigger's did: it ended before the second trigger ran).
stopped='(.failure_cause // "" | contains("killed by signal 15"))'
jq -e "group_by(.sharding_item) | all(.[]; sort_by(.start_time) | .[:-1] | all(.[]; $stopped | not))" \
  <<< "$json" > /dev/null || fail "a run other than the newest of its item was killed: $json"
jq -e "[.[] | select(.sharding_item == 1 and ($stopped | not))] |
       length >= 1 and all(.[]; .failure_cause | contains(\"exited with 4\"))" <<< "$json" > /dev/null ||
  fail "no failure cause 'exited with 4' for item 1: $json"
failed=$("$EJ" trace executions --tracing "$db" --failed --json | jq -c '[.[].id] | sort')
[[ "$failed" == "$(jq -c '[.[] | select(.is_success | not) | .id] | sort' <<< "$json")" &&
  "$failed" != "[]" ]] || fail "--failed: $failed"
one=$("$EJ" trace executions --tracing "$db" --item 0 --limit 1 --json | jq 'length')
[[ "$one" -eq 1 ]] || fail "--item 0 --limit 1 gave $one rows"
table=$("$EJ" trace executions --tracing "$db" --job orderSync)
[[ "$table" == ID*JOB*ITEM*SOURCE* && "$table" == *NORMAL_TRIGGER*FAILURE* ]] || fail "table: $table"
[[ $failures -eq 0 ]] && echo "ok   trace executions: rows, failures, filters, table and JSON"

status=$("$EJ" trace status --tracing "$db" --job orderSync --json)
jq -e 'any(.[]; .state == "TASK_STAGING" and .message == "Job '"'"'orderSync'"'"' execute begin.")' <<< "$status" > /dev/null ||
  fail "no TASK_STAGING: $status"
jq -e 'any(.[]; .state == "TASK_ERROR" and (.message | startswith("{1=")))' <<< "$status" > /dev/null ||
  fail "no TASK_ERROR with item 1's error: $status"
jq -e 'any(.[]; .state == "TASK_RUNNING" and .sharding_item == "[0, 1]")' <<< "$status" > /dev/null ||
  fail "no TASK_RUNNING of items [0, 1]: $status"
[[ $failures -eq 0 ]] && echo "ok   trace status: ElasticJob's states and messages"

id=$(jq -r '[.[] | select(.sharding_item == 0 and .is_success)][0].id' <<< "$json")  # not cut short
logs=$("$EJ" trace logs "$id" --tracing "$db" --json | jq -r '.level + " " + .text')
expected=$'INFO first\nINFO third'
[[ "$(grep INFO <<< "$logs")" == "$expected" ]] || fail "stdout lines: $logs"
[[ "$(grep WARN <<< "$logs")" == "WARN second" ]] || fail "stderr line: $logs"
"$EJ" trace logs "$id" --tracing "$db" | grep -q "third" || fail "logs table"
"$EJ" trace logs "$id" --tracing "$db" --follow | grep -q "third" || fail "logs --follow of an ended run"
[[ $failures -eq 0 ]] && echo "ok   trace logs: a script's output in order"

# Bad usage: 2. The database unreachable: 1, with the reason.
"$EJ" trace executions > /dev/null 2>&1; rc=$?
[[ $rc -eq 2 ]] || fail "no --tracing: exit $rc"
err=$("$EJ" trace executions --tracing "$db" --since yesterday 2>&1 >/dev/null); rc=$?
[[ $rc -eq 2 && "$err" == *"--since"*"yesterday"* ]] || fail "bad --since: exit $rc: $err"
err=$("$EJ" trace executions --tracing "oracle://x/y" 2>&1 >/dev/null); rc=$?
[[ $rc -eq 2 ]] || fail "bad URL: exit $rc: $err"
err=$("$EJ" trace executions --tracing "sqlite://$dir/none.db" 2>&1 >/dev/null); rc=$?
[[ $rc -eq 1 && "$err" == *"none.db"* ]] || fail "missing database: exit $rc: $err"
err=$("$EJ" trace status --tracing "postgresql://ej:s3cret@127.0.0.1:1/ej" 2>&1 >/dev/null); rc=$?
[[ $rc -eq 1 && "$err" == *"127.0.0.1"* && "$err" != *s3cret* ]] || fail "unreachable PostgreSQL: exit $rc: $err"
err=$("$EJ" trace logs no-such-id --tracing "$db" 2>&1 >/dev/null); rc=$?
[[ $rc -eq 1 && "$err" == *"no-such-id"* ]] || fail "unknown execution: exit $rc: $err"
[[ $failures -eq 0 ]] && echo "ok   trace: exit 2 on bad usage, 1 when the database cannot be read"

# The file's tracing key, and a password never printed while the database is unreachable.
sed "s|namespace: tracetest|namespace: tracetest2\n  tracing:\n    type: RDB\n    url: mysql://ej:s3cret@127.0.0.1:1/ej|" "$dir/jobs.yaml" > "$dir/down.yaml"
: > "$dir/down.log"
"$EJ" run "$dir/down.yaml" --shutdown-grace-ms 0 > "$dir/down.log" 2>&1 &
pid=$!
wait_for_lines "$dir/down.log" "retrying" 1 30 || fail "no retry line: $(cat "$dir/down.log")"
kill -TERM "$pid" 2>/dev/null
wait "$pid"; rc=$?
[[ $rc -eq 0 ]] || fail "run with an unreachable database exited $rc"
grep -q "mysql://ej:\*\*\*@127.0.0.1:1/ej" "$dir/down.log" || fail "no redacted URL: $(cat "$dir/down.log")"
grep -q s3cret "$dir/down.log" && fail "the password was printed: $(grep s3cret "$dir/down.log")"
[[ $failures -eq 0 ]] && echo "ok   run: the file's tracing key; a password is never printed"

if ((failures > 0)); then
  echo "$failures trace test(s) failed"
  exit 1
fi
echo "all trace tests passed"
