#!/usr/bin/env bash
# The throwaway database servers the tracing tests use (scripts/pg-server.sh,
# scripts/mariadb-server.sh): each starts on 127.0.0.1, takes the password it announces in
# DIR/url and refuses a wrong one, keeps its data across `stop --keep` and a start on the
# same port, and leaves no process and no data behind after `stop`.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
source "$repo/tests/lib/procs.sh"
work="$(mktemp -d)"
pids=()
cleanup() {
  bash "$repo/scripts/pg-server.sh" stop "$work/pg" 2> /dev/null || true
  bash "$repo/scripts/mariadb-server.sh" stop "$work/my" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# check NAME SCRIPT DIR QUERY_OK QUERY_WRONG_PASSWORD MAKE_TABLE READ_TABLE
check() {
  local name="$1" script="$2" d="$3" port pid port2 pid2 data
  read -r port pid < <(bash "$script" start "$d")
  [[ -n "$port" && -n "$pid" ]] || fail "$name: start printed no port and pid"
  proc_alive "$pid" || fail "$name: pid $pid is not running"
  local listen
  listen=$(ss -Htln "( sport = :$port )" | awk '{print $4}' | sort -u | tr '\n' ' ')
  [[ "$listen" == "127.0.0.1:$port " ]] || fail "$name: listens on '$listen', not on 127.0.0.1:$port only"
  "$4" "$(cat "$d/url")" "CREATE TABLE t (v INT); INSERT INTO t VALUES (42)" > /dev/null \
    || fail "$name: cannot write with the announced credentials"
  if "$4" "$(sed 's/:elasticjob@/:wrong@/' "$d/url")" "SELECT 1" > /dev/null 2>&1; then
    fail "$name: a wrong password was accepted"
  fi
  data="$(cat "$d/datadir")"
  bash "$script" stop "$d" --keep
  proc_alive "$pid" && fail "$name: pid $pid still runs after stop"
  read -r port2 pid2 < <(bash "$script" start "$d" "$port")
  [[ "$port2" == "$port" ]] || fail "$name: restart came back on $port2, not $port"
  [[ "$("$4" "$(cat "$d/url")" "SELECT v FROM t")" == *42* ]] || fail "$name: data lost across a restart"
  bash "$script" stop "$d"
  proc_alive "$pid2" && fail "$name: pid $pid2 still runs after stop"
  [[ ! -e "$data" ]] || fail "$name: data $data left after stop"
  echo "ok: $name"
}

pg_query() { psql "$1" -tA -v ON_ERROR_STOP=1 -c "$2"; }
my_query() {
  # mysql://user:pass@host:port/db
  local rest="${1#mysql://}" user pass host port db
  user="${rest%%:*}"; rest="${rest#*:}"; pass="${rest%%@*}"; rest="${rest#*@}"
  host="${rest%%:*}"; rest="${rest#*:}"; port="${rest%%/*}"; db="${rest#*/}"
  MYSQL_PWD="$pass" mariadb --no-defaults -h "$host" -P "$port" -u "$user" -N "$db" -e "$2"
}

check postgresql "$repo/scripts/pg-server.sh" "$work/pg" pg_query
check mariadb "$repo/scripts/mariadb-server.sh" "$work/my" my_query
