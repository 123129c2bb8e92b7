# Shell helpers for tests that check which processes are left. Source this file.

# proc_alive PID: true if PID is a process that has not exited (a zombie counts as gone: it
# runs nothing, and its reaping is its new parent's business once its own parent is gone).
proc_alive() {
  local state
  kill -0 "$1" 2>/dev/null || return 1
  state=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n "$state" && "$state" != Z ]]
}

# proc_pgid PID: the process group of PID (empty if it is gone).
proc_pgid() { sed 's/.*) . [0-9]* \([0-9]*\).*/\1/' "/proc/$1/stat" 2>/dev/null; }

# group_alive PGID: true if a process of group PGID has not exited (kill -0 on the group,
# then zombies left out).
group_alive() {
  local stat pid
  kill -0 -- "-$1" 2>/dev/null || return 1
  for stat in /proc/[0-9]*/stat; do
    pid=${stat#/proc/}; pid=${pid%/stat}
    [[ "$(proc_pgid "$pid")" == "$1" ]] && proc_alive "$pid" && return 0
  done
  return 1
}

# wait_gone SECONDS PID... and PGID as -PGID: waits until none of them is alive; true if so.
wait_gone() {
  local deadline=$((SECONDS + $1)) p left
  shift
  while :; do
    left=""
    for p in "$@"; do
      if [[ "$p" == -* ]]; then group_alive "${p#-}" && left+=" $p"; else proc_alive "$p" && left+=" $p"; fi
    done
    [[ -z "$left" ]] && return 0
    ((SECONDS >= deadline)) && { echo "$left"; return 1; }
    sleep 0.1
  done
}

# kill_recorded FILE: SIGKILL to the processes a test's scripts recorded in FILE (second word
# of each line) that are still alive and still a shell or a sleep: what a failed test leaves.
kill_recorded() {
  local p
  for p in $(awk '{print $2}' "$1" 2>/dev/null); do
    proc_alive "$p" && grep -qa "sleep\|/bin/sh" "/proc/$p/cmdline" 2>/dev/null && kill -9 "$p"
  done
}
