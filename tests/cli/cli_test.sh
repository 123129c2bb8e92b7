#!/usr/bin/env bash
# Tests of the `elasticjob` command line: exact output and exit codes.
# Usage: cli_test.sh path/to/elasticjob
set -uo pipefail
EJ="$1"
failures=0

expect_output() {  # name, expected stdout, command...
  local name="$1" expected="$2"
  shift 2
  local out rc
  out="$("$@" 2>/tmp/ej_cli_err.$$)"
  rc=$?
  if [[ $rc -ne 0 || "$out" != "$expected" ]]; then
    echo "FAIL $name (exit $rc)"
    echo "--- expected"; echo "$expected"; echo "--- got"; echo "$out"; cat /tmp/ej_cli_err.$$
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

# check NAME WANT_CODE NEEDLE OUTPUT CODE: the exit code and a substring of the output.
check() {
  if [[ $5 -ne $2 || "$4" != *"$3"* ]]; then
    echo "FAIL $1: exit $5 (want $2), output: $4"
    failures=$((failures + 1))
  else
    echo "ok   $1"
  fi
}
expect_error() {  # name, exit code, stderr substring, command...
  local name="$1" code="$2" needle="$3" err
  shift 3
  err="$("$@" 2>&1 >/dev/null)"
  check "$name" "$code" "$needle" "$err" $?
}
expect_contains() {  # name, stdout substring (exit 0), command...
  local name="$1" needle="$2" out
  shift 2
  out="$("$@" 2>&1)"
  check "$name" 0 "$needle" "$out" $?
}

tab=$'\t'
expect_output "cron next with zone, ISO start and count" \
"1795305605000${tab}2026-11-22T08:00:05+08:00
1795305610000${tab}2026-11-22T08:00:10+08:00
1795305615000${tab}2026-11-22T08:00:15+08:00" \
  "$EJ" cron next "0/5 * * * * ?" --tz Asia/Shanghai --from 2026-11-22T08:00:00 -n 3

expect_output "cron next from epoch millis in GMT+08:00" \
"1769745600000${tab}2026-01-30T12:00:00+08:00
1780027200000${tab}2026-05-29T12:00:00+08:00" \
  "$EJ" cron next "0 0 12 ? * 6#5" --tz GMT+08:00 --from 1767225600000 -n 2

expect_output "cron next skips a spring-forward gap" \
"1773037800000${tab}2026-03-09T02:30:00-04:00" \
  "$EJ" cron next "0 30 2 * * ?" --tz America/New_York --from 2026-03-08T00:00:00 -n 1

expect_output "cron next prints fewer lines when the expression stops firing" \
"1798761600000${tab}2027-01-01T00:00:00+00:00" \
  "$EJ" cron next "0 0 0 1 1 ? 2027" --tz UTC --from 2026-06-01T00:00:00Z -n 5

expect_output "cron next prints nothing for an expression that never fires" "" \
  "$EJ" cron next "0 0 0 30 2 ?" --tz UTC -n 3

expect_output "cron next defaults to one line" \
"1795305605000${tab}2026-11-22T08:00:05+08:00" \
  "$EJ" cron next "0/5 * * * * ?" --tz Asia/Shanghai --from 2026-11-22T08:00:00

expect_error "invalid cron exits 2 naming the field" 2 "hour field '25'" \
  "$EJ" cron next "0 0 25 * * ?"
expect_error "unknown zone exits 2" 2 "unknown time zone 'Mars/Olympus'" \
  "$EJ" cron next "0 0 0 * * ?" --tz Mars/Olympus
expect_error "--from beyond int64 exits 2" 2 "--from: 9999999999999999999 is out of range" \
  "$EJ" cron next "0 0 0 * * ?" --from 9999999999999999999
expect_error "--from past year 9999 exits 2" 2 "--from: 9000000000000000000 is out of range" \
  "$EJ" cron next "0 0 0 * * ?" --from 9000000000000000000
expect_error "bad --from exits 2" 2 "--from" \
  "$EJ" cron next "0 0 0 * * ?" --from yesterday
expect_error "missing expression exits 2" 2 "expression" "$EJ" cron next

expect_output "sharding plan sorts ids descending (AVG_ALLOCATION)" \
"c${tab}0,1,6
b${tab}2,3,7
a${tab}4,5" \
  "$EJ" sharding plan --job myJob --items 8 a b c

expect_output "sharding plan ODEVITY" \
"host2${tab}0
host1${tab}1
host0${tab}" \
  "$EJ" sharding plan --job 1 --items 2 --strategy ODEVITY host0 host1 host2

expect_output "sharding plan ROUND_ROBIN over the leader's list" \
"10.0.0.3@-@1${tab}1
10.0.0.2@-@1${tab}
10.0.0.1@-@1${tab}0" \
  "$EJ" sharding plan --job 2 --items 2 --strategy ROUND_ROBIN 10.0.0.1@-@1 10.0.0.2@-@1 10.0.0.3@-@1

expect_error "unknown strategy exits 2" 2 "unknown strategy 'RANDOM'" \
  "$EJ" sharding plan --job j --items 2 --strategy RANDOM a
expect_error "items must be positive" 2 "--items: must be greater than 0, got 0" \
  "$EJ" sharding plan --job j --items 0 a
expect_error "items are bounded" 2 "--items: must be at most 500, got 1000000000" \
  "$EJ" sharding plan --job j --items 1000000000 a
expect_error "duplicate instance ids rejected" 2 "given twice" \
  "$EJ" sharding plan --job j --items 2 a a

# The operation commands without a server (memory:// is empty in a new process); against
# ZooKeeper: tests/e2e/job_commands.sh.
expect_output "job list of an empty namespace" "JOB  STATUS  CRON  INSTANCES  ITEMS  DESCRIPTION" \
  "$EJ" job list --registry memory://cli
expect_output "job list --json of an empty namespace" "[]" "$EJ" job list --registry memory://cli --json
expect_output "the registry from ELASTICJOB_REGISTRY" "[]" \
  env ELASTICJOB_REGISTRY=memory://cli "$EJ" server list --json
expect_error "unknown job exits 1" 1 "job 'nope' not found" "$EJ" job show nope --registry memory://cli
expect_error "no registry exits 2" 2 "no registry: give --registry URL or set ELASTICJOB_REGISTRY" \
  env -u ELASTICJOB_REGISTRY "$EJ" job list
expect_error "a malformed registry URL exits 2" 2 "--registry" "$EJ" job list --registry nope://x
expect_error "a job name with a slash exits 2" 2 "job 'a/b'" "$EJ" job show a/b --registry memory://cli
expect_error "a missing config file exits 1" 1 "cannot be read" \
  "$EJ" job add /nonexistent.yaml --registry memory://cli

# The command line itself: --version, help, a mistyped command.
version=$("$EJ" --version); rc=$?
if [[ $rc -ne 0 || ! "$version" =~ ^elasticjob\ [0-9]+\.[0-9]+\.[0-9]+(\ \(commit\ [0-9a-f]{7,}\))?$ ]]; then
  echo "FAIL --version: exit $rc, printed: $version"; failures=$((failures + 1))
else
  echo "ok   --version prints the version (and the commit): $version"
fi
expect_contains "help prints the program's help" "Subcommands:" "$EJ" help
expect_contains "help COMMAND prints the command's help" "Disable or enable one item of a job" \
  "$EJ" help job
expect_contains "help of a nested command" "Skip an item from the next trigger on" \
  "$EJ" help job item
expect_error "a mistyped command is named with the closest one" 2 \
  "unknown command 'jobs'; did you mean 'job'?" "$EJ" jobs
expect_error "a mistyped subcommand is named with the closest one" 2 \
  "unknown command 'job lsit'; did you mean 'job list'?" "$EJ" job lsit --registry memory://cli
expect_error "a word close to no command lists the commands" 2 \
  "unknown command 'frobnicate'; the commands are: cron, sharding, run, job" "$EJ" frobnicate
expect_error "help of an unknown command" 2 "unknown command 'job lsit'" "$EJ" help job lsit
expect_error "a command without its subcommand prints its help" 2 "'job item' needs a command" \
  "$EJ" job item

# Input echoed into an error is escaped: a binary file's bytes show as \xNN.
printf 'a: "\\\xfe"\n' > /tmp/ej_cli_bin.$$
expect_error "a binary job file's bytes are escaped (run)" 2 'unknown escape character: \xFE' \
  "$EJ" run /tmp/ej_cli_bin.$$
expect_error "a binary config file's bytes are escaped (config set)" 1 'unknown escape character: \x' \
  "$EJ" job config set j /tmp/ej_cli_bin.$$ --registry memory://cli
expect_error "an item that is not a number is named, not a 300-digit range" 1 "job 'nope' not found" \
  "$EJ" job item disable nope x --registry memory://cli
rm -f /tmp/ej_cli_bin.$$

# The agent names the registry it follows without its digest (a password).
out=$(timeout -s INT 2 "$EJ" agent --registry 'memory://cli?digest=user:s3cret' 2>&1)
if [[ "$out" != *"agent: following memory://cli?digest=***"* || "$out" == *s3cret* ]]; then
  echo "FAIL the agent's registry line: $out"; failures=$((failures + 1))
else
  echo "ok   the agent names its registry with the digest redacted"
fi

rm -f /tmp/ej_cli_err.$$
if ((failures > 0)); then
  echo "$failures CLI test(s) failed"
  exit 1
fi
echo "all CLI tests passed"
