// The SSH side of a served checkpoint on another host, through the user's own OpenSSH (its config, keys and agent:
// Quarry adds no credentials): a port forward `ssh -N -L LOCAL:127.0.0.1:REMOTE HOST` kept by a small shell loop that
// reopens it whenever ssh exits (a dropped connection, a sleeping laptop), so it outlives the command that opened it;
// and the commands that start the server on the host (in its own session, its pid printed), stop it, run a program
// there to its end (the served parity check, beside the checkpoint) and check the checkpoint is there. The host is
// checked (never an option: it comes after `--`), and the stop command checks on the host that the pid is still the
// server Quarry started (its start time, its own process group, Quarry's id in its environment) before signalling.
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { pidProblem } from '../../core/training/modelRegistry';
import { sshDestinationProblem } from '../../core/training/sshSafety';

interface TunnelSpec {
  /** An ssh destination as the user's config knows it: `gpu-box`, `me@host`. */
  host: string;
  localPort: number;
  remotePort: number;
  /** Extra `ssh` options before the host (e.g. ['-p', '2222', '-i', KEY, '-F', CONFIG]). */
  sshOptions?: readonly string[];
}

/** `HOST` after `--`, once it is known to be a destination; an Error naming the problem otherwise. */
function destination(host: string): string[] {
  const bad = sshDestinationProblem(host);
  if (bad) throw new Error(`the ssh host ${bad}`);
  return ['--', host];
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
    ...destination(t.host),
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

/** Starts the keeper in its own process group (stopping it: kill the group), `env` added; returns its pid. */
export function openTunnel(t: TunnelSpec, log: string, env: Record<string, string> = {}): number {
  const fd = openSync(log, 'a');
  try {
    const argv = tunnelKeeperArgv(t);
    const child = spawn(argv[0], argv.slice(1), {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, ...env },
    });
    child.unref();
    if (child.pid === undefined) throw new Error('could not start ssh for the tunnel');
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/**
 * `ssh HOST '…'` starting a server on the host in its own session, logging to LOG there, with `env` (Quarry's id for
 * it) in its environment; prints its pid and then its kernel start time there (/proc/PID/stat field 22).
 */
export function remoteStartArgs(
  host: string,
  argv: readonly string[],
  log: string,
  sshOptions: readonly string[] = [],
  env: Record<string, string> = {},
) {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)} `);
  const cmd =
    `${vars.join('')}setsid nohup ${argv.map(shellQuote).join(' ')} > ${shellQuote(log)} 2>&1 < /dev/null & ` +
    `pid=$!; echo $pid; s=$(cat /proc/$pid/stat 2>/dev/null); s=\${s##*') '}; set -- $s; echo "\${20}"`;
  return ['-o', 'BatchMode=yes', ...sshOptions, ...destination(host), `sh -c ${shellQuote(cmd)}`];
}

/** The pid and kernel start time `remoteStartArgs` printed, or null when they are not a pid and a start time. */
export function parseRemoteStart(stdout: string): { pid: number; procStart: string } | null {
  const [pid, start] = stdout.trim().split('\n').slice(-2);
  const n = Number(pid);
  return pidProblem(n) === null && /^\d{1,20}$/.test(start ?? '') ? { pid: n, procStart: start } : null;
}

/** What the host said to `remoteStopArgs`. */
export type RemoteStopAnswer = 'stopped' | 'gone' | 'other' | 'notleader' | 'notours' | 'failed';

/**
 * `ssh HOST '…'` stopping the server's process group on the host, only when PID there is still the process Quarry
 * started: the same kernel start time, the leader of its own group, `idVar=ID` in its environment. It prints one word
 * (RemoteStopAnswer). PID must be a pid (an integer from 2), START digits and the id hexadecimal: nothing else is
 * put into the command.
 */
export function remoteStopArgs(
  host: string,
  pid: number,
  identity: { procStart: string; idVar: string; id: string },
  sshOptions: readonly string[] = [],
): string[] {
  const bad = pidProblem(pid);
  if (bad) throw new Error(`the server's pid ${bad}`);
  if (!/^\d{1,20}$/.test(identity.procStart)) throw new Error('the start time of the server is not a number');
  if (!/^[0-9a-f]{32}$/.test(identity.id) || !/^[A-Z_]+$/.test(identity.idVar)) throw new Error('bad server id');
  const cmd = [
    `p=${pid}; s=$(cat /proc/$p/stat 2>/dev/null); if [ -z "$s" ]; then echo gone; exit 0; fi`,
    `s=\${s##*') '}; set -- $s`,
    `if [ "\${20}" != ${identity.procStart} ]; then echo other; exit 0; fi`,
    'if [ "$3" != "$p" ]; then echo notleader; exit 0; fi',
    `if ! tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -qx '${identity.idVar}=${identity.id}'; then`,
    '  echo notours; exit 0; fi',
    'if kill -s TERM -- -$p 2>/dev/null; then echo stopped; else echo failed; fi',
  ].join('\n');
  return ['-o', 'BatchMode=yes', ...sshOptions, ...destination(host), `sh -c ${shellQuote(cmd)}`];
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
  return ['-o', 'BatchMode=yes', ...sshOptions, ...destination(host), cmd];
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
  return ['-o', 'BatchMode=yes', ...sshOptions, ...destination(host), cmd];
}
