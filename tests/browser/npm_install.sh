#!/usr/bin/env bash
# Installs the browser tests' npm packages (puppeteer-core, pinned by package-lock.json) into
# OUT/node_modules with `npm ci`, next to copies of the test scripts, so that nothing is
# written into the source tree. Offline when npm's cache (~/.npm) already holds the packages
# (--prefer-offline); again only when the lock file changed. Never downloads a browser.
# Usage: npm_install.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"
mkdir -p "$out"
cp "$here"/package.json "$here"/package-lock.json "$here"/*.mjs "$out"/
export PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
if [[ -d "$out/node_modules/puppeteer-core" ]] && cmp -s "$here/package-lock.json" "$out/.installed-lock"; then
  exit 0
fi
# npm trusts only its own CA list unless told otherwise: point it at the system's bundle, so a
# machine whose registry access goes through a proxy with a locally trusted CA (installed with
# update-ca-certificates) works without an .npmrc. An explicitly configured cafile wins.
ca=()
if [[ -z "${npm_config_cafile:-}" && -s /etc/ssl/certs/ca-certificates.crt ]] &&
  [[ "$(npm config get cafile 2> /dev/null)" == "null" || -z "$(npm config get cafile 2> /dev/null)" ]]; then
  ca=(--cafile=/etc/ssl/certs/ca-certificates.crt)
fi
(cd "$out" && npm ci "${ca[@]}" --prefer-offline --no-audit --no-fund --loglevel=error > npm-ci.log 2>&1) || {
  echo "npm ci failed in $out: $(tail -3 "$out/npm-ci.log")" >&2
  exit 1
}
cp "$here/package-lock.json" "$out/.installed-lock"
