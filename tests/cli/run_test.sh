#!/usr/bin/env bash
# Tests of `elasticjob run`: real jobs from a YAML file on the embedded memory:// registry,
# one log line per item run, graceful stop on SIGTERM, and clear errors for bad files.
# Usage: run_test.sh path/to/elasticjob
set -uo pipefail
source "$(dirname "$0")/../lib/follow_log.sh"
EJ="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  regCenter:
    namespace: runtest
  jobs:
    orderSync:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 3
      shardingItemParameters: 0=Beijing,1=Shanghai,2=Guangzhou
      failover: true
      props:
        script.command.line: "/bin/sh -c 'echo \$0 >> $dir/calls'"
YAML

: > "$dir/out.log"  # exists before tail follows it
"$EJ" run "$dir/jobs.yaml" > "$dir/out.log" 2>&1 &
pid=$!
# Wait (bounded) until two full triggers have run: six item lines.
follow_log "$dir/out.log" 6
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rc=$?
got=$(grep -c "outcome=SUCCESS" "$dir/out.log" || true)
[[ $rc -eq 0 ]] || fail "run exited $rc after SIGTERM"
[[ "$got" -ge 6 ]] || fail "expected >= 6 item runs, saw $got: $(cat "$dir/out.log")"
for item in 0 1 2; do
  grep -q "job=orderSync item=$item instance=.*@-@$pid outcome=SUCCESS" "$dir/out.log" ||
    fail "no successful run logged for item $item"
done
grep -q '"shardingItem":1,"shardingParameter":"Shanghai"}' "$dir/calls" ||
  fail "script did not receive the sharding context JSON: $(head -3 "$dir/calls")"
grep -q "SIGTERM received, shutting down" "$dir/out.log" || fail "no graceful shutdown message"
[[ $failures -eq 0 ]] && echo "ok   run: real jobs, one line per item, graceful SIGTERM"

# Bad files: exit 2 with the job and field named.
cat > "$dir/bad.yaml" <<'YAML'
elasticjob:
  jobs:
    broken:
      elasticJobType: SCRIPT
      cron: 0 0 25 * * ?
      shardingTotalCount: 1
      props:
        script.command.line: /bin/true
YAML
err=$("$EJ" run "$dir/bad.yaml" 2>&1 >/dev/null); rc=$?
if [[ $rc -ne 2 || "$err" != *"job 'broken'"*"hour field '25'"* ]]; then
  fail "bad cron: exit $rc, stderr: $err"
else
  echo "ok   run: invalid cron names the job and field"
fi
cat > "$dir/bad2.yaml" <<'YAML'
elasticjob:
  jobs:
    noCount:
      elasticJobType: SCRIPT
      cron: 0/5 * * * * ?
      shardingTotalCont: 3
      props:
        script.command.line: /bin/true
YAML
err=$("$EJ" run "$dir/bad2.yaml" 2>&1 >/dev/null); rc=$?
if [[ $rc -ne 2 || "$err" != *"unknown key 'shardingTotalCont'"* || "$err" != *"shardingTotalCount: must be greater than 0"* ]]; then
  fail "typo: exit $rc, stderr: $err"
else
  echo "ok   run: a misspelt key is reported"
fi
# Hostile files: exit 2 with a one-line error naming the field and value, never an abort.
bad_file() {  # NAME EXPECTED-SUBSTRING; the file is $dir/hostile.yaml
  local err rc
  err=$("$EJ" run "$dir/hostile.yaml" 2>&1 >/dev/null); rc=$?
  if [[ $rc -ne 2 || "$err" != *"$2"* || $(printf '%s\n' "$err" | wc -l) -ne 1 ]]; then
    fail "$1: exit $rc, stderr: $err"
  else
    echo "ok   run: $1 exits 2 naming the problem"
  fi
}
head -c 4096 /bin/sh > "$dir/hostile.yaml"  # binary garbage (an ELF header and code)
bad_file "binary garbage" "hostile.yaml: "
printf '5\n' > "$dir/hostile.yaml"
bad_file "a scalar top level" "expected a top-level 'elasticjob:' map"
printf 'elasticjob:\n  regCenter: 5\n  jobs:\n    j:\n      shardingTotalCount: 1\n' > "$dir/hostile.yaml"
bad_file "regCenter: 5" "elasticjob.regCenter: expected a map of settings, got '5'"
printf 'elasticjob:\n  jobs:\n    [a, b]:\n      shardingTotalCount: 1\n' > "$dir/hostile.yaml"
bad_file "a job name that is a list" "elasticjob.jobs: expected job names, got a list"
printf 'elasticjob:\n  jobs:\n    big:\n      elasticJobType: SCRIPT\n      cron: 0/5 * * * * ?\n      shardingTotalCount: 1000000000\n' > "$dir/hostile.yaml"
bad_file "a billion items" "job 'big': shardingTotalCount: must be at most"

err=$(timeout 20 "$EJ" run /dev/zero 2>&1 >/dev/null); rc=$?
if [[ $rc -ne 2 || "$err" != *"/dev/zero: larger than 16 MiB"* ]]; then
  fail "endless file: exit $rc, stderr: $err"
else
  echo "ok   run: an endless file (/dev/zero) exits 2"
fi

err=$("$EJ" run /nonexistent.yaml 2>&1 >/dev/null); rc=$?
[[ $rc -eq 2 ]] && echo "ok   run: missing file exits 2" || fail "missing file: exit $rc"

# wait_exit PID SECONDS: the exit code of our child PID; bounded: one still running after
# SECONDS is killed (exit code 137) and the check that follows fails.
wait_exit() {
  local deadline=$((SECONDS + $2))
  while kill -0 "$1" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  kill -0 "$1" 2>/dev/null && kill -9 "$1"
  wait "$1"
}

# The shutdown grace: --shutdown-grace-ms overrides the file's shutdownGraceMilliseconds; a
# script that ignores SIGTERM is killed when the grace is over, and the command exits 0.
cat > "$dir/stubborn.yaml" <<YAML
elasticjob:
  shutdownGraceMilliseconds: 600000
  jobs:
    stubborn:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 1
      props:
        script.command.line: "/bin/sh -c 'trap \"\" TERM; echo \$\$ >> $dir/stubborn.pid; while :; do sleep 1; done'"
YAML
: > "$dir/stubborn.pid"
: > "$dir/stubborn.log"
"$EJ" run "$dir/stubborn.yaml" --shutdown-grace-ms 300 > "$dir/stubborn.log" 2>&1 &
pid=$!
wait_for_lines "$dir/stubborn.pid" "" 1 30 || fail "the stubborn script did not start"
kill -TERM "$pid"
wait_exit "$pid" 30; rc=$?
script=$(head -1 "$dir/stubborn.pid")
if [[ $rc -ne 0 ]] || ! grep -q "grace of 300 ms over, killing 1 script" "$dir/stubborn.log" ||
   kill -0 "$script" 2>/dev/null; then
  fail "shutdown grace: exit $rc, script $script alive: $(kill -0 "$script" 2>/dev/null && echo yes || echo no), log: $(tail -3 "$dir/stubborn.log")"
else
  echo "ok   run: --shutdown-grace-ms bounds the wait for a script that ignores SIGTERM"
fi
# A second SIGTERM cuts the file's grace (600 s) short.
: > "$dir/stubborn.pid"
: > "$dir/stubborn.log"
"$EJ" run "$dir/stubborn.yaml" > "$dir/stubborn.log" 2>&1 &
pid=$!
wait_for_lines "$dir/stubborn.pid" "" 1 30 || fail "the stubborn script did not start"
kill -TERM "$pid"
wait_for_lines "$dir/stubborn.log" "grace 600000 ms" 1 10 || fail "no SIGTERM to the script: $(cat "$dir/stubborn.log")"
kill -TERM "$pid"
wait_exit "$pid" 30; rc=$?
if [[ $rc -ne 0 ]] || ! grep -q "second signal, killing" "$dir/stubborn.log"; then
  fail "second SIGTERM: exit $rc, log: $(tail -3 "$dir/stubborn.log")"
else
  echo "ok   run: a second SIGTERM kills the scripts at once"
fi
err=$("$EJ" run "$dir/stubborn.yaml" --shutdown-grace-ms -1 2>&1 >/dev/null); rc=$?
[[ $rc -eq 2 ]] || fail "negative --shutdown-grace-ms: exit $rc, stderr: $err"
sed 's/shutdownGraceMilliseconds: 600000/shutdownGraceMilliseconds: soon/' "$dir/stubborn.yaml" > "$dir/bad3.yaml"
err=$("$EJ" run "$dir/bad3.yaml" 2>&1 >/dev/null); rc=$?
if [[ $rc -ne 2 || "$err" != *"elasticjob.shutdownGraceMilliseconds: expected a non-negative number of milliseconds, got 'soon'"* ]]; then
  fail "bad shutdownGraceMilliseconds: exit $rc, stderr: $err"
else
  echo "ok   run: a bad shutdown grace is refused"
fi

# The registry as every command finds it: --registry, else ELASTICJOB_REGISTRY, else the
# file's regCenter; the first line says which.
registry_line() {  # env value ("" for unset), extra args...: the first line of a short run
  local env="$1"
  shift
  : > "$dir/reg.log"
  if [[ -n "$env" ]]; then
    ELASTICJOB_REGISTRY="$env" "$EJ" run "$dir/jobs.yaml" "$@" > "$dir/reg.log" 2>&1 &
  else
    env -u ELASTICJOB_REGISTRY "$EJ" run "$dir/jobs.yaml" "$@" > "$dir/reg.log" 2>&1 &
  fi
  local p=$!
  wait_for_lines "$dir/reg.log" "scheduled" 1 20 > /dev/null
  kill -TERM "$p" 2>/dev/null
  wait "$p"
  head -1 "$dir/reg.log"
}
for case in "memory://fromenv||elasticjob: registry memory://fromenv (from ELASTICJOB_REGISTRY; in this process only)" \
            "memory://fromenv|--registry memory://fromflag|elasticjob: registry memory://fromflag (from --registry; in this process only)" \
            "||elasticjob: registry memory://runtest (from the file's regCenter; in this process only)"; do
  IFS='|' read -r env args want <<< "$case"
  # shellcheck disable=SC2086
  got=$(registry_line "$env" $args)
  [[ "$got" == "$want" ]] || fail "run's registry with ELASTICJOB_REGISTRY='$env' and '$args': $got"
done
grep -q "job 'orderSync' scheduled (SCRIPT, cron '0/1 \* \* \* \* ?') on memory://runtest" "$dir/reg.log" ||
  fail "run did not schedule on the file's registry: $(cat "$dir/reg.log")"
((failures > 0)) || echo "ok   run: the registry from --registry, ELASTICJOB_REGISTRY or the file, named at start"

# The executable's jemalloc options (src/infra/jemalloc_conf.cc), where it links jemalloc
# (not in sanitizer builds): jemalloc prints the options in force at exit when asked.
if ldd "$EJ" | grep -q libjemalloc; then
  opts=$(MALLOC_CONF=stats_print:true "$EJ" --help 2>&1)
  if [[ "$opts" != *"opt.background_thread: true"* || "$opts" != *"opt.dirty_decay_ms: 30000"* ]]; then
    fail "jemalloc options not in force: $(grep -E 'opt\.(background_thread|dirty_decay_ms)' <<< "$opts")"
  else
    echo "ok   run: jemalloc purges from its background thread"
  fi
fi

if ((failures > 0)); then
  echo "$failures run test(s) failed"
  exit 1
fi
echo "all run tests passed"
