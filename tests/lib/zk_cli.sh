# Shell helpers for e2e tests that read and write a test ZooKeeper with Debian's zkCli, as an
# operator would. Source this file after setting `port`.

ZK_CLI=/usr/share/zookeeper/bin/zkCli.sh
# zk ARGS...: one zkCli command against 127.0.0.1:$port (its banner on stderr dropped).
zk() { "$ZK_CLI" -server "127.0.0.1:$port" "$@" 2>/dev/null; }
# zk_get PATH: the node's value (zkCli prints it after its connection lines).
zk_get() { zk get "$1" | grep -v '^\(Connecting\|WATCHER\|WatchedEvent\|$\)' | tail -1; }
# zk_ls PATH: the children as zkCli prints them, "[a, b]" ("" if the node is missing).
zk_ls() { zk ls "$1" | grep '^\[' | tail -1; }
