# zk_packets_received PORT: the ZooKeeper server's zk_packets_received (mntr, 4lw enabled by
# scripts/zk-server.sh): every request it has read, from every client.
zk_packets_received() {
  local line
  exec 5<>"/dev/tcp/127.0.0.1/$1"
  printf 'mntr' >&5
  while IFS=$'\t' read -r key value <&5; do
    [[ "$key" == zk_packets_received ]] && line="$value"
  done
  exec 5<&-
  echo "${line:-0}"
}
