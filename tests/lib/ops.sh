# Shell helpers for tests of the operation commands (`elasticjob job|server`). Source this
# file after tests/lib/e2e.sh (it uses $EJ and `fail`).

# poll_until SECONDS COMMAND...: runs COMMAND every 0.2 s until it succeeds, at most SECONDS.
poll_until() {
  local limit="$1" end
  shift
  end=$((SECONDS + limit))
  while ! "$@"; do
    ((SECONDS >= end)) && return 1
    sleep 0.2
  done
}

# json_get JSON EXPR: evaluates the Python expression EXPR over the parsed JSON `j`.
json_get() { python3 -c "import json,sys; j=json.loads(sys.argv[1]); print($2)" "$1"; }

# expect_exit CODE STDERR_PATTERN COMMAND...: runs COMMAND; fails unless it exits CODE and
# its stderr contains STDERR_PATTERN (a fixed string).
expect_exit() {
  local want="$1" pattern="$2" err rc
  shift 2
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  [[ "$rc" == "$want" ]] || fail "'$*' exited $rc, expected $want ($err)"
  [[ "$err" == *"$pattern"* ]] || fail "'$*': stderr '$err' lacks '$pattern'"
}
