#!/usr/bin/env bash
# A throwaway ZooKeeper ensemble (Debian's `zookeeper` package) of N servers on 127.0.0.1,
# for fault tests: every client, quorum and election port free and outside the kernel's
# ephemeral range (scripts/lib/ports.sh; a start where any member cannot bind is retried
# with new ports), member i's data in DIR/i, each stopped by its PID.
#
#   zk-ensemble.sh start DIR [N]        -> starts N (default 3) members, prints the connect
#                                          string "127.0.0.1:P1,127.0.0.1:P2,..." once a
#                                          leader serves requests
#   zk-ensemble.sh stop DIR             -> stops every member started in DIR
#   zk-ensemble.sh kill DIR I [SIGNAL]  -> sends SIGNAL (default KILL) to member I
#   zk-ensemble.sh restart DIR I        -> starts member I again on its ports (after a kill)
#   zk-ensemble.sh leader DIR           -> prints the number of the member that leads
#   zk-ensemble.sh pids DIR             -> prints "I PID" for each running member
#
# Same settings as zk-server.sh (tickTime 500 ms: sessions of 1 to 10 s).
set -euo pipefail
cmd="${1:?usage: zk-ensemble.sh start|stop|kill|restart|leader|pids DIR ...}"
dir="${2:?usage: zk-ensemble.sh start|stop|kill|restart|leader|pids DIR ...}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
source "$(dirname "${BASH_SOURCE[0]}")/lib/ports.sh"

source "$(dirname "${BASH_SOURCE[0]}")/lib/zk.sh"

members() { ls "$dir" | grep -E '^[0-9]+$' | sort -n; }

launch() {  # member: starts the JVM of member I from its zoo.cfg
  local i="$1" cp=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar
  nohup java "-Xmx${ZK_HEAP:-256m}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -Dznode.container.checkIntervalMs="${ZK_CONTAINER_CHECK_MS:-200}" -cp "$cp" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/$i/zoo.cfg" \
    >> "$dir/$i/server.log" 2>&1 < /dev/null &
  echo $! > "$dir/$i/pid"
}

stop_member() {  # member [signal]
  local i="$1" sig="${2:-TERM}" pid
  [[ -f "$dir/$i/pid" ]] || return 0
  pid="$(cat "$dir/$i/pid")"
  kill -CONT "$pid" 2> /dev/null || true
  kill "-$sig" "$pid" 2> /dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2> /dev/null || true
  rm -f "$dir/$i/pid"
}

serving() {  # member: true once member I answers srvr with a Mode (leader or follower)
  four_letter "$(cat "$dir/$1/port")" srvr 2> /dev/null | grep -qE '^Mode: (leader|follower)'
}

# start_with FIRST_CLIENT_PORT N: picks the other ports, writes the configs, starts every
# member and waits (bounded, 30 s) until all serve. Returns 75 on a bind failure.
start_with() {
  local first="$1" n="$2" i servers="" ports=() q e
  rm -rf "$dir"/[0-9]*
  ports[1]="$first"
  for i in $(seq 2 "$n"); do ports[i]=$(ports_pick); done
  for i in $(seq 1 "$n"); do
    q=$(ports_pick) e=$(ports_pick)
    servers+="server.$i=127.0.0.1:$q:$e"$'\n'
  done
  for i in $(seq 1 "$n"); do
    mkdir -p "$dir/$i/data"
    echo "$i" > "$dir/$i/data/myid"
    echo "${ports[i]}" > "$dir/$i/port"
    cat > "$dir/$i/zoo.cfg" <<CFG
tickTime=500
initLimit=20
syncLimit=10
minSessionTimeout=1000
maxSessionTimeout=10000
dataDir=$dir/$i/data
clientPort=${ports[i]}
clientPortAddress=127.0.0.1
4lw.commands.whitelist=*
admin.enableServer=false
maxClientCnxns=0
$servers
CFG
    : > "$dir/$i/server.log"
    launch "$i"
  done
  for _ in $(seq 1 300); do  # bounded: 300 polls of 0.1 s
    local ready=0
    for i in $(seq 1 "$n"); do
      if ports_bind_failed "$dir/$i/server.log"; then
        for j in $(seq 1 "$n"); do stop_member "$j" KILL; done
        return 75
      fi
      if ! kill -0 "$(cat "$dir/$i/pid")" 2> /dev/null; then
        echo "zk-ensemble: member $i exited; see $dir/$i/server.log" >&2
        tail -20 "$dir/$i/server.log" >&2
        for j in $(seq 1 "$n"); do stop_member "$j" KILL; done
        return 1
      fi
      serving "$i" && ready=$((ready + 1))
    done
    if ((ready == n)); then
      local hosts=()
      for i in $(seq 1 "$n"); do hosts+=("127.0.0.1:${ports[i]}"); done
      (IFS=,; echo "${hosts[*]}")
      return 0
    fi
    sleep 0.1
  done
  echo "zk-ensemble: no quorum after 30 s" >&2
  for j in $(seq 1 "$n"); do stop_member "$j" KILL; done
  return 1
}

case "$cmd" in
  start)
    ports_start_with_retry 5 start_with "${3:-3}"
    exit $?
    ;;
  stop)
    for i in $(members); do stop_member "$i"; done
    ;;
  kill)
    i="${3:?member number}"
    pid="$(cat "$dir/$i/pid")"
    kill "-${4:-KILL}" "$pid"
    if [[ "${4:-KILL}" == KILL ]]; then
      for _ in $(seq 1 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
      rm -f "$dir/$i/pid"
    fi
    ;;
  restart)
    i="${3:?member number}"
    stop_member "$i"
    launch "$i"
    for _ in $(seq 1 300); do serving "$i" && exit 0; sleep 0.1; done
    echo "zk-ensemble: member $i does not serve after 30 s" >&2
    exit 1
    ;;
  leader)
    for i in $(members); do
      [[ -f "$dir/$i/pid" ]] || continue
      if four_letter "$(cat "$dir/$i/port")" srvr 2> /dev/null | grep -q '^Mode: leader'; then
        echo "$i"
        exit 0
      fi
    done
    exit 1
    ;;
  pids)
    for i in $(members); do [[ -f "$dir/$i/pid" ]] && echo "$i $(cat "$dir/$i/pid")"; done
    ;;
  *)
    echo "usage: zk-ensemble.sh start|stop|kill|restart|leader|pids DIR ..." >&2
    exit 2
    ;;
esac
