# Shared by ray.sh and ray-cluster.sh (sourced, not run): the environment every loopback Ray of the tests starts
# with, and how to stop only one Ray's processes.
export RAY_USAGE_STATS_ENABLED=0
# Token authentication off, explicitly: Ray 2.60 turns it on for a new head when ~/.ray/auth_token exists, and any
# local ray.init() without RAY_AUTH_MODE writes that file (ray/_private/worker.py ensure_token_if_auth_enabled); the
# dashboard then answers 401 and a worker node started without the token cannot join. Loopback only.
export RAY_AUTH_MODE=disabled

# Whether process $1 belongs to the Ray whose files are under folder $2 and whose GCS port is $3: a command line naming
# the folder or the address (the head's Ray client server names only the address), or a file open in the folder (the
# agents, whose command lines Ray rewrites to `ray::DashboardAgent`…).
ray_owns() {
  { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | grep -qE -e "$2" -e "--address=[^ ]+:$3 " && return 0
  ls -l "/proc/$1/fd" 2>/dev/null | grep -qF " -> $2"
}

# Stops that Ray's processes (folder $1, port $2): TERM, then KILL what is left. `ray stop` would end every Ray on the
# machine.
ray_stop_owned() {
  for pass in TERM KILL; do
    for p in /proc/[0-9]*; do
      pid="${p#/proc/}"
      [ "$pid" = "$$" ] && continue
      if ray_owns "$pid" "$1" "$2"; then kill -s "$pass" "$pid" 2>/dev/null || true; fi
    done
    [ "$pass" = TERM ] && sleep 3
  done
  return 0
}
