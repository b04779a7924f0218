#!/usr/bin/env bash
# Stops what scripts/services/start.sh started (by the pid files and the Ray temp dir it wrote), then removes its
# directory. Safe to run twice, or after a start that failed halfway.
set -uo pipefail
dir="${QUARRY_SERVICES_DIR:-/tmp/quarry-services}"
[ -d "$dir" ] || { echo "nothing started in $dir"; exit 0; }

stop_pidfile() {
  [ -f "$1" ] || return 0
  local pid
  pid="$(cat "$1")"
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

if [ -d "$dir/ray" ]; then
  echo "== ray stop"
  bash "$(dirname "$0")/ray.sh" stop
fi
mountpoint -q "$dir/full" 2>/dev/null && umount "$dir/full"
if [ -f "$dir/slurm/slurm.conf" ]; then
  echo "== slurm stop"
  # Jobs first, so no job step outlives the cluster.
  SLURM_CONF="$dir/slurm/slurm.conf" scancel --full --user "$(id -un)" 2>/dev/null || true
  stop_pidfile "$dir/slurm/slurmd.pid"
  stop_pidfile "$dir/slurm/slurmctld.pid"
fi
if [ -f "$dir/munged.started" ]; then
  echo "== munge stop"
  stop_pidfile /run/munge/munged.pid
fi
echo "== sshd stop"
stop_pidfile "$dir/sshd.pid"
# Jobs the tests left running (a failed test's job, or a Ray job orphaned by a head restart) run in $dir/remote/:
# end the processes whose command line names this directory.
for p in /proc/[0-9]*; do
  pid="${p#/proc/}"
  [ "$pid" = "$$" ] && continue
  if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF "$dir/"; then kill -KILL "$pid" 2>/dev/null || true; fi
done
rm -rf "$dir"
echo "== services stopped"
