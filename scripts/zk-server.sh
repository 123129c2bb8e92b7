#!/usr/bin/env bash
# Starts and stops a throwaway ZooKeeper server (Debian's `zookeeper` package) for tests and
# demos: 127.0.0.1 only, a free port, data in the given directory, stopped by PID.
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
set -euo pipefail
cmd="${1:?usage: zk-server.sh start|stop DIR [PORT]}"
dir="${2:?usage: zk-server.sh start|stop DIR [PORT]}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

four_letter() {  # port, command
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
  printf '%s' "$2" >&3
  timeout 2 cat <&3 || true
  exec 3<&-
}

case "$cmd" in
  start)
    port="${3:-$(free_port)}"
    mkdir -p "$dir/data"
    cat > "$dir/zoo.cfg" <<CFG
tickTime=500
minSessionTimeout=1000
maxSessionTimeout=10000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
4lw.commands.whitelist=*
admin.enableServer=false
maxClientCnxns=0
CFG
    cp=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar
    nohup java "-Xmx${ZK_HEAP:-256m}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
      -Dznode.container.checkIntervalMs="${ZK_CONTAINER_CHECK_MS:-200}" -cp "$cp" \
      org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" \
      > "$dir/server.log" 2>&1 < /dev/null &
    pid=$!
    echo "$pid" > "$dir/pid"
    echo "$port" > "$dir/port"
    for _ in $(seq 1 200); do
      if ! kill -0 "$pid" 2>/dev/null; then
        echo "zk-server: server exited; see $dir/server.log" >&2
        tail -20 "$dir/server.log" >&2
        exit 1
      fi
      if four_letter "$port" srvr 2>/dev/null | grep -q '^Mode:'; then
        echo "$port $pid"
        exit 0
      fi
      sleep 0.1
    done
    echo "zk-server: no answer on port $port after 20 s" >&2
    kill "$pid" 2>/dev/null || true
    exit 1
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
