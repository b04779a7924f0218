#!/usr/bin/env bash
# Starts the real services the job-target tests run against, all on loopback with their own keys and configs in one
# temporary directory (QUARRY_SERVICES_DIR, default /tmp/quarry-services): an OpenSSH server (own host key, a user key,
# a known_hosts file and an ssh config file the tests pass with -F), a single-node Slurm cluster with munge (a fake
# two-GPU gres on /dev/fakegpu0-1, as in ENVIRONMENT-FACTS.md) and a Ray head from the project's .venv with its
# dashboard on. Installs Debian's openssh-server, slurm-wlm and munge when missing. Writes services.json (ports,
# key and config paths) which test/services/*.test.ts read. scripts/services/stop.sh stops everything it started.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${QUARRY_SERVICES_DIR:-/tmp/quarry-services}"
ssh_port="${QUARRY_SSH_PORT:-22222}"
ray_port="${QUARRY_RAY_PORT:-6390}"
dash_port="${QUARRY_RAY_DASHBOARD_PORT:-8265}"
ctld_port="${QUARRY_SLURMCTLD_PORT:-6817}"
slurmd_port="${QUARRY_SLURMD_PORT:-6818}"
python="${QUARRY_PYTHON:-$root/.venv/bin/python}"

if [ -f "$dir/services.json" ]; then
  echo "services already started in $dir (stop them with scripts/services/stop.sh)"
  exit 0
fi
mkdir -p "$dir"
chmod 700 "$dir"

need=()
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || need+=(openssh-server)
[ -x /usr/sbin/slurmctld ] || need+=(slurm-wlm)
[ -x /usr/sbin/munged ] || need+=(munge)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing ${need[*]} (apt)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >"$dir/apt.log" 2>&1 ||
    { tail -20 "$dir/apt.log" >&2; exit 1; }
fi

# --- OpenSSH on 127.0.0.1 --------------------------------------------------------------------------------------------
echo "== sshd on 127.0.0.1:$ssh_port"
ssh-keygen -q -t ed25519 -N '' -f "$dir/ssh_host_key" -C quarry-host
ssh-keygen -q -t ed25519 -N '' -f "$dir/id_user" -C quarry-user
cp "$dir/id_user.pub" "$dir/authorized_keys"
echo "[127.0.0.1]:$ssh_port $(cut -d' ' -f1,2 "$dir/ssh_host_key.pub")" >"$dir/known_hosts"
# Slurm's commands run over ssh find this cluster's config through SLURM_CONF.
cat >"$dir/sshd_config" <<EOF
Port $ssh_port
ListenAddress 127.0.0.1
HostKey $dir/ssh_host_key
AuthorizedKeysFile $dir/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
PidFile $dir/sshd.pid
StrictModes no
UsePAM no
SetEnv SLURM_CONF=$dir/slurm/slurm.conf
EOF
cat >"$dir/ssh_config" <<EOF
Host quarry-test
  HostName 127.0.0.1
  Port $ssh_port
  User $(id -un)
  IdentityFile $dir/id_user
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
EOF
mkdir -p /run/sshd
/usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log"
for i in $(seq 1 50); do
  ssh -F "$dir/ssh_config" -o BatchMode=yes quarry-test true 2>/dev/null && break
  [ "$i" = 50 ] && { echo "sshd does not answer on 127.0.0.1:$ssh_port" >&2; tail -5 "$dir/sshd.log" >&2; exit 1; }
  sleep 0.2
done

# --- munge + single-node Slurm ----------------------------------------------------------------------------------------
echo "== munge + slurmctld + slurmd"
host="$(hostname -s)"
mkdir -p "$dir/slurm/state" "$dir/slurm/spool" /run/munge
chown munge:munge /run/munge
if ! pgrep -u munge -x munged >/dev/null; then
  su -s /bin/sh munge -c '/usr/sbin/munged'
  echo started >"$dir/munged.started"
fi
for i in 0 1; do [ -e /dev/fakegpu$i ] || mknod /dev/fakegpu$i c 1 3; done
cat >"$dir/slurm/slurm.conf" <<EOF
ClusterName=quarry
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
GresTypes=gpu
MpiDefault=none
AuthType=auth/munge
SlurmUser=root
StateSaveLocation=$dir/slurm/state
SlurmdSpoolDir=$dir/slurm/spool
SlurmctldPidFile=$dir/slurm/slurmctld.pid
SlurmdPidFile=$dir/slurm/slurmd.pid
SlurmctldLogFile=$dir/slurm/slurmctld.log
SlurmdLogFile=$dir/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=3600
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
echo "NodeName=$host Name=gpu File=/dev/fakegpu[0-1]" >"$dir/slurm/gres.conf"
export SLURM_CONF="$dir/slurm/slurm.conf"
/usr/sbin/slurmctld -f "$SLURM_CONF"
/usr/sbin/slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do
  state="$(sinfo -h -o %T 2>/dev/null || true)"
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || { echo "slurm node is '$state', not idle" >&2; tail -5 "$dir/slurm/slurmctld.log" >&2; exit 1; }

# --- Ray head ---------------------------------------------------------------------------------------------------------
echo "== ray head (dashboard on 127.0.0.1:$dash_port)"
bash "$root/scripts/services/ray.sh" start

# --- a 1 MB tmpfs, for the full-disk test ------------------------------------------------------------------------------
mkdir -p "$dir/full"
if mount -t tmpfs -o size=1m quarry-full "$dir/full" 2>/dev/null; then full="\"$dir/full\""; else full=null; fi

cat >"$dir/services.json" <<EOF
{
  "dir": "$dir",
  "ssh": { "host": "quarry-test", "config": "$dir/ssh_config", "port": $ssh_port, "key": "$dir/id_user",
           "knownHosts": "$dir/known_hosts", "pidFile": "$dir/sshd.pid", "user": "$(id -un)" },
  "slurm": { "conf": "$SLURM_CONF", "partition": "debug", "gpusPerNode": 2 },
  "ray": { "address": "http://127.0.0.1:$dash_port", "gcs": "127.0.0.1:$ray_port", "python": "$python",
           "tempDir": "$dir/ray" },
  "fullDir": $full,
  "python": "$python",
  "repo": "$root"
}
EOF
echo "== services up: $dir/services.json"
