// The SSH side of a served checkpoint on another host, through the user's own OpenSSH (its config, keys and agent:
// Quarry adds no credentials): a port forward `ssh -N -L LOCAL:127.0.0.1:REMOTE HOST` kept by a small shell loop that
// reopens it whenever ssh exits (a dropped connection, a sleeping laptop), so it outlives the command that opened it;
// and the commands that start the server on the host (in its own session, its pid printed), stop it, run a program
// there to its end (the served parity check, beside the checkpoint) and check the checkpoint is there.
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';

export interface TunnelSpec {
  /** An ssh destination as the user's config knows it: `gpu-box`, `me@host`. */
  host: string;
  localPort: number;
  remotePort: number;
  /** Extra `ssh` options before the host (e.g. ['-p', '2222', '-i', KEY, '-F', CONFIG]). */
  sshOptions?: readonly string[];
}

/** `ssh -N -L …`: no remote command, fail if the forward cannot be set up, notice a dead link within a minute. */
export function tunnelArgs(t: TunnelSpec): string[] {
  return [
    '-N',
    '-L',
    `127.0.0.1:${t.localPort}:127.0.0.1:${t.remotePort}`,
    '-o',
    'ExitOnForwardFailure=yes',
    '-o',
    'ServerAliveInterval=15',
    '-o',
    'ServerAliveCountMax=3',
    '-o',
    'BatchMode=yes',
    ...(t.sshOptions ?? []),
    t.host,
  ];
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The keeper: `bash -c 'while :; do ssh …; sleep 2; done'`, so a dropped tunnel is reopened. */
export function tunnelKeeperArgv(t: TunnelSpec): string[] {
  const ssh = ['ssh', ...tunnelArgs(t)].map(shellQuote).join(' ');
  return ['bash', '-c', `while :; do ${ssh}; sleep 2; done`];
}

/** Starts the keeper in its own process group (stopping it: kill the group); returns its pid. */
export function openTunnel(t: TunnelSpec, log: string): number {
  const fd = openSync(log, 'a');
  try {
    const argv = tunnelKeeperArgv(t);
    const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', fd, fd] });
    child.unref();
    if (child.pid === undefined) throw new Error('could not start ssh for the tunnel');
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/** `ssh HOST '…'` starting a server on the host in its own session, logging to LOG there, printing its pid. */
export function remoteStartArgs(
  host: string,
  argv: readonly string[],
  log: string,
  sshOptions: readonly string[] = [],
) {
  const cmd = `setsid nohup ${argv.map(shellQuote).join(' ')} > ${shellQuote(log)} 2>&1 < /dev/null & echo $!`;
  return ['-o', 'BatchMode=yes', ...sshOptions, host, cmd];
}

/** `ssh HOST kill -TERM -- -PID`: stops the server's whole session on the host. */
export function remoteStopArgs(host: string, pid: number, sshOptions: readonly string[] = []): string[] {
  return ['-o', 'BatchMode=yes', ...sshOptions, host, `kill -TERM -- -${pid} 2>/dev/null || kill -TERM ${pid}`];
}

/** `ssh HOST 'env NAME=VALUE… PROGRAM ARGS…'`: a program run on the host to its end, its output coming back. */
export function remoteRunArgs(
  host: string,
  argv: readonly string[],
  env: Record<string, string> = {},
  sshOptions: readonly string[] = [],
): string[] {
  const vars = Object.entries(env).map(([k, v]) => shellQuote(`${k}=${v}`));
  const cmd = [...(vars.length ? ['env', ...vars] : []), ...argv.map(shellQuote)].join(' ');
  return ['-o', 'BatchMode=yes', ...sshOptions, host, cmd];
}

/**
 * `ssh HOST '…'` answering `yes` when DIR on the host holds a Hugging Face checkpoint (config.json and weights, as
 * core/training/checkpoints.ts hasHfWeights reads them here).
 */
export function remoteHfCheckArgs(host: string, dir: string, sshOptions: readonly string[] = []): string[] {
  const d = shellQuote(dir);
  const cmd =
    `if [ -f ${d}/config.json ] && ls ${d} | grep -Eq ` +
    `'^(model|pytorch_model)(-[0-9]+-of-[0-9]+)?\\.(safetensors|bin)$|\\.safetensors\\.index\\.json$'; ` +
    'then echo yes; else echo no; fi';
  return ['-o', 'BatchMode=yes', ...sshOptions, host, cmd];
}
