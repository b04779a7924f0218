#!/usr/bin/env bash
# Runs `npm run editor` the way a newcomer does (the machine's own Node first on PATH, so npm itself runs on it), waits
# for the URL it prints, checks that code-server answers there and serves the workbench, then stops it with Ctrl-C's
# signal. On a fresh machine this is also what installs code-server, through the same path a user's first run takes.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
log="$(mktemp)"
port="${QUARRY_SMOKE_PORT:-18765}"
setsid npm run editor -- --port "$port" --no-build >"$log" 2>&1 &
pid=$!
stop() { kill -INT -- "-$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
trap stop EXIT
for _ in $(seq 1 900); do
  if grep -q "Open in a browser" "$log"; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "smoke-editor: npm run editor exited early:" >&2; cat "$log" >&2; exit 1; fi
  sleep 1
done
grep -q "Open in a browser" "$log" || { echo "smoke-editor: no URL after 15 min:" >&2; tail -30 "$log" >&2; exit 1; }
url="$(grep -o "http://127.0.0.1:$port/[^ ]*" "$log" | head -1)"
curl -fsS -m 20 "http://127.0.0.1:$port/healthz" >/dev/null
# The page goes to a file first: `curl | grep -q` fails under pipefail when grep stops reading early (curl exit 23).
page="$(mktemp)"
curl -fsS -m 60 "$url" -o "$page" && grep -q "vscode-workbench-web-configuration" "$page" \
  || { echo "smoke-editor: $url did not serve the workbench" >&2; rm -f "$page"; exit 1; }
rm -f "$page"
echo "smoke-editor: npm run editor served $url"
stop
trap - EXIT
grep -q "stopping code-server" "$log" || { echo "smoke-editor: Ctrl-C did not stop code-server cleanly:" >&2; tail -5 "$log" >&2; exit 1; }
echo "smoke-editor: stopped cleanly"
