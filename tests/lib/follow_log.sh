# Shell helpers for tests that watch a process's log. Source this file.

# follow_log LOG COUNT [FIRST_LINE]: waits (at most 60 s) until COUNT successful item-run
# lines (`outcome=SUCCESS`) are in LOG from FIRST_LINE on, reading as tail follows the file
# (no polling). Returns 0 when they arrived.
follow_log() {
  local log="$1" want="$2" from="${3:-1}" seen=0 line follower
  exec 3< <(timeout 60 tail -n +"$from" -f "$log")
  follower=$!
  while IFS= read -r line <&3; do
    [[ "$line" == *outcome=SUCCESS* ]] && seen=$((seen + 1))
    [[ $seen -ge $want ]] && break
  done
  kill "$follower" 2>/dev/null
  exec 3<&-
  [[ $seen -ge $want ]]
}

# wait_for_lines FILE PATTERN COUNT [TIMEOUT]: waits until COUNT lines of FILE (from its
# start, following appends) contain PATTERN (a fixed string), at most TIMEOUT seconds (60).
wait_for_lines() {
  wait_for_lines_in "$2" "$3" "${4:-60}" "$1"
}

# wait_for_lines_in PATTERN COUNT TIMEOUT FILE...: as wait_for_lines, over several files.
wait_for_lines_in() {
  local pattern="$1" want="$2" limit="$3" seen=0 line follower
  shift 3
  exec 4< <(timeout "$limit" tail -q -n +1 -f "$@")
  follower=$!
  while IFS= read -r line <&4; do
    [[ "$line" == *"$pattern"* ]] && seen=$((seen + 1))
    [[ $seen -ge $want ]] && break
  done
  kill "$follower" 2>/dev/null
  exec 4<&-
  [[ $seen -ge $want ]]
}
