# Shell helpers for the ZooKeeper server scripts (zk-server.sh, zk-ensemble.sh). Source it.

# four_letter PORT COMMAND: the server's answer to a four-letter command (srvr, ruok, ...) on
# $ZK_ADDRESS (default 127.0.0.1; 0.0.0.0 means 127.0.0.1), or nothing within 2 s.
four_letter() {  # port, command
  local host="${ZK_ADDRESS:-127.0.0.1}"
  [[ "$host" == 0.0.0.0 ]] && host=127.0.0.1
  exec 3<>"/dev/tcp/$host/$1" || return 1
  printf '%s' "$2" >&3
  timeout 2 cat <&3 || true
  exec 3<&-
}
