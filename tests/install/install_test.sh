#!/usr/bin/env bash
# Installs the build to a temp prefix, moves the prefix elsewhere (an installed copy must
# relocate: its CMake files name no path of the machine that built it), builds
# examples/embedding as a separate CMake project against the moved copy
# (find_package(elasticjob COMPONENTS core tracing tasks console): one program per component
# and one on the umbrella elasticjob::elasticjob), checks each program needs only its
# component's libraries, runs the tracing, tasks and console programs, and runs the core one
# briefly on a private ZooKeeper: it must schedule its job and run all three items.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build="$1"
src="$2"
zk="$src/scripts/zk-server.sh"
tmp="$(mktemp -d)"
trap 'bash "$zk" stop "$tmp/zk" > /dev/null 2>&1; rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1 ||
  fail "cmake --install: $(tail -5 "$tmp/install.log")"
cmake_dir=$(dirname "$(find "$tmp/prefix" -name elasticjobConfig.cmake | head -1)")
[[ -f "$cmake_dir/elasticjobConfig.cmake" ]] || fail "no elasticjobConfig.cmake installed"
# No absolute path in the package's CMake files: neither a library of this machine nor the
# prefix, the build or the source tree.
if hits=$(grep -nE "(^|[\"; ])/(usr|lib|opt|home|tmp|work|root)/" "$cmake_dir"/*.cmake); then
  fail "absolute paths in the installed CMake files: $(head -5 <<< "$hits")"
fi
mv "$tmp/prefix" "$tmp/moved"
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
cmake -S "$src/examples/embedding" -B "$tmp/build" "${generator[@]}" \
  -DCMAKE_PREFIX_PATH="$tmp/moved" -DCMAKE_BUILD_TYPE=Debug > "$tmp/configure.log" 2>&1 ||
  fail "configuring the separate project: $(tail -15 "$tmp/configure.log")"
cmake --build "$tmp/build" -j 2 > "$tmp/build.log" 2>&1 ||
  fail "building the separate project: $(tail -15 "$tmp/build.log")"
# The private build tree must not be what it used: only the prefix.
grep -q "$tmp/moved" "$tmp/build/CMakeCache.txt" || fail "the project did not find the moved copy"
! grep -q "elasticjob_DIR:PATH=$build" "$tmp/build/CMakeCache.txt" || fail "found the build tree, not the install"

# Each component's program needs what its component needs and no more: the core links no
# database client, no gRPC, no libsodium (the console's).
needs() {  # program: the libraries of interest it needs (ldd), one line
  ldd "$tmp/build/$1" | grep -oE 'lib(grpc\+\+|protobuf|pq|mariadb|sqlite3|sodium)\.so' | sort -u | tr '\n' ' '
}
check_needs() {  # program forbidden-regex
  local got
  got=$(needs "$1")
  if [[ -n "$2" ]] && grep -qE "$2" <<< "$got"; then fail "$1 needs $got (none of $2 expected)"; fi
}
check_needs example_simple_job 'grpc|protobuf|pq|mariadb|sqlite3|sodium'
check_needs example_traced_job 'grpc|protobuf|sodium'
check_needs example_broadcast_job 'sodium|mariadb'
check_needs example_console 'grpc|protobuf'
out=$("$tmp/build/example_traced_job" "$tmp/traces.db" 2>&1) || fail "example_traced_job: $out"
grep -q "^2 executions traced" <<< "$out" || fail "example_traced_job: $out"
out=$(timeout 60 "$tmp/build/example_broadcast_job" 2>&1) || fail "example_broadcast_job: $out"
grep -q "^broadcast ran on 1 instance(s)" <<< "$out" || fail "example_broadcast_job: $out"
out=$(timeout 60 "$tmp/build/example_console" 2>&1) || fail "example_console: $out"
grep -q "^console at http://127.0.0.1:" <<< "$out" || fail "example_console: $out"
[[ -x "$tmp/build/example_umbrella" ]] || fail "example_umbrella (elasticjob::elasticjob) not built"
echo "ok   components: core (no database client, gRPC or libsodium needed), tracing, tasks, console, the umbrella"

read -r port _ < <(bash "$zk" start "$tmp/zk") || fail "cannot start ZooKeeper"
url="zookeeper://127.0.0.1:$port/install-test"
# With metrics served (the public API from the installed headers): the job's runs counted.
timeout 60 "$tmp/build/example_simple_job" "$url" 8 127.0.0.1:0 > "$tmp/run.log" 2>&1 &
example=$!
runs=0
for ((i = 0; i < 100; i++)); do
  base=$(grep -o 'metrics at http://[^/]*' "$tmp/run.log" | sed 's/metrics at //')
  if [[ -n "$base" ]]; then
    curl -s "$base/metrics" > "$tmp/metrics.txt"
    runs=$(sed -n 's/^elasticjob_item_runs_total{job_name="orderSync",outcome="success"} //p' "$tmp/metrics.txt")
    [[ "${runs:-0}" -ge 3 ]] && break
  fi
  sleep 0.1
done
wait "$example"; rc=$?
[[ "${runs:-0}" -ge 3 ]] || fail "the example's metrics did not count its runs: '${runs:-}' ($base)"
[[ $rc -eq 0 ]] || fail "the example exited $rc: $(tail -5 "$tmp/run.log")"
grep -q "orderSync scheduled on $url" "$tmp/run.log" || fail "not scheduled: $(cat "$tmp/run.log")"
for item in "0 (Beijing)" "1 (Shanghai)" "2 (Guangzhou)"; do
  grep -q "orderSync item $item of 3" "$tmp/run.log" || fail "item $item did not run: $(cat "$tmp/run.log")"
done
echo "ok   installed, moved, found by find_package(elasticjob) from a separate project, ran its job on ZooKeeper"
