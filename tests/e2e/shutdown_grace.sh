#!/usr/bin/env bash
# End to end on a real ZooKeeper: SIGTERM with running scripts that do not end on their own.
# One `elasticjob run` process with a grace of 1.5 s (`shutdownGraceMilliseconds` in the
# file) runs two jobs: `polite` runs `sleep 300` (ends on SIGTERM), `stubborn` ignores
# SIGTERM and runs a `sleep 300` that ignores it too. Each script records its PID and its
# child's. After SIGTERM:
#   1. the instance exits 0 within the grace + 5 s, and not before the grace (the stubborn
#      script held it until it was killed);
#   2. it says it killed the scripts left at the end of the grace;
#   3. no process of either script is left.
# Usage: shutdown_grace.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
source "$(dirname "$0")/../lib/procs.sh"
e2e_start_zookeeper
grace_ms=1500
bound_ms=$((grace_ms + 5000))
pids="$dir/pids"
: > "$pids"
{
  printf 'elasticjob:\n  shutdownGraceMilliseconds: %s\n  jobs:\n' "$grace_ms"
  for job in polite stubborn; do
    printf '    %s:\n      elasticJobType: SCRIPT\n      cron: 0/1 * * * * ?\n' "$job"
    printf '      shardingTotalCount: 1\n      props:\n        script.command.line: /bin/sh %s\n' \
      "$dir/$job.sh"
    {
      [[ "$job" == stubborn ]] && echo "trap '' TERM"
      printf 'echo "%s $$" >> %s\nsleep 300 &\n' "$job" "$pids"
      printf 'echo "%s-child $!" >> %s\nwait\n' "$job" "$pids"
    } > "$dir/$job.sh"
  done
} > "$dir/jobs.yaml"
trap 'kill_recorded "$pids"; e2e_cleanup' EXIT  # whatever happens

e2e_start_host 1 10.4.0.1 "$dir/jobs.yaml" "$url" --wait-later
instance=${PID[1]}
wait_for_lines "$pids" "-child " 2 30 || fail "the items did not start: $(cat "$pids"; tail -3 "$dir/1.log")"
recorded=$(awk '{print $2}' "$pids")

start_ns=$(date +%s%N)
kill -TERM "$instance"
exited=""
while ((($(date +%s%N) - start_ns) / 1000000 < bound_ms)); do
  proc_alive "$instance" || { exited=yes; break; }
  sleep 0.05
done
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
if [[ -z "$exited" ]]; then
  fail "the instance was still running ${elapsed_ms} ms after SIGTERM (grace ${grace_ms} ms)"
  kill -9 -- "-$instance"
fi
wait "$instance"
rc=$?
unset "PID[1]"
if [[ -n "$exited" ]]; then
  [[ $rc -eq 0 ]] || fail "exit code $rc after SIGTERM"
  ((elapsed_ms >= grace_ms)) || fail "exited ${elapsed_ms} ms after SIGTERM, before the grace of ${grace_ms} ms"
  grep -q "killing" "$dir/1.log" || fail "no word of the scripts killed after the grace: $(tail -5 "$dir/1.log")"
fi
# shellcheck disable=SC2086
left=$(wait_gone 0 $recorded) || fail "processes of the scripts left after the instance exited:$left"

e2e_on_failure() {
  cat "$pids"
  tail -8 "$dir/1.log"
}
e2e_finish "SIGTERM: exited 0 after ${elapsed_ms} ms (grace ${grace_ms} ms), the stubborn script killed, no process left"
