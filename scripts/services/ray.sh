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
# shellcheck source=scripts/services/ray-lib.sh
. "$root/scripts/services/ray-lib.sh"

stop() { ray_stop_owned "$dir/ray" "$ray_port"; }

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
