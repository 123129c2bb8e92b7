#!/usr/bin/env bash
# End to end on a real ZooKeeper: SIGTERM ends `elasticjob run` within the grace plus a
# small bound whatever the registry does (issue 31, item 8; docs/runtime.md, "Shutdown").
# One instance leads an idle job (nothing runs; the grace is 2 s). Twice:
#   1. the server is frozen (SIGSTOP, 0.5 s before the SIGTERM: the client still takes it
#      for connected, and every request would wait for the session's receive timeout, 6.7 s
#      here, once per retry);
#   2. the server is stopped (its process gone: connections refused);
# and each time the instance exits 0 within the grace + 4 s (docs/runtime.md: 1 s for the
# killed scripts to report, up to 3 s to close the session). The session is the longest the
# test server allows (10 s), so a wait for the client's timeouts would show.
# Usage: shutdown_registry_unreachable.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
source "$(dirname "$0")/../lib/procs.sh"
e2e_start_zookeeper 10000
grace_ms=2000
bound_ms=$((grace_ms + 4000))
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  shutdownGraceMilliseconds: $grace_ms
  jobs:
    idle:
      elasticJobType: SCRIPT
      cron: 0 0 0 1 1 ?
      shardingTotalCount: 2
      props:
        script.command.line: /bin/true
YAML
trap 'kill -CONT "$zk_pid" 2>/dev/null; e2e_cleanup' EXIT

# stop_within N WHAT: SIGTERM to host N; checks it exits 0 within bound_ms; sets elapsed_ms.
stop_within() {
  local n="$1" what="$2" pid="${PID[$1]}" start_ns exited="" rc
  start_ns=$(date +%s%N)
  kill -TERM "$pid"
  while ((($(date +%s%N) - start_ns) / 1000000 < bound_ms + 20000)); do
    proc_alive "$pid" || { exited=yes; break; }
    sleep 0.05
  done
  elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
  if [[ -z "$exited" ]]; then
    kill -9 -- "-$pid"
    fail "$what: still running ${elapsed_ms} ms after SIGTERM"
  fi
  wait "$pid"
  rc=$?
  unset "PID[$n]"
  [[ -z "$exited" ]] && return
  [[ $rc -eq 0 ]] || fail "$what: exit code $rc after SIGTERM: $(tail -3 "$dir/$n.log")"
  ((elapsed_ms <= bound_ms)) ||
    fail "$what: exited ${elapsed_ms} ms after SIGTERM, beyond the grace of ${grace_ms} ms + 4000 ms"
}

e2e_start_host 1 10.5.0.1 "$dir/jobs.yaml" "$url" --wait-later
wait_for_lines "$dir/1.log" "scheduled" 1 || true
sleep 1  # elected and sharded
kill -STOP "$zk_pid"
sleep 0.5
stop_within 1 "server frozen"
frozen_ms=$elapsed_ms
kill -CONT "$zk_pid"

e2e_start_host 2 10.5.0.2 "$dir/jobs.yaml" "$url" --wait-later
sleep 1
bash "$ZK" stop "$dir/zk"
sleep 0.5
stop_within 2 "server stopped"
stopped_ms=$elapsed_ms

e2e_on_failure() { tail -5 "$dir/1.log" "$dir/2.log"; }
e2e_finish "SIGTERM with the registry unreachable: exited 0 after ${frozen_ms} ms (server frozen) and ${stopped_ms} ms (server stopped), grace ${grace_ms} ms"
