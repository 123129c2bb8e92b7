#!/usr/bin/env bash
# End to end on a real ZooKeeper: `elasticjob agent` follows the namespace. Two agents (two
# hosts) and a third that only runs jobs labelled `other`:
#   a job added with `elasticjob job add` starts on both agents (watch-driven; the time it
#   took is printed), its items split across them, the third agent ignores it;
#   a props change restarts it with the new command, a cron change reschedules it;
#   `elasticjob job remove` stops it on both, and nothing of it runs afterwards;
#   an HTTP job runs on both agents (by type name);
#   a job labelled `other` runs on the third agent only; a Java job (a class name as its
#   type) is skipped; the third agent traces its runs (--tracing); SIGTERM stops an agent
#   cleanly.
# Usage: agent.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
source "$(dirname "$0")/../lib/ops.sh"
e2e_start_zookeeper
export ELASTICJOB_REGISTRY="$url"
start_agent() {
  local n="$1" ip="$2"
  shift 2
  : > "$dir/$n.log"
  ELASTICJOB_PREFERRED_NETWORK_IP="$ip" setsid "$EJ" agent "$@" > "$dir/$n.log" 2>&1 &
  PID[$n]=$!
  disown "$!"
  wait_for_lines "$dir/$n.log" "agent: following" 1 20 || fail "agent $n did not start: $(cat "$dir/$n.log")"
}
start_agent 1 10.6.0.1 --label batch
start_agent 2 10.6.0.2 --label batch
start_agent 3 10.6.0.3 --label other --tracing "sqlite://$dir/events.db"

cat > "$dir/dyn.yaml" <<'YAML'
elasticjob:
  jobs:
    dyn:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 4
      label: batch
      props:
        script.command.line: "/bin/sh -c 'echo v1 $0'"
YAML
t0=$(date +%s%N)
"$EJ" job add "$dir/dyn.yaml" > /dev/null || fail "job add failed"
wait_for_lines_in "job 'dyn' scheduled" 2 20 "$dir/1.log" "$dir/2.log" || fail "dyn did not start on both agents"
echo "dyn scheduled on both agents $(( ($(date +%s%N) - t0) / 1000000 )) ms after job add"
# Both run their share: 2 items each once the second has joined.
owners() { "$EJ" job sharding dyn --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print(" ".join(sorted({i["server"] for i in r})), len(r))'; }
owners_split() { [[ "$(owners)" == "10.6.0.1 10.6.0.2 4" ]]; }
poll_until 20 owners_split || fail "items not split over the two agents: $(owners)"
wait_for_lines "$dir/1.log" "v1 " 2 20 || fail "agent 1 ran nothing"
wait_for_lines "$dir/2.log" "v1 " 2 20 || fail "agent 2 ran nothing"

# A props change restarts the job with the new command; a cron change reschedules it.
"$EJ" job config get dyn | sed "s#echo v1#echo v2#" > "$dir/v2.yaml"
"$EJ" job config set dyn "$dir/v2.yaml" > /dev/null || fail "config set (props) failed"
wait_for_lines_in "job 'dyn' stopped (type or props changed)" 2 20 "$dir/1.log" "$dir/2.log" ||
  fail "the agents did not restart dyn"
wait_for_lines_in "v2 " 2 20 "$dir/1.log" "$dir/2.log" || fail "the new command did not run"
"$EJ" job config get dyn | sed "s#^cron: .*#cron: 0/2 * * * * ?#" > "$dir/cron.yaml"
"$EJ" job config set dyn "$dir/cron.yaml" > /dev/null || fail "config set (cron) failed"
wait_for_lines_in "rescheduled to cron '0/2 * * * * ?'" 2 20 "$dir/1.log" "$dir/2.log" ||
  fail "the agents did not reschedule dyn"

# Removed: stopped on both, and nothing of it runs afterwards.
"$EJ" job remove dyn > /dev/null || fail "job remove failed"
wait_for_lines_in "job 'dyn' stopped (removed)" 2 20 "$dir/1.log" "$dir/2.log" || fail "dyn did not stop"
[[ -z "$(zk_ls /e2e/dyn)" ]] || fail "the removed job left nodes behind: $(zk ls -R /e2e/dyn | grep "^/")"
lines1=$(wc -l < "$dir/1.log")
lines2=$(wc -l < "$dir/2.log")

# A job labelled `other`: only the third agent runs it (and it gives dyn time to misbehave).
sed 's/dyn:/labelled:/; s/label: batch/label: other/' "$dir/dyn.yaml" > "$dir/other.yaml"
"$EJ" job add "$dir/other.yaml" > /dev/null || fail "job add (other) failed"
# (Agent 3 traces: its scripts' output goes to its database, its item reports to its log.)
wait_for_lines "$dir/3.log" "job=labelled item=" 4 20 || fail "agent 3 did not run the labelled job"
grep -q "job 'dyn'" "$dir/3.log" && fail "agent 3 (label other) ran dyn"
grep -q "job 'labelled'" "$dir/1.log" "$dir/2.log" && fail "a batch agent ran the job labelled other"
after=$(tail -n +"$((lines1 + 1))" "$dir/1.log"; tail -n +"$((lines2 + 1))" "$dir/2.log")
[[ "$after" != *"job=dyn"* ]] || fail "dyn ran after it was removed: $after"

# An HTTP job (run by type name): both agents call the endpoint for their items.
cat > "$dir/server.py" <<'PY'
import http.server, sys
log = open(sys.argv[1], "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        log.write("GET %s ctx=%s\n" % (self.path, self.headers.get("shardingContext")))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
: > "$dir/requests.log"
setsid python3 "$dir/server.py" "$dir/requests.log" "$dir/http.port" &
PID[http]=$!
disown "$!"
poll_until 10 test -s "$dir/http.port" || fail "the HTTP server did not start"
cat > "$dir/http.yaml" <<YAML
elasticjob:
  jobs:
    ping:
      elasticJobType: HTTP
      cron: 0/1 * * * * ?
      shardingTotalCount: 2
      label: batch
      props:
        http.uri: http://127.0.0.1:$(cat "$dir/http.port")/ping
        http.method: GET
YAML
"$EJ" job add "$dir/http.yaml" > /dev/null || fail "job add (HTTP) failed"
wait_for_lines_in "job 'ping' scheduled (HTTP" 2 20 "$dir/1.log" "$dir/2.log" || fail "ping did not start on both agents"
has_both() { grep -q "10.6.0.1@-@" "$dir/requests.log" && grep -q "10.6.0.2@-@" "$dir/requests.log"; }
poll_until 20 has_both || fail "the HTTP job was not called by both agents: $(tail -3 "$dir/requests.log")"
"$EJ" job remove ping > /dev/null || fail "job remove (HTTP) failed"
wait_for_lines_in "job 'ping' stopped (removed)" 2 20 "$dir/1.log" "$dir/2.log" || fail "ping did not stop"

# A job a Java instance registered (its class as type): not run by the agents, nothing of
# theirs registered for it.
zk create /e2e/javaJob org.example.OrderJob > /dev/null
zk create /e2e/javaJob/config '{"jobName":"javaJob","shardingTotalCount":1,"cron":"0/1 * * * * ?","label":"batch"}' > /dev/null
wait_for_lines_in "job 'javaJob' (type 'org.example.OrderJob') not run here" 2 20 "$dir/1.log" "$dir/2.log" ||
  fail "the agents did not skip the Java job"
java_instances=$(zk_ls /e2e/javaJob/instances)
[[ -z "$java_instances" || "$java_instances" == "[]" ]] || fail "an agent registered for the Java job: $java_instances"

# SIGTERM: the agent stops its jobs and exits 0.
gone() { ! kill -0 "${PID[3]}" 2>/dev/null; }
kill -TERM "${PID[3]}"
wait_for_lines "$dir/3.log" "SIGTERM received" 1 20 || fail "agent 3 ignored SIGTERM"
poll_until 20 gone || fail "agent 3 did not exit"
[[ "$(zk_ls /e2e/labelled/instances)" == "[]" ]] || fail "agent 3 left its instance: $(zk_ls /e2e/labelled/instances)"
# Agent 3 traced its runs (--tracing): the labelled job's item runs are in its database.
traced=$("$EJ" trace executions --tracing "sqlite://$dir/events.db" --job labelled --json |
  python3 -c 'import json,sys; print(sum(1 for r in json.load(sys.stdin) if r["is_success"]))')
((traced >= 4)) || fail "agent 3 traced $traced successful runs of the labelled job, expected at least 4"

e2e_on_failure() { for n in 1 2 3; do echo "--- agent $n"; grep -v "outcome=SUCCESS\|^v[12] " "$dir/$n.log" | tail -20; done; }
e2e_finish "agents follow the namespace: jobs added, changed and removed; items shared; labels"
