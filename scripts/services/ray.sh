#!/usr/bin/env bash
# Starts or stops the loopback Ray head of scripts/services/start.sh (dashboard on): `ray.sh start|stop|restart`.
# The tests restart it mid-job (a head that restarts forgets its jobs). Stop ends only this head's processes: those
# whose command line names its temp dir (`ray stop` would end every Ray on the machine).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${QUARRY_SERVICES_DIR:-/tmp/quarry-services}"
ray_port="${QUARRY_RAY_PORT:-6390}"
dash_port="${QUARRY_RAY_DASHBOARD_PORT:-8265}"
python="${QUARRY_PYTHON:-$root/.venv/bin/python}"
export RAY_USAGE_STATS_ENABLED=0
# Token authentication off, explicitly: Ray 2.60 turns it on for a new head when ~/.ray/auth_token exists, and any
# local ray.init() without RAY_AUTH_MODE writes that file (ray/_private/worker.py ensure_token_if_auth_enabled); the
# dashboard then answers 401 and the ray target's tests cannot reach it. Loopback only.
export RAY_AUTH_MODE=disabled

# This head's processes: a command line naming its temp dir or its port (the Ray client server names only the
# address), or a file open in its temp dir (the agents, whose command lines Ray rewrites to `ray::DashboardAgent`…).
ours() {
  { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | grep -qE -e "$dir/ray" -e "--address=[^ ]+:$ray_port " && return 0
  ls -l "/proc/$1/fd" 2>/dev/null | grep -qF " -> $dir/ray/"
}

stop() {
  for pass in TERM KILL; do
    for p in /proc/[0-9]*; do
      pid="${p#/proc/}"
      [ "$pid" = "$$" ] && continue
      if ours "$pid"; then kill -s "$pass" "$pid" 2>/dev/null || true; fi
    done
    [ "$pass" = TERM ] && sleep 3
  done
  return 0
}

start() {
  "$(dirname "$python")/ray" start --head --node-ip-address 127.0.0.1 --port "$ray_port" \
    --dashboard-host 127.0.0.1 --dashboard-port "$dash_port" --include-dashboard true --num-cpus "$(nproc)" \
    --temp-dir "$dir/ray" --disable-usage-stats >"$dir/ray-start.log" 2>&1 ||
    { tail -20 "$dir/ray-start.log" >&2; exit 1; }
  for _ in $(seq 1 90); do
    curl -sf "http://127.0.0.1:$dash_port/api/version" >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "the Ray dashboard did not answer on 127.0.0.1:$dash_port" >&2
  exit 1
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  *) echo "usage: ray.sh start|stop|restart" >&2; exit 2 ;;
esac
