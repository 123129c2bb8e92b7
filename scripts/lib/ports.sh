# Ports for the servers tests start (ZooKeeper, PostgreSQL, MariaDB: scripts/*-server.sh):
# source this file, then
#
#   port=$(ports_pick)               a free TCP port on this machine, outside the kernel's
#                                    ephemeral range (/proc/sys/net/ipv4/ip_local_port_range),
#                                    so no client socket of a parallel test can be holding it
#   ports_bind_failed LOG            true if LOG says the server could not bind its port
#   ports_listener_pid PORT          the PID listening on 127.0.0.1:PORT (or on any address)
#   ports_start FUNCTION [PORT]      starts a server through FUNCTION on PORT or a free port
#
# Picking outside the ephemeral range removes the common race (an outgoing connection of
# another test is given our port); two tests picking the same port at the same moment is
# still possible, so every start also retries with a new port when the server reports a bind
# failure (see ports_start_with_retry and scripts/zk-server.sh).

# ports_ranges: "LO HI" lines of the usable non-ephemeral ranges (within 10000-65535).
ports_ranges() {
  local lo=32768 hi=60999
  if [[ -r /proc/sys/net/ipv4/ip_local_port_range ]]; then
    read -r lo hi < /proc/sys/net/ipv4/ip_local_port_range
  fi
  ((lo > 10000)) && echo "10000 $((lo - 1))"
  ((hi < 65535)) && echo "$((hi + 1)) 65535"
  # The whole 10000-65535 is ephemeral: fall back to it (bind retries still protect us).
  ((lo <= 10000 && hi >= 65535)) && echo "10000 65535"
  return 0
}

# ports_in_use PORT: true if any TCP socket on this machine (this network namespace) has PORT
# as its local port, listening or connected.
ports_in_use() {
  if command -v ss > /dev/null; then
    [[ -n "$(ss -Htan "( sport = :$1 )" 2> /dev/null)" ]]
  else
    (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null
  fi
}

# ports_pick: prints a free port outside the ephemeral range, chosen at random (so parallel
# tests rarely pick the same one). Fails after 200 tries.
ports_pick() {
  local ranges=() total=0 r lo hi n p _
  while read -r lo hi; do
    ranges+=("$lo $hi")
    total=$((total + hi - lo + 1))
  done < <(ports_ranges)
  for _ in $(seq 1 200); do
    n=$(((RANDOM << 15 | RANDOM) % total))
    for r in "${ranges[@]}"; do
      read -r lo hi <<< "$r"
      if ((n <= hi - lo)); then
        p=$((lo + n))
        break
      fi
      n=$((n - (hi - lo + 1)))
    done
    if ! ports_in_use "$p"; then
      echo "$p"
      return 0
    fi
  done
  echo "ports_pick: no free port found" >&2
  return 1
}

# ports_bind_failed LOG: true if the server log LOG reports that a port could not be bound.
ports_bind_failed() {
  grep -qE 'Address already in use|BindException|could not bind|bind\(\) failed|Cannot assign requested address' "$1" 2> /dev/null
}

# ports_listener_pid PORT: the PID of the process listening on TCP PORT ("" if none or unknown).
ports_listener_pid() {
  ss -Htlnp "( sport = :$1 )" 2> /dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1
}

# ports_start_with_retry TRIES FUNCTION [ARGS...]: calls `FUNCTION PORT ARGS...` with a fresh
# port from ports_pick until it succeeds (status 0: printed what the caller wants) or fails
# with something else than a bind failure (any status but 75) or TRIES attempts are used up.
# FUNCTION returns 75 (EX_TEMPFAIL) when its server could not bind the port.
ports_start_with_retry() {
  local tries="$1" fn="$2" rc=75 port _
  shift 2
  for _ in $(seq 1 "$tries"); do
    port=$(ports_pick) || return 1
    rc=0
    "$fn" "$port" "$@" || rc=$?
    ((rc == 75)) || return "$rc"
    echo "ports: port $port was taken (bind failed), retrying with another" >&2
  done
  return "$rc"
}

# ports_start FUNCTION [PORT]: starts a server through `FUNCTION PORT` (as for
# ports_start_with_retry) on PORT when given (a restart on the same port: a bind failure
# there is retried on it for up to 5 s, the old server's socket may still be closing), else
# on a fresh port (5 tries). Returns FUNCTION's status.
ports_start() {
  local fn="$1" port="${2:-}" rc _
  if [[ -z "$port" ]]; then
    ports_start_with_retry 5 "$fn"
    return $?
  fi
  for _ in $(seq 1 10); do
    rc=0
    "$fn" "$port" || rc=$?
    ((rc == 75)) || return "$rc"
    sleep 0.5
  done
  return 1
}
