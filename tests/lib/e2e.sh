# The frame of an end-to-end test: a private ZooKeeper, `elasticjob run` processes started as
# hosts (each in its own process group, with its own preferred IP), failures collected, and
# everything stopped by PID on exit. Source it with the test's arguments (the elasticjob
# binary and scripts/zk-server.sh), then call e2e_start_zookeeper.
source "$(dirname "${BASH_SOURCE[0]}")/follow_log.sh"

EJ="$1"
ZK="$2"
dir="$(mktemp -d)"
failures=0
declare -A PID
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
e2e_cleanup() {
  for p in "${PID[@]}"; do kill -9 -- "-$p" 2>/dev/null; done
  bash "$ZK" stop "$dir/zk"
  rm -rf "$dir"
}
trap e2e_cleanup EXIT

# e2e_start_zookeeper [SESSION_MS]: starts the server; sets `port`, `zk_pid` (the server's
# PID, for a test that stops it), `url` (namespace e2e,
# a SESSION_MS session, 4,000 by default) and loads the zkCli helpers.
e2e_start_zookeeper() {
  read -r port zk_pid < <(bash "$ZK" start "$dir/zk") || { echo "FAIL cannot start ZooKeeper"; exit 1; }
  url="zookeeper://127.0.0.1:$port/e2e?sessionTimeoutMs=${1:-4000}"
  source "$(dirname "${BASH_SOURCE[0]}")/zk_cli.sh"
}

# e2e_start_host N IP YAML URL [--wait-later]: runs `elasticjob run YAML` as host N (log:
# $dir/N.log) and waits until its jobs are scheduled. With --wait-later the process stays a
# job of the script, for a test that stops it and `wait`s for its exit code.
e2e_start_host() {
  local n="$1" ip="$2" yaml="$3" url="$4" keep="${5:-}"
  : > "$dir/$n.log"
  ELASTICJOB_PREFERRED_NETWORK_IP="$ip" setsid "$EJ" run "$yaml" --registry "$url" \
    > "$dir/$n.log" 2>&1 &
  PID[$n]=$!
  [[ "$keep" == --wait-later ]] || disown "$!"  # killed at the end: no job notice
  wait_for_lines "$dir/$n.log" "scheduled" 1 || fail "host $n did not start: $(tail -3 "$dir/$n.log")"
}

# e2e_finish MESSAGE: exits 1 if a check failed (after `e2e_on_failure`, if defined), else
# prints "ok   MESSAGE".
e2e_finish() {
  if ((failures > 0)); then
    echo "$failures e2e check(s) failed"
    if declare -F e2e_on_failure > /dev/null; then e2e_on_failure; fi
    exit 1
  fi
  echo "ok   $1"
}
