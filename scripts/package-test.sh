#!/usr/bin/env bash
# The Debian packages in a fresh Debian 12 root (docs/packaging.md): builds them (cpack, the
# `package` preset) unless given, installs elasticjob and libelasticjob0 with apt into a root
# made by debootstrap from this machine's Debian mirror (cached in /tmp/fresh-cache/base.tar,
# as ../shared/tools/fresh-machine.sh caches it), checks what postinst made (the user, its
# state directory, the settings as conffiles), then runs the command lines of
# elasticjob-agent.service and elasticjob-console.service there as the units would (systemd
# cannot run in a chroot here: each ExecStart expanded with its EnvironmentFile, as its User,
# in its WorkingDirectory) against a ZooKeeper on this machine's loopback. A job added to the
# namespace must run on the agent; both must answer /readyz; SIGTERM must stop both with
# exit 0 within their unit's TimeoutStopSec. Prints how long it took.
# Needs root, debootstrap, dpkg-dev and Debian's mirror. The ctest `package.debian` runs it
# when ELASTICJOB_PACKAGE_TEST=1 (it takes minutes; docs/testing.md).
# Usage: scripts/package-test.sh [--ctest] [DIR_WITH_DEBS]
#   --ctest: exit 77 (skipped) unless ELASTICJOB_PACKAGE_TEST=1.
set -uo pipefail
if [[ "${1:-}" == --ctest ]]; then
  shift
  if [[ "${ELASTICJOB_PACKAGE_TEST:-}" != 1 ]]; then
    echo "skipped: ELASTICJOB_PACKAGE_TEST=1 runs it (minutes: docs/testing.md)"
    exit 77
  fi
fi
started=$(date +%s)
root_dir="$(cd "$(dirname "$0")/.." && pwd)"
ZK="$root_dir/scripts/zk-server.sh"
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
die() { echo "FAIL $*"; exit 1; }
failures=0
[[ $(id -u) -eq 0 ]] || die "needs root (debootstrap, chroot)"
for tool in debootstrap dpkg-deb python3 curl; do
  command -v "$tool" > /dev/null || die "$tool is missing (scripts/install-deps.sh installs it)"
done

debs="${1:-}"
if [[ -z "$debs" ]]; then
  cd "$root_dir" || exit 1
  { cmake --preset package && cmake --build --preset package -j 2 && (cd build/package && cpack); } \
    > /tmp/elasticjob-package-build.log 2>&1 || die "building the packages: $(tail -20 /tmp/elasticjob-package-build.log)"
  debs="$root_dir/build/package"
fi
tool_deb=$(ls "$debs"/elasticjob_*.deb 2>/dev/null | head -1)
lib_deb=$(ls "$debs"/libelasticjob0_*.deb 2>/dev/null | head -1)
dev_deb=$(ls "$debs"/libelasticjob-dev_*.deb 2>/dev/null | head -1)
[[ -n "$tool_deb" && -n "$lib_deb" && -n "$dev_deb" ]] || die "no elasticjob, libelasticjob0 and libelasticjob-dev packages in $debs"
# What each package holds: the split (listed first: grep -q would cut dpkg-deb's pipe).
tool_files=$(dpkg-deb -c "$tool_deb")
lib_files=$(dpkg-deb -c "$lib_deb")
dev_files=$(dpkg-deb -c "$dev_deb")
grep -q '\./usr/bin/elasticjob$' <<< "$tool_files" || fail "elasticjob: no /usr/bin/elasticjob"
grep -q 'lib/systemd/system/elasticjob-agent.service$' <<< "$tool_files" || fail "elasticjob: no agent unit"
grep -q 'lib/systemd/system/elasticjob-console.service$' <<< "$tool_files" || fail "elasticjob: no console unit"
grep -q '/etc/elasticjob/console.env$' <<< "$tool_files" || fail "elasticjob: no console settings"
grep -q 'libelasticjob\.so\.0 -> ' <<< "$lib_files" || fail "libelasticjob0: no libelasticjob.so.0"
grep -q '/include/' <<< "$lib_files" && fail "libelasticjob0 holds headers"
grep -q 'include/elasticjob/metrics/metrics.h$' <<< "$dev_files" || fail "libelasticjob-dev: no headers"
grep -q 'cmake/elasticjob/elasticjobConfig.cmake$' <<< "$dev_files" || fail "libelasticjob-dev: no CMake package"
grep -q 'libelasticjob\.so -> ' <<< "$dev_files" || fail "libelasticjob-dev: no libelasticjob.so link"
dpkg-deb -f "$dev_deb" Depends | grep -q 'libelasticjob0 (= ' || fail "libelasticjob-dev does not depend on libelasticjob0: $(dpkg-deb -f "$dev_deb" Depends)"

# A fresh root.
CACHE=/tmp/fresh-cache
mkdir -p "$CACHE"
MIRROR=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
[[ -n "$MIRROR" ]] || MIRROR=http://deb.debian.org/debian
tmp=$(mktemp -d /tmp/elasticjob-package.XXXXXX)
R="$tmp/root"
mkdir -p "$R"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null; done
  bash "$ZK" stop "$tmp/zk" > /dev/null 2>&1
  for m in proc sys dev; do umount "$R/$m" 2> /dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
if [[ ! -f "$CACHE/base.tar" ]]; then
  debootstrap --variant=minbase bookworm "$R" "$MIRROR" > "$tmp/debootstrap.log" 2>&1 ||
    die "debootstrap: $(tail -5 "$tmp/debootstrap.log")"
  tar -C "$R" -cf "$CACHE/base.tar.$$" . && mv "$CACHE/base.tar.$$" "$CACHE/base.tar"
else
  tar -C "$R" -xf "$CACHE/base.tar"
fi
chmod 755 "$R"  # debootstrap's target was a mktemp -d (0700): the units' user must enter "/"
cp /etc/apt/sources.list.d/debian.sources "$R/etc/apt/sources.list.d/" 2> /dev/null && rm -f "$R/etc/apt/sources.list"
cp /etc/resolv.conf "$R/etc/resolv.conf"
if ls /usr/local/share/ca-certificates/*.crt > /dev/null 2>&1; then
  mkdir -p "$R/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$R/usr/local/share/ca-certificates/"
fi
mount --bind /proc "$R/proc" && mount --bind /dev "$R/dev" && mount --bind /sys "$R/sys" || die "bind mounts"
mkdir -p "$R/tmp/debs"
cp "$tool_deb" "$lib_deb" "$R/tmp/debs/"
in_root() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
in_root apt-get update -q > "$tmp/apt.log" 2>&1 || die "apt-get update: $(tail -5 "$tmp/apt.log")"
in_root sh -c 'apt-get install -y -q --no-install-recommends /tmp/debs/*.deb' >> "$tmp/apt.log" 2>&1 ||
  die "installing the packages: $(tail -15 "$tmp/apt.log")"
installed=$(($(date +%s) - started))

# What postinst made.
in_root getent passwd elasticjob | grep -q ':/var/lib/elasticjob:/usr/sbin/nologin$' || fail "no system user elasticjob: $(in_root getent passwd elasticjob)"
[[ "$(in_root stat -c %U:%G /var/lib/elasticjob)" == elasticjob:elasticjob ]] || fail "/var/lib/elasticjob is not the user's"
conffiles=$(in_root dpkg-query -W -f='${Conffiles}' elasticjob)
[[ "$conffiles" == *"/etc/elasticjob/agent.env"* && "$conffiles" == *"/etc/elasticjob/console.env"* ]] || fail "settings are not conffiles: $conffiles"
in_root /usr/bin/elasticjob --version > /dev/null || fail "the installed command does not run: $(in_root /usr/bin/elasticjob --version 2>&1)"

# The units' settings, pointed at a ZooKeeper on this machine.
read -r port _ < <(bash "$ZK" start "$tmp/zk") || die "cannot start ZooKeeper"
registry="zookeeper://127.0.0.1:$port/packagetest"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
agent_metrics=$(free_port)
console_metrics=$(free_port)
console_port=$(free_port)
sed -i "s#^ELASTICJOB_REGISTRY=.*#ELASTICJOB_REGISTRY=$registry#; s#--metrics 127.0.0.1:9404#--metrics 127.0.0.1:$agent_metrics#" "$R/etc/elasticjob/agent.env"
sed -i "s#^ELASTICJOB_REGISTRY=.*#ELASTICJOB_REGISTRY=$registry#; s#--metrics 127.0.0.1:9405#--metrics 127.0.0.1:$console_metrics#; s#--listen 127.0.0.1:8899#--listen 127.0.0.1:$console_port#" "$R/etc/elasticjob/console.env"

# unit_command UNIT: the unit's User, WorkingDirectory, TimeoutStopSec, environment and
# ExecStart argv (systemd's expansion: ${VAR} one word, $VAR split at whitespace), one per
# line, from the files installed in the root.
unit_command() {
  python3 - "$R" "$1" <<'PY'
import re, sys
root, unit = sys.argv[1], sys.argv[2]
keys = {}
for line in open(f"{root}/lib/systemd/system/{unit}"):
    line = line.strip()
    if "=" in line and not line.startswith("#"):
        k, v = line.split("=", 1)
        keys[k] = v
env = {}
for line in open(root + keys["EnvironmentFile"].lstrip("-")):
    line = line.strip()
    if line and not line.startswith("#"):
        k, v = line.split("=", 1)
        env[k] = v
argv = []
for word in keys["ExecStart"].split():
    m = re.fullmatch(r"\$\{(\w+)\}", word)
    if m:
        argv.append(env.get(m.group(1), ""))
    elif re.fullmatch(r"\$(\w+)", word):
        argv.extend(env.get(word[1:], "").split())
    else:
        argv.append(word)
print(keys["User"]); print(keys["WorkingDirectory"]); print(keys["TimeoutStopSec"])
print(" ".join(f"{k}={v}" for k, v in env.items() if " " not in v))
print("\n".join(argv))
PY
}
declare -A STOP_SEC
start_unit() {  # start_unit NAME UNIT: runs the unit's command line in the root, log $tmp/NAME.log
  local name="$1" unit="$2" user cwd stop envline
  local -a lines argv envs
  mapfile -t lines < <(unit_command "$unit")
  user="${lines[0]}" cwd="${lines[1]}" stop="${lines[2]}" envline="${lines[3]}"
  argv=("${lines[@]:4}")
  read -r -a envs <<< "$envline"
  STOP_SEC[$name]="${stop%s}"
  echo "$unit: User=$user, in $cwd: ${argv[*]}" >> "$tmp/commands.txt"
  chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "${envs[@]}" \
    /usr/bin/setpriv --reuid="$user" --regid="$user" --init-groups \
    /bin/sh -c 'cd "$0" && exec "$@"' "$cwd" "${argv[@]}" > "$tmp/$name.log" 2>&1 &
  pids+=($!)
  PID[$name]=$!
}
declare -A PID
start_unit agent elasticjob-agent.service
start_unit console elasticjob-console.service
ready() {  # ready PORT: /readyz answers 200 within 30 s
  local i
  for ((i = 0; i < 300; i++)); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz")" == 200 ]] && return 0
    sleep 0.1
  done
  return 1
}
ready "$agent_metrics" || fail "agent: /readyz never 200: $(curl -s "http://127.0.0.1:$agent_metrics/readyz"; tail -5 "$tmp/agent.log")"
ready "$console_metrics" || fail "console: /readyz never 200: $(tail -5 "$tmp/console.log")"
[[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$console_port/")" == 200 ]] || fail "console: its page is not served"
# A job for the agent: it runs as the unit's user and writes in its state directory.
cat > "$R/tmp/job.yaml" <<'YAML'
elasticjob:
  jobs:
    packaged:
      elasticJobType: SCRIPT
      cron: 0/1 * * * * ?
      shardingTotalCount: 2
      props:
        script.command.line: "/bin/sh -c 'id -un >> /var/lib/elasticjob/ran.txt'"
YAML
in_root /usr/bin/elasticjob job add /tmp/job.yaml --registry "$registry" > "$tmp/add.log" 2>&1 || fail "job add: $(cat "$tmp/add.log")"
ran=0
for ((i = 0; i < 300; i++)); do
  ran=$(grep -c 'outcome=SUCCESS' "$tmp/agent.log")
  ((ran >= 4)) && break
  sleep 0.1
done
((ran >= 4)) || fail "the agent ran $ran items of the job: $(tail -5 "$tmp/agent.log")"
grep -qx elasticjob "$R/var/lib/elasticjob/ran.txt" 2> /dev/null || fail "the job's script did not run as elasticjob: $(cat "$R/var/lib/elasticjob/ran.txt" 2>&1)"
head -1 "$tmp/agent.log" | python3 -c 'import json,sys; json.loads(sys.stdin.readline())' 2> /dev/null ||
  fail "agent: --log-format json from agent.env not applied: $(head -1 "$tmp/agent.log")"
# A stop as systemd's: SIGTERM to the main process, exit 0 within TimeoutStopSec.
for name in agent console; do
  t0=$(date +%s%N)
  kill -TERM "${PID[$name]}"
  limit=$((STOP_SEC[$name] * 10))
  for ((i = 0; i < limit; i++)); do kill -0 "${PID[$name]}" 2> /dev/null || break; sleep 0.1; done
  if kill -0 "${PID[$name]}" 2> /dev/null; then
    fail "$name: still running ${STOP_SEC[$name]} s after SIGTERM (TimeoutStopSec)"
  else
    wait "${PID[$name]}"; rc=$?
    [[ $rc -eq 0 ]] || fail "$name: exit $rc after SIGTERM: $(tail -3 "$tmp/$name.log")"
    echo "$name stopped in $((($(date +%s%N) - t0) / 1000000)) ms (TimeoutStopSec=${STOP_SEC[$name]})"
  fi
done
cat "$tmp/commands.txt"
if ((failures > 0)); then
  echo "$failures package check(s) failed"
  exit 1
fi
echo "ok   packages installed in a fresh Debian root ($installed s), the units' command lines ran a job; $(($(date +%s) - started)) s in all"
