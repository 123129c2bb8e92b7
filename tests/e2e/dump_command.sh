#!/usr/bin/env bash
# End to end on a real ZooKeeper: `elasticjob dump NAME --instance HOST:PORT` against an
# `elasticjob run` process whose two jobs share one dump port (one by its monitorPort, one by
# the file's elasticjob.dump.port), masked addresses, --json, and the failures: a job the
# port does not serve, a port nothing listens on (bounded), bad usage.
# Usage: dump_command.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
source "$(dirname "$0")/../../scripts/lib/ports.sh"
e2e_start_zookeeper
dport=$(ports_pick) || { echo "FAIL no free port"; exit 1; }
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  dump:
    port: $dport
  jobs:
    dumped:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 2
      monitorPort: $dport
      props:
        script.command.line: /bin/true
    inherits:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 1
      props:
        script.command.line: /bin/true
YAML
e2e_start_host a 10.9.8.7 "$dir/jobs.yaml" "$url"
follow_log "$dir/a.log" 2 || fail "the jobs did not run: $(tail -5 "$dir/a.log")"

out=$("$EJ" dump dumped --instance "127.0.0.1:$dport" 2> "$dir/err"); rc=$?
[[ $rc -eq 0 ]] || fail "dump exit $rc: $(cat "$dir/err")"
grep -qx "/dumped/servers/ip1 | ENABLED" <<< "$out" || fail "no masked server line in: $out"
grep -q "^/dumped/sharding/1/instance | ip1@-@" <<< "$out" || fail "no item 1 owner in: $out"
grep -q "^/dumped/config | " <<< "$out" || fail "no config line in: $out"
[[ "$out" != *10.9.8.7* ]] || fail "the address is not masked: $out"

out=$("$EJ" dump inherits --instance "127.0.0.1:$dport" 2> "$dir/err"); rc=$?
[[ $rc -eq 0 ]] || fail "dump of the job on the shared port: exit $rc: $(cat "$dir/err")"
grep -qx "/inherits/servers/ip1 | ENABLED" <<< "$out" || fail "shared port: $out"

json=$("$EJ" dump dumped --instance "127.0.0.1:$dport" --json); rc=$?
[[ $rc -eq 0 ]] || fail "--json exit $rc"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["job"]=="dumped", d; assert "/dumped/servers/ip1 | ENABLED\n" in d["dump"], d' "$json" ||
  fail "--json output: $json"

"$EJ" dump nosuch --instance "127.0.0.1:$dport" > /dev/null 2> "$dir/err"; rc=$?
[[ $rc -eq 1 ]] || fail "unknown job: exit $rc, expected 1"
grep -q "empty reply" "$dir/err" || fail "unknown job: $(cat "$dir/err")"

closed=$(ports_pick)
start=$SECONDS
timeout 30 "$EJ" dump dumped --instance "127.0.0.1:$closed" --timeout-ms 3000 > /dev/null 2> "$dir/err"; rc=$?
[[ $rc -eq 1 ]] || fail "nothing listening: exit $rc, expected 1"
grep -q "cannot connect" "$dir/err" || fail "nothing listening: $(cat "$dir/err")"
((SECONDS - start <= 10)) || fail "nothing listening: took $((SECONDS - start)) s"

for bad in "127.0.0.1" "127.0.0.1:0" "127.0.0.1:x" ":9888"; do
  "$EJ" dump dumped --instance "$bad" > /dev/null 2> "$dir/err"; rc=$?
  [[ $rc -eq 2 ]] || fail "--instance '$bad': exit $rc, expected 2"
  grep -q -- "--instance" "$dir/err" || fail "--instance '$bad': $(cat "$dir/err")"
done

e2e_finish "elasticjob dump prints a running job's masked subtree from a shared dump port; failures exit 1 or 2"
