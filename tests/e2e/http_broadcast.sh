#!/usr/bin/env bash
# An HTTP job broadcast by its prop (`task.broadcast: "true"`, docs/task-models.md) through
# `elasticjob run` on three hosts of a real ZooKeeper: every trigger sends the request once
# from each live instance, all with the run's id as the sharding context's taskId (a local
# python3 http.server records each request's shardingContext header).
# Usage: http_broadcast.sh path/to/elasticjob path/to/zk-server.sh
set -uo pipefail
source "$(dirname "$0")/../lib/e2e.sh" "$@"
e2e_start_zookeeper
cat > "$dir/server.py" <<'PY'
import http.server, json, sys
log = open(sys.argv[1], "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ctx = json.loads(self.headers.get("shardingContext") or "{}")
        log.write("%s %s\n" % (self.path, ctx.get("taskId")))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
setsid python3 "$dir/server.py" "$dir/requests.log" "$dir/port.tmp" &
PID[http]=$!
disown "$!"
for _ in $(seq 100); do [[ -s "$dir/port.tmp" ]] && break; sleep 0.1; done
http_port=$(cat "$dir/port.tmp" 2> /dev/null)
[[ -n "$http_port" ]] || { fail "the HTTP server did not start"; e2e_finish ""; }
cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  jobs:
    pingall:
      elasticJobType: HTTP
      cron: 0/2 * * * * ?
      shardingTotalCount: 1
      props:
        http.uri: http://127.0.0.1:$http_port/ping
        http.method: GET
        task.broadcast: "true"
YAML
e2e_start_host a 10.1.1.1 "$dir/jobs.yaml" "$url"
e2e_start_host b 10.1.1.2 "$dir/jobs.yaml" "$url"
e2e_start_host c 10.1.1.3 "$dir/jobs.yaml" "$url"
# Two full runs: some run id sent by all three.
full=0
for _ in $(seq 1 60); do  # at most 30 s
  full=$(awk '{print $2}' "$dir/requests.log" 2> /dev/null | sort | uniq -c | awk '$1 == 3' | wc -l)
  ((full >= 2)) && break
  sleep 0.5
done
((full >= 2)) || fail "fewer than two runs on all three: $(sort "$dir/requests.log" | uniq -c)"
over=$(awk '{print $2}' "$dir/requests.log" | sort | uniq -c | awk '$1 > 3' | wc -l)
[[ $over == 0 ]] || fail "a run sent more than once per instance: $(sort "$dir/requests.log" | uniq -c)"
grep -q "^/ping pingall@" "$dir/requests.log" || fail "the taskId is not a run id: $(head -2 "$dir/requests.log")"
e2e_on_failure() { for f in "$dir"/?.log; do echo "== $f"; tail -n 10 "$f"; done; }
e2e_finish "HTTP broadcast by prop: every run once on each of three instances"
