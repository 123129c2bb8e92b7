#!/usr/bin/env bash
# Tests of `elasticjob console` and `elasticjob run --console` on the embedded memory://
# registry: start-up and stop, the URL printed, the API and page answering, the read-only
# default, hash-password, the errors for bad options (exit 2) and for a port in use (exit 1).
# Usage: console_test.sh path/to/elasticjob
set -uo pipefail
source "$(dirname "$0")/../lib/follow_log.sh"
EJ="$1"
dir="$(mktemp -d)"
declare -a PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# The URL a console printed ("elasticjob: console at http://127.0.0.1:PORT...").
console_url() {
  wait_for_lines "$1" "elasticjob: console at " 1 30 || return 1
  grep -o 'http://127.0.0.1:[0-9]*' "$1" | head -1
}

# hash-password: an argon2id hash of the line on stdin; an empty one is refused.
hash=$(echo "s3cret" | "$EJ" console hash-password)
[[ $? -eq 0 && "$hash" == '$argon2id$'* ]] || fail "hash-password printed '$hash'"
echo "" | "$EJ" console hash-password > /dev/null 2>&1
[[ $? -eq 2 ]] || fail "an empty password should exit 2"

# Bad options: exit 2 with one line naming the problem.
out=$("$EJ" console --registry memory://c --listen 0.0.0.0:0 2>&1)
[[ $? -eq 2 && "$out" == *"not a loopback address"*"--users"* ]] || fail "non-loopback: $out"
printf 'users:\n  - name: a\n    role: boss\n    passwordHash: x\n' > "$dir/bad.yaml"
out=$("$EJ" console --registry memory://c --users "$dir/bad.yaml" 2>&1)
[[ $? -eq 2 && "$out" == *"bad.yaml:3: role: 'boss'"* ]] || fail "bad users file: $out"
out=$("$EJ" console --registry memory://c --listen nonsense 2>&1)
[[ $? -eq 2 && "$out" == *"--listen 'nonsense'"* ]] || fail "bad --listen: $out"
out=$("$EJ" console 2>&1)
[[ $? -eq 2 && "$out" == *"--registry"* ]] || fail "no registry: $out"

# The console over a namespace: read-only by default, the page and the API answer.
: > "$dir/console.log"
"$EJ" console --registry memory://c --listen 127.0.0.1:0 > "$dir/console.log" 2>&1 &
PIDS+=($!)
pid=$!
url=$(console_url "$dir/console.log") || fail "console did not start: $(cat "$dir/console.log")"
grep -q "read-only: no --users" "$dir/console.log" || fail "read-only not said: $(cat "$dir/console.log")"
page=$(curl -s "$url/")
[[ "$page" == *"<html"* ]] || fail "GET / gave: $page"
session=$(curl -s "$url/api/v1/session")
[[ "$session" == *'"authEnabled":false'* && "$session" == *'"readOnly":true'* ]] ||
  fail "session: $session"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url/api/v1/registries/0/jobs/x/trigger")
[[ "$code" == 403 ]] || fail "a change on the read-only console gave $code"

# A second console on the port in use fails at start (exit 1, the address named), and so
# does `run --console`; the first keeps serving every request.
address="${url#http://}"
out=$(timeout 20 "$EJ" console --registry memory://c --listen "$address" 2>&1)
rc=$?
[[ $rc -eq 1 && "$out" == *"$address"*"in use"* ]] || fail "second console on $address: rc $rc: $out"
printf 'elasticjob:\n  jobs:\n    idle:\n      elasticJobType: SCRIPT\n      cron: 0 0 0 1 1 ?\n      shardingTotalCount: 1\n      props:\n        script.command.line: "true"\n' > "$dir/idle.yaml"
out=$(timeout 20 "$EJ" run "$dir/idle.yaml" --console "$address" 2>&1)
rc=$?
[[ $rc -eq 1 && "$out" == *"$address"*"in use"* ]] || fail "run --console on $address: rc $rc: $out"
for _ in $(seq 1 20); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$url/api/v1/session")
  [[ "$code" == 200 ]] || { fail "the first console answered $code after a second one tried its port"; break; }
done
kill -TERM "$pid"
wait "$pid"
rc=$?
[[ $rc -eq 0 ]] || fail "console exited $rc after SIGTERM"

# `run --console`: the jobs of the file, served from the running process.
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  regCenter:
    namespace: consoletest
  jobs:
    served:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ?
      shardingTotalCount: 2
      description: "<b>shown as data</b>"
      props:
        script.command.line: "true"
YAML
: > "$dir/run.log"
"$EJ" run "$dir/jobs.yaml" --console 127.0.0.1:0 > "$dir/run.log" 2>&1 &
PIDS+=($!)
pid=$!
url=$(console_url "$dir/run.log") || fail "run --console did not start: $(cat "$dir/run.log")"
jobs=$(curl -s "$url/api/v1/registries/0/jobs")
[[ "$jobs" == *'"name":"served"'* && "$jobs" == *'"description":"<b>shown as data</b>"'* ]] ||
  fail "jobs: $jobs"
kill -TERM "$pid"
wait "$pid"
rc=$?
[[ $rc -eq 0 ]] || fail "run --console exited $rc after SIGTERM"

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "console_test: all passed"
