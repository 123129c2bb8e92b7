#!/usr/bin/env bash
# `elasticjob workflow` without a server (memory://, a namespace of its own per command):
# refusals name what is wrong and exit as the other commands do (1 failed, 2 bad input).
# Usage: workflow_cli_test.sh path/to/elasticjob
set -uo pipefail
EJ="$1"
failures=0
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
check() {  # NAME WANT_CODE NEEDLE OUTPUT CODE
  if [[ $5 -ne $2 || "$4" != *"$3"* ]]; then
    echo "FAIL $1: exit $5 (want $2), output: $4"
    failures=$((failures + 1))
  else
    echo "ok   $1"
  fi
}
wf() { "$EJ" workflow "$@" --registry memory://cli 2>&1; }

printf 'name: [\n' > "$dir/bad.yaml"
out=$(wf add "$dir/bad.yaml"); check "not YAML" 2 "not YAML" "$out" $?
printf 'name: w\nnodes:\n  - {id: A, kind: lambda}\n' > "$dir/kind.yaml"
out=$(wf add "$dir/kind.yaml"); check "an unknown kind names the node" 2 "node 'A': kind" "$out" $?
printf 'name: w\nnodes:\n  - {id: A, kind: decision, expression: "true"}\n  - {id: B, kind: decision, expression: "true"}\nedges:\n  - {from: A, to: B}\n  - {from: B, to: A}\n' > "$dir/cycle.yaml"
out=$(wf add "$dir/cycle.yaml"); check "a cycle names its nodes" 2 "a cycle: A -> B -> A" "$out" $?
printf 'name: w\nnodes:\n  - {id: A, kind: decision, expression: "true"}\nedges:\n  - {from: A, to: Z}\n' > "$dir/dangling.yaml"
out=$(wf add "$dir/dangling.yaml"); check "a dangling edge names the node" 2 "to 'Z' (from 'A'): no such node" "$out" $?
printf 'name: w\nnodes:\n  - {id: A, job: ghostJob}\n' > "$dir/ghost.yaml"
out=$(wf add "$dir/ghost.yaml"); check "an unknown job names the node" 1 "node 'A': job 'ghostJob'" "$out" $?
out=$(wf add "$dir/missing.yaml"); check "a missing file" 2 "cannot be read" "$out" $?
out=$(wf show nosuch); check "show of an unknown workflow" 1 "workflow 'nosuch' not found" "$out" $?
out=$(wf run nosuch --wait 1); check "run of an unknown workflow" 1 "workflow 'nosuch' not found" "$out" $?
out=$(wf instance no-dash-number-here/x); check "a malformed instance id" 2 "expected {workflow}-{number}" "$out" $?
out=$(wf instance w-0000000001); check "an unknown instance" 1 "not found" "$out" $?
out=$(wf list --json); check "an empty list" 0 "[]" "$out" $?
out=$(wf run w --wait nope); check "--wait takes seconds" 2 "--wait" "$out" $?
out=$(wf run w --count 0); check "--count takes 1 to 10000" 2 "--count: expected 1 to 10000, got 0" "$out" $?
((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
