#!/usr/bin/env bash
# Starts and stops a throwaway ZooKeeper server (Debian's `zookeeper` package) for tests and
# demos: 127.0.0.1 only (or $ZK_ADDRESS, e.g. 0.0.0.0 inside a test's own network namespace),
# a free port outside the kernel's ephemeral range (scripts/lib/ports.sh; a start that cannot
# bind is retried on another port), data in the given directory, stopped by PID.
#
#   scripts/zk-server.sh start DIR [PORT]  -> prints "PORT PID" once the server serves requests
#   scripts/zk-server.sh stop DIR          -> stops the server started in DIR (by its PID)
#
# tickTime is 500 ms, so sessions may be as short as 1 s (tests of session expiry) and as long
# as 10 s. Empty containers are reaped every 200 ms (tests of the latch's containers), or every
# $ZK_CONTAINER_CHECK_MS (the benchmarks use the server's default, 60,000: the reaper's scan
# of every node costs the server a burst of CPU each time). The JVM's heap is $ZK_HEAP
# (default 256m; the benchmarks give 2g: 10,000 jobs keep 150,000 nodes and twice as many
# watches, which 256 MB holds only with the collector running constantly, and then not).
# The server logs WARN and above to DIR/server.log (earlier starts in the same DIR: to
# DIR/server.log.old), each line with its time (HH:mm:ss.SSS); $ZK_LOG_LEVEL (info, debug)
# logs more, e.g. to see when it accepts and answers clients.
set -euo pipefail
cmd="${1:?usage: zk-server.sh start|stop DIR [PORT]}"
dir="${2:?usage: zk-server.sh start|stop DIR [PORT]}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

source "$(dirname "${BASH_SOURCE[0]}")/lib/ports.sh"

source "$(dirname "${BASH_SOURCE[0]}")/lib/zk.sh"

# start_on PORT: starts the server on PORT; prints "PORT PID" once it serves requests.
# Returns 75 if the port could not be bound (taken meanwhile), 1 on any other failure.
start_on() {
  local port="$1" pid owner
  mkdir -p "$dir/data"
  cat > "$dir/zoo.cfg" <<CFG
tickTime=500
minSessionTimeout=1000
maxSessionTimeout=10000
dataDir=$dir/data
clientPort=$port
clientPortAddress=${ZK_ADDRESS:-127.0.0.1}
4lw.commands.whitelist=*
admin.enableServer=false
maxClientCnxns=0
CFG
  local cp=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar
  # A restart keeps what the earlier runs logged (server.log is this run's: its bind check
  # reads it).
  if [[ -s "$dir/server.log" ]]; then cat "$dir/server.log" >> "$dir/server.log.old"; fi
  nohup java "-Xmx${ZK_HEAP:-256m}" -Dorg.slf4j.simpleLogger.defaultLogLevel="${ZK_LOG_LEVEL:-warn}" \
    -Dorg.slf4j.simpleLogger.showDateTime=true -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
    -Dznode.container.checkIntervalMs="${ZK_CONTAINER_CHECK_MS:-200}" -cp "$cp" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" \
    > "$dir/server.log" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$dir/pid"
  echo "$port" > "$dir/port"
  # Bounded: 200 polls of 0.1 s (start-up takes about 0.5 s).
  for _ in $(seq 1 200); do
    if ports_bind_failed "$dir/server.log"; then
      kill -9 "$pid" 2> /dev/null
      wait "$pid" 2> /dev/null
      rm -f "$dir/pid"
      return 75
    fi
    if ! kill -0 "$pid" 2> /dev/null; then
      echo "zk-server: server exited; see $dir/server.log" >&2
      tail -20 "$dir/server.log" >&2
      rm -f "$dir/pid"
      return 1
    fi
    if four_letter "$port" srvr 2> /dev/null | grep -q '^Mode:'; then
      # Someone else's server on this port would answer too: it must be ours.
      owner=$(ports_listener_pid "$port")
      if [[ -n "$owner" && "$owner" != "$pid" ]]; then
        kill -9 "$pid" 2> /dev/null
        wait "$pid" 2> /dev/null
        rm -f "$dir/pid"
        return 75
      fi
      echo "$port $pid"
      return 0
    fi
    sleep 0.1
  done
  echo "zk-server: no answer on port $port after 20 s" >&2
  kill "$pid" 2> /dev/null || true
  rm -f "$dir/pid"
  return 1
}

case "$cmd" in
  start)
    ports_start start_on "${3:-}"
    exit $?
    ;;
  stop)
    if [[ -f "$dir/pid" ]]; then
      pid="$(cat "$dir/pid")"
      kill -CONT "$pid" 2>/dev/null || true
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/pid"
    fi
    ;;
  *)
    echo "usage: zk-server.sh start|stop DIR [PORT]" >&2
    exit 2
    ;;
esac
