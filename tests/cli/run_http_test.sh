#!/usr/bin/env bash
# `elasticjob run` with HTTP jobs (docs/job-types.md): a local HTTP server (python3's
# http.server on 127.0.0.1, a free port it picks itself) records each request; a GET job's
# items succeed and carry their sharding context header, a POST to a path answering 500 fails
# its items (the error handler logs them), and an unknown elasticJobType is refused (exit 2)
# naming the known types. Usage: run_http_test.sh path/to/elasticjob
set -uo pipefail
source "$(dirname "$0")/../lib/follow_log.sh"
EJ="$1"
dir="$(mktemp -d)"
server_pid=""
ej_pid=""
cleanup() {
  [[ -n "$ej_pid" ]] && kill "$ej_pid" 2>/dev/null
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

cat > "$dir/server.py" <<'PY'
import http.server, sys
log = open(sys.argv[1], "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    def handle_one(self, status):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode() if n else ""
        log.write("%s %s ctx=%s body=%s\n" % (self.command, self.path,
                                              self.headers.get("shardingContext"), body))
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def do_GET(self): self.handle_one(200)
    def do_POST(self): self.handle_one(500 if self.path == "/fail" else 200)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
python3 "$dir/server.py" "$dir/requests.log" "$dir/port.tmp" &
server_pid=$!
for _ in $(seq 100); do [[ -s "$dir/port.tmp" ]] && break; sleep 0.1; done
port=$(cat "$dir/port.tmp" 2>/dev/null)
[[ -n "$port" ]] || { echo "FAIL the HTTP server did not start"; exit 1; }

cat > "$dir/jobs.yaml" <<YAML
elasticjob:
  regCenter:
    namespace: runhttptest
  jobs:
    ping:
      elasticJobType: HTTP
      cron: 0/1 * * * * ?
      shardingTotalCount: 2
      shardingItemParameters: 0=Beijing,1=Shanghai
      props:
        http.uri: http://127.0.0.1:$port/ping
        http.method: GET
    report:
      elasticJobType: HTTP
      cron: 0/1 * * * * ?
      shardingTotalCount: 1
      props:
        http.uri: http://127.0.0.1:$port/fail
        http.method: POST
        http.data: hello
YAML
: > "$dir/out.log"
"$EJ" run "$dir/jobs.yaml" > "$dir/out.log" 2>&1 &
ej_pid=$!
follow_log "$dir/out.log" 4 || fail "fewer than 4 successful item runs: $(cat "$dir/out.log")"
wait_for_lines "$dir/out.log" "job=report item=0" 1 30 ||
  fail "no run of the failing job: $(cat "$dir/out.log")"
kill -TERM "$ej_pid" 2>/dev/null
wait "$ej_pid"
rc=$?
ej_pid=""
[[ $rc -eq 0 ]] || fail "run exited $rc after SIGTERM"
grep -q "job 'ping' scheduled (HTTP" "$dir/out.log" || fail "no scheduled line for the HTTP job"
grep -q 'job=ping item=1 .*outcome=SUCCESS' "$dir/out.log" || fail "ping item 1 did not succeed"
grep -q 'job=report item=0 .*outcome=FAILURE error="POST http://127.0.0.1:[0-9]*/fail: status 500' \
  "$dir/out.log" || fail "the 500 did not fail the item: $(grep report "$dir/out.log" | head -3)"
grep -q "ERROR Job 'report' exception occur in job processing" "$dir/out.log" ||
  fail "the LOG error handler did not log the failure"
grep -q 'GET /ping ctx={"jobName":"ping",.*"shardingItem":1,"shardingParameter":"Shanghai"}' \
  "$dir/requests.log" || fail "no shardingContext header: $(head -3 "$dir/requests.log")"
grep -q 'POST /fail ctx=.* body=hello' "$dir/requests.log" || fail "the POST body did not arrive"
[[ $failures -eq 0 ]] && echo "ok   run: HTTP jobs, sharding context header, status 500 fails the item"

# An unknown type: exit 2, naming the known ones.
sed 's/elasticJobType: HTTP/elasticJobType: NO_SUCH/' "$dir/jobs.yaml" > "$dir/unknown.yaml"
"$EJ" run "$dir/unknown.yaml" > "$dir/unknown.log" 2>&1
rc=$?
[[ $rc -eq 2 ]] || fail "unknown type: exit $rc, expected 2"
grep -q "unknown job type 'NO_SUCH' (known: HTTP, SCRIPT)" "$dir/unknown.log" ||
  fail "unknown type message: $(cat "$dir/unknown.log")"
[[ $failures -eq 0 ]] && echo "ok   run: an unknown elasticJobType is refused listing the known ones"
exit $((failures > 0))
