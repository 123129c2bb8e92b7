#!/usr/bin/env bash
# Starts and stops a throwaway MariaDB server (Debian's mariadb-server-core) for tests and
# benchmarks: 127.0.0.1 only, a free port outside the kernel's ephemeral range
# (scripts/lib/ports.sh; a start that cannot bind is retried on another port), stopped by PID.
#
#   scripts/mariadb-server.sh start DIR [PORT]  -> prints "PORT PID" once the server accepts
#                                                  connections, and writes its address to
#                                                  DIR/url: mysql://elasticjob:elasticjob@127.0.0.1:PORT/elasticjob
#   scripts/mariadb-server.sh stop DIR [--keep] -> stops the server started in DIR (by its
#                                                  PID) and removes its data, unless --keep (a
#                                                  restart: `stop DIR --keep` then
#                                                  `start DIR PORT` brings the same database
#                                                  back on the same port)
#
# The first start creates the data directory (mariadb-install-db), the user `elasticjob`
# (password `elasticjob`, from any host) and its database `elasticjob`. The data lives in a
# directory of its own under /tmp (its path in DIR/datadir), which keeps the socket's path
# short. No configuration file is read (--no-defaults): nothing of the machine's own MariaDB
# set-up, if it has one, applies. Durability is relaxed (a throwaway server).
set -euo pipefail
cmd="${1:?usage: mariadb-server.sh start|stop DIR [PORT|--keep]}"
dir="${2:?usage: mariadb-server.sh start|stop DIR [PORT|--keep]}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

source "$(dirname "${BASH_SOURCE[0]}")/lib/ports.sh"

if ! command -v mariadbd > /dev/null && [[ ! -x /usr/sbin/mariadbd ]]; then
  echo "mariadb-server: MariaDB is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
MARIADBD="$(command -v mariadbd || echo /usr/sbin/mariadbd)"

# As root the server runs as root (--user=root): it reaches its data wherever it is.
USER_OPT=()
if [[ $(id -u) -eq 0 ]]; then USER_OPT=(--user=root); fi

# init_data: a new data directory under /tmp, recorded in DIR/datadir.
init_data() {
  local data
  data="$(mktemp -d /tmp/elasticjob-my.XXXXXX)"
  echo "$data" > "$dir/datadir"
  if ! mariadb-install-db --no-defaults --datadir="$data/db" "${USER_OPT[@]}" \
    --auth-root-authentication-method=normal --skip-test-db > "$dir/install-db.log" 2>&1; then
    echo "mariadb-server: mariadb-install-db failed; see $dir/install-db.log" >&2
    tail -20 "$dir/install-db.log" >&2
    return 1
  fi
  touch "$dir/needs-user"
}

# start_on PORT: starts the server on PORT; prints "PORT PID" once it accepts connections.
# Returns 75 if the port could not be bound (taken meanwhile), 1 on any other failure.
start_on() {
  local port="$1" pid data
  data="$(cat "$dir/datadir")"
  "$MARIADBD" --no-defaults --datadir="$data/db" "${USER_OPT[@]}" --bind-address=127.0.0.1 \
    --port="$port" --socket="$data/sock" --pid-file="$data/mariadbd.pid" \
    --log-error="$dir/server.log" --innodb-flush-log-at-trx-commit=2 --skip-log-bin \
    --max-connections=200 > "$dir/server.out" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$dir/pid"
  echo "$port" > "$dir/port"
  # Bounded: 300 polls of 0.1 s (start-up takes about a second).
  for _ in $(seq 1 300); do
    if ports_bind_failed "$dir/server.log" || grep -q "Can't start server: Bind" "$dir/server.log" 2> /dev/null; then
      kill -9 "$pid" 2> /dev/null
      wait "$pid" 2> /dev/null
      rm -f "$dir/pid"
      : > "$dir/server.log"
      return 75
    fi
    if ! kill -0 "$pid" 2> /dev/null; then
      echo "mariadb-server: server exited; see $dir/server.log" >&2
      tail -20 "$dir/server.log" >&2
      rm -f "$dir/pid"
      return 1
    fi
    if mariadb --no-defaults --protocol=socket --socket="$data/sock" -uroot -e "SELECT 1" \
      > /dev/null 2>&1; then
      local owner
      owner=$(ports_listener_pid "$port")
      if [[ -n "$owner" && "$owner" != "$pid" ]]; then  # someone else's server has the port
        kill -9 "$pid" 2> /dev/null
        wait "$pid" 2> /dev/null
        rm -f "$dir/pid"
        return 75
      fi
      if [[ -f "$dir/needs-user" ]]; then
        mariadb --no-defaults --protocol=socket --socket="$data/sock" -uroot -e \
          "CREATE DATABASE elasticjob; CREATE USER 'elasticjob'@'%' IDENTIFIED BY 'elasticjob'; GRANT ALL ON elasticjob.* TO 'elasticjob'@'%';" \
          > "$dir/user.log" 2>&1 || {
          echo "mariadb-server: creating the user failed; see $dir/user.log" >&2
          cat "$dir/user.log" >&2
          return 1
        }
        rm -f "$dir/needs-user"
      fi
      echo "mysql://elasticjob:elasticjob@127.0.0.1:$port/elasticjob" > "$dir/url"
      echo "$port $pid"
      return 0
    fi
    sleep 0.1
  done
  echo "mariadb-server: no answer on port $port after 30 s" >&2
  kill -9 "$pid" 2> /dev/null || true
  rm -f "$dir/pid"
  return 1
}

case "$cmd" in
  start)
    [[ -f "$dir/datadir" && -d "$(cat "$dir/datadir")/db" ]] || init_data
    ports_start start_on "${3:-}"
    exit $?
    ;;
  stop)
    if [[ -f "$dir/pid" ]]; then
      pid="$(cat "$dir/pid")"
      kill -CONT "$pid" 2> /dev/null || true
      kill -TERM "$pid" 2> /dev/null || true
      for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2> /dev/null || true
      rm -f "$dir/pid"
    fi
    if [[ "${3:-}" != "--keep" && -f "$dir/datadir" ]]; then
      data="$(cat "$dir/datadir")"
      [[ "$data" == /tmp/elasticjob-my.* ]] && rm -rf "$data"
      rm -f "$dir/datadir"
    fi
    ;;
  *)
    echo "usage: mariadb-server.sh start|stop DIR [PORT|--keep]" >&2
    exit 2
    ;;
esac
