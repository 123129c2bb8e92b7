#!/usr/bin/env bash
# Starts and stops a throwaway PostgreSQL server (Debian's postgresql-15) for tests and
# benchmarks: 127.0.0.1 only, a free port outside the kernel's ephemeral range
# (scripts/lib/ports.sh; a start that cannot bind is retried on another port), stopped by PID.
#
#   scripts/pg-server.sh start DIR [PORT]  -> prints "PORT PID" once the server accepts
#                                             connections, and writes its address to DIR/url:
#                                             postgresql://elasticjob:elasticjob@127.0.0.1:PORT/elasticjob
#   scripts/pg-server.sh stop DIR [--keep] -> stops the server started in DIR (by its PID) and
#                                             removes its data, unless --keep (a restart:
#                                             `stop DIR --keep` then `start DIR PORT` brings the
#                                             same database back on the same port)
#
# The first start creates the cluster (initdb), the role `elasticjob` (password `elasticjob`,
# checked: host connections use scram-sha-256) and its database `elasticjob`. The data lives
# in a directory of its own under /tmp (its path in DIR/datadir): PostgreSQL refuses to run
# as root, so as root the server runs as the `postgres` user, which must be able to reach
# its data and socket whatever DIR's parents allow; /tmp also keeps the socket's path short.
# fsync is off: a throwaway server's data need not survive a power cut.
set -euo pipefail
cmd="${1:?usage: pg-server.sh start|stop DIR [PORT|--keep]}"
dir="${2:?usage: pg-server.sh start|stop DIR [PORT|--keep]}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

source "$(dirname "${BASH_SOURCE[0]}")/lib/ports.sh"

PGBIN="$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -1)"
if [[ -z "$PGBIN" ]]; then
  echo "pg-server: PostgreSQL is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi

# "${AS_SERVER[@]}" CMD...: runs CMD as the user the server runs as (postgres when we are
# root); setpriv execs it, so a background one's $! is the server's PID.
AS_SERVER=()
if [[ $(id -u) -eq 0 ]]; then AS_SERVER=(setpriv --reuid=postgres --regid=postgres --init-groups --); fi
# A root directory only root may enter (a chroot made with `mktemp -d` has mode 700; a
# normal Debian's is 755) would keep the postgres user from loading even its libraries: it
# gets the search bit every Debian root has.
if [[ $(id -u) -eq 0 ]] && ! "${AS_SERVER[@]}" /bin/true 2> /dev/null; then
  echo "pg-server: '/' (mode $(stat -c %a /)) is not searchable by the postgres user; adding o+x" >&2
  chmod o+x /
fi

# init_data: a new cluster in a new directory under /tmp, recorded in DIR/datadir.
init_data() {
  local data
  data="$(mktemp -d /tmp/elasticjob-pg.XXXXXX)"
  [[ $(id -u) -eq 0 ]] && chown postgres:postgres "$data"
  chmod 700 "$data"
  echo "$data" > "$dir/datadir"
  local pwfile="$data/.pw"
  "${AS_SERVER[@]}" sh -c "echo postgres > '$pwfile'"
  if ! "${AS_SERVER[@]}" "$PGBIN/initdb" -D "$data/db" -U postgres --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 \
    > "$dir/initdb.log" 2>&1; then
    echo "pg-server: initdb failed; see $dir/initdb.log" >&2
    tail -20 "$dir/initdb.log" >&2
    return 1
  fi
  touch "$dir/needs-role"
}

# start_on PORT: starts the server on PORT; prints "PORT PID" once it accepts connections.
# Returns 75 if the port could not be bound (taken meanwhile), 1 on any other failure.
start_on() {
  local port="$1" pid data
  data="$(cat "$dir/datadir")"
  : > "$dir/server.log"
  [[ $(id -u) -eq 0 ]] && chown postgres:postgres "$dir/server.log"
  "${AS_SERVER[@]}" "$PGBIN/postgres" -D "$data/db" -p "$port" -c listen_addresses=127.0.0.1 \
    -c unix_socket_directories="$data" -c fsync=off -c synchronous_commit=off \
    -c full_page_writes=off -c max_connections=200 \
    > "$dir/server.log" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$dir/pid"
  echo "$port" > "$dir/port"
  # Bounded: 300 polls of 0.1 s (start-up takes about 0.3 s; a first one after initdb more).
  for _ in $(seq 1 300); do
    if ports_bind_failed "$dir/server.log" || grep -q 'could not create any TCP/IP sockets' "$dir/server.log"; then
      kill -9 "$pid" 2> /dev/null
      wait "$pid" 2> /dev/null
      rm -f "$dir/pid"
      return 75
    fi
    if ! kill -0 "$pid" 2> /dev/null; then
      echo "pg-server: server exited; see $dir/server.log" >&2
      tail -20 "$dir/server.log" >&2
      rm -f "$dir/pid"
      return 1
    fi
    if "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$port" -t 1; then
      local owner
      owner=$(ports_listener_pid "$port")
      if [[ -n "$owner" && "$owner" != "$pid" ]]; then  # someone else's server answered
        kill -9 "$pid" 2> /dev/null
        wait "$pid" 2> /dev/null
        rm -f "$dir/pid"
        return 75
      fi
      if [[ -f "$dir/needs-role" ]]; then
        "${AS_SERVER[@]}" "$PGBIN/psql" -q -h "$data" -p "$port" -U postgres -d postgres \
          -v ON_ERROR_STOP=1 -c "CREATE ROLE elasticjob LOGIN PASSWORD 'elasticjob'" \
          -c "CREATE DATABASE elasticjob OWNER elasticjob" > "$dir/role.log" 2>&1 || {
          echo "pg-server: creating the role failed; see $dir/role.log" >&2
          cat "$dir/role.log" >&2
          return 1
        }
        rm -f "$dir/needs-role"
      fi
      echo "postgresql://elasticjob:elasticjob@127.0.0.1:$port/elasticjob" > "$dir/url"
      echo "$port $pid"
      return 0
    fi
    sleep 0.1
  done
  echo "pg-server: no answer on port $port after 30 s" >&2
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
      kill -INT "$pid" 2> /dev/null || true  # fast shutdown: clients are disconnected
      for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2> /dev/null || true
      rm -f "$dir/pid"
    fi
    if [[ "${3:-}" != "--keep" && -f "$dir/datadir" ]]; then
      data="$(cat "$dir/datadir")"
      [[ "$data" == /tmp/elasticjob-pg.* ]] && rm -rf "$data"
      rm -f "$dir/datadir"
    fi
    ;;
  *)
    echo "usage: pg-server.sh start|stop DIR [PORT|--keep]" >&2
    exit 2
    ;;
esac
