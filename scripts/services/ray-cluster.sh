#!/usr/bin/env bash
# A two-node Ray cluster on loopback, started BEFORE anything runs on it (as a Slurm allocation or a Ray job cluster
# is): `ray-cluster.sh start|stop|status`. A head (`ray start --head`) and a second worker node (`ray start --address`),
# each one CPU, each with its own raylet, object store, temp dir (Ray 2.60 takes --temp-dir per node:
# ray/scripts/scripts.py), random agent ports, its own Ray client port (10002) and dashboard (8266: Ray's Jobs API),
# so it runs beside the single head of scripts/services/ray.sh (ports 6390, 8265, 10001) without a clash. The workers
# it starts have none of the caller's environment, which is what trainer/tests/test_ray_cluster.py needs. Writes
# $QUARRY_RAY_CLUSTER_DIR/address (host:port) and .../dashboard (its URL) once both nodes are alive. Stop ends only
# this cluster's processes (see ray_owns in ray-lib.sh), never every Ray of the machine as `ray stop` would.
# Ray turns 127.0.0.1 into the machine's address for its nodes (ray/_private/services.py resolve_ip_for_localhost).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${QUARRY_RAY_CLUSTER_DIR:-/tmp/quarry-ray-cluster}"
port="${QUARRY_RAY_CLUSTER_PORT:-6391}"
client_port="${QUARRY_RAY_CLUSTER_CLIENT_PORT:-10002}"
dash_port="${QUARRY_RAY_CLUSTER_DASHBOARD_PORT:-8266}"
python="${QUARRY_PYTHON:-$root/.venv/bin/python}"
ray="$(dirname "$python")/ray"
# shellcheck source=scripts/services/ray-lib.sh
. "$root/scripts/services/ray-lib.sh"

stop() {
  [ -d "$dir" ] || return 0
  ray_stop_owned "$dir/" "$port"
  rm -rf "$dir"
}

alive_nodes() {
  "$python" - "127.0.0.1:$port" <<'EOF'
import sys, ray
ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
print(sum(1 for n in ray.nodes() if n["Alive"]))
EOF
}

start() {
  if [ -f "$dir/address" ]; then
    if [ "$(alive_nodes 2>/dev/null || echo 0)" = 2 ]; then
      echo "ray cluster already started: $(cat "$dir/address")"
      return 0
    fi
    echo "== a stale ray cluster in $dir: stopping it first"
    stop
  fi
  mkdir -p "$dir/head" "$dir/worker"
  chmod 700 "$dir"
  # Both nodes on 127.0.0.1: a second raylet on the same machine needs its own ports (0: any free one) for the node
  # manager, object manager, dashboard agent, metrics and runtime-env agent; the head keeps its dashboard off.
  common=(--node-ip-address 127.0.0.1 --num-cpus 1 --num-gpus 0 --object-store-memory 268435456 --disable-usage-stats
    --dashboard-agent-listen-port 0 --min-worker-port 0 --max-worker-port 0)
  echo "== ray cluster head on 127.0.0.1:$port ($dir)"
  "$ray" start --head --port "$port" --ray-client-server-port "$client_port" --include-dashboard true \
    --dashboard-host 127.0.0.1 --dashboard-port "$dash_port" --temp-dir "$dir/head" "${common[@]}" \
    --resources '{"quarry_head": 1}' >"$dir/head.log" 2>&1 || { tail -20 "$dir/head.log" >&2; stop; exit 1; }
  echo "== ray cluster worker node"
  "$ray" start --address "127.0.0.1:$port" --temp-dir "$dir/worker" "${common[@]}" \
    --resources '{"quarry_worker": 1}' >"$dir/worker.log" 2>&1 || { tail -20 "$dir/worker.log" >&2; stop; exit 1; }
  for _ in $(seq 1 60); do
    if [ "$(alive_nodes 2>/dev/null || echo 0)" = 2 ] && curl -sf "http://127.0.0.1:$dash_port/api/version" >/dev/null
    then
      echo "http://127.0.0.1:$dash_port" >"$dir/dashboard"
      echo "127.0.0.1:$port" >"$dir/address"
      echo "== ray cluster up: 2 nodes at 127.0.0.1:$port ($dir/address)"
      return 0
    fi
    sleep 1
  done
  echo "the two-node Ray cluster did not come up" >&2
  tail -5 "$dir/head.log" "$dir/worker.log" >&2
  stop
  exit 1
}

case "${1:-}" in
  start) start ;;
  stop) stop; echo "== ray cluster stopped" ;;
  status) [ -f "$dir/address" ] && cat "$dir/address" || { echo "not running" >&2; exit 1; } ;;
  *) echo "usage: ray-cluster.sh start|stop|status" >&2; exit 2 ;;
esac
