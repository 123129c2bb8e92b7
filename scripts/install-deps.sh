#!/usr/bin/env bash
# Installs every build and test dependency of elasticjob-cpp from Debian 12's packages.
# Safe to run again: packages already present are skipped without touching the network.
set -euo pipefail

PACKAGES=(
  # toolchain
  g++ cmake ninja-build pkg-config clang-format clang-tidy
  # libraries
  libyaml-cpp-dev nlohmann-json3-dev liblua5.4-dev libcli11-dev libspdlog-dev libfmt-dev libcctz-dev
  # the allocator the executables link (CMakeLists.txt: ELASTICJOB_MALLOC)
  libjemalloc-dev
  # tests and benchmarks
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  # reference implementations the differential tests run beside ours (docs/testing.md)
  default-jdk-headless libquartz2-java libyaml-snake-java tzdata
  # registry center: the ZooKeeper C client, and the server the integration tests start
  libzookeeper-mt-dev zookeeper libcurator-recipes-java
  # the benchmark harness reads its JSON with jq
  jq
  # the libFuzzer targets (tests/fuzz, scripts/fuzz.sh): clang and its fuzzer runtime
  clang libclang-rt-14-dev
  # the chaos suite (scripts/chaos.sh): its analysis, ps for its process checks, ip for its
  # network namespaces
  python3 procps iproute2
  # ... and gawk, whose time extension stamps each line of the instances' logs
  gawk
  # tracing storages: SQLite, and the PostgreSQL and MariaDB servers the database tests start
  # (scripts/pg-server.sh, scripts/mariadb-server.sh) with their client libraries
  libsqlite3-dev libpq-dev postgresql-15 libmariadb-dev mariadb-server-core mariadb-client-core
  # job types and error handlers: HTTP(S), SMTP and webhooks through libcurl, the DingTalk
  # signature through OpenSSL; their tests' HTTP(S) server (cpp-httplib), SMTP server
  # (aiosmtpd) and throwaway certificates (openssl)
  libcurl4-openssl-dev libssl-dev libcpp-httplib-dev python3-aiosmtpd openssl
  # the task models' RPC between instances (docs/task-models.md): gRPC and protobuf
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  # the web console (docs/console.md): password hashes (argon2id) and session tokens; zlib for
  # its gzipped answers
  libsodium-dev zlib1g-dev
  # metrics (docs/metrics.md): promtool checks the exposition format, Debian's Prometheus
  # server scrapes a test cluster; the package test (scripts/package-test.sh) builds a fresh
  # Debian root with debootstrap and the packages with cpack (dpkg-shlibdeps from dpkg-dev)
  prometheus debootstrap dpkg-dev curl
  # the web console's browser tests (tests/browser) and page-load benchmark: Debian's chromium,
  # driven headless by puppeteer-core from npm (node and npm below)
  chromium
)
# node and npm for those tests: Debian's, unless a node (with its npm) is installed already,
# e.g. from another repository whose nodejs package ships npm itself.
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then PACKAGES+=(nodejs npm); fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Server packages (postgresql-15) start their service when installed: a policy-rc.d that
# refuses (101) keeps this script from starting servers nobody asked for (the tests start
# their own, on free ports). It is removed afterwards unless it was there before.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" > /dev/null
  $SUDO chmod +x "$policy"
  trap '$SUDO rm -f "$policy"' EXIT
fi
# Another apt run (an unattended upgrade) may hold the lock for a while: wait for it.
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
