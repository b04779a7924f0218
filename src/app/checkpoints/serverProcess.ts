// The processes that serve a registered model, started and stopped so that Quarry never signals one it did not
// start. A server (and an SSH tunnel's keeper) is started detached, the leader of its own process group, with a
// random id in its environment (QUARRY_SERVER_ID); its kernel start time and command line are read from /proc and
// recorded in .quarry/models.json. Stopping signals the group only when the live process still matches all of it:
// the same start time (a pid the system reused belongs to another program), the same command line, the leader of the
// group recorded, and the id in its environment (which a models.json written by someone else cannot put into an
// unrelated process). Otherwise it says what it found and signals nothing. A server on another host is checked there
// the same way (sshTunnel.ts remoteStopArgs), over ssh options rebuilt from the job target or allow-listed.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { pidProblem, type ProcessIdentity, type ServerInfo } from '../../core/training/modelRegistry';
import { sshOptionsProblem } from '../../core/training/sshSafety';
import { groupAlive, procStart } from '../jobs/targets/local';
import { loadTargets, targetConfig } from '../jobs/targets/registry';
import { sshOptions as targetSshOptions } from '../jobs/targets/shell';
import { remoteStopArgs, type RemoteStopAnswer } from './sshTunnel';

/** The environment variable carrying Quarry's id for a server and its tunnel's keeper. */
export const SERVER_ID_ENV = 'QUARRY_SERVER_ID';

export function newServerId(): string {
  return randomBytes(16).toString('hex');
}

/** The command line of `pid` as /proc shows it, or null when there is no such process. */
function procCmdline(pid: number): string[] | null {
  try {
    const parts = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (parts.at(-1) === '') parts.pop();
    return parts;
  } catch {
    return null;
  }
}

/** The state letter of `pid` (field 3 of /proc/<pid>/stat: R, S, Z for an exited process not yet reaped…), or null. */
function procState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) || null;
  } catch {
    return null;
  }
}

/** The process group of `pid` in its own pid namespace (/proc/<pid>/status NSpgid, last value), or null. */
function procGroup(pid: number): number | null {
  try {
    const m = /^NSpgid:\s*(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1].trim().split(/\s+/).pop()) : null;
  } catch {
    return null;
  }
}

/** The pids whose process group is `pgid` (read from /proc; empty where /proc cannot be read). */
function groupMembers(pgid: number): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  return names.filter((n) => /^\d+$/.test(n) && procGroup(Number(n)) === pgid).map(Number);
}

/** The members of group `pgid` still running (an exited process not yet reaped is not). */
function liveMembers(pgid: number): number[] {
  return groupMembers(pgid).filter((m) => procState(m) !== 'Z');
}

/** Whether `pid`'s environment holds QUARRY_SERVER_ID=`id` (false when it cannot be read). */
function carriesId(pid: number, id: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`${SERVER_ID_ENV}=${id}`);
  } catch {
    return false;
  }
}

/** What /proc says `pid` is now, to record with it. */
export function identityOf(pid: number): ProcessIdentity {
  const start = procStart(pid);
  const cmdline = procCmdline(pid);
  return { ...(start !== null ? { procStart: start } : {}), ...(cmdline?.length ? { cmdline } : {}) };
}

type Verdict = { ok: true } | { ok: false; gone: boolean; why: string };

/**
 * Whether the group of `pid` is one Quarry started, judged from the live process: `ok` only when its start time and
 * command line are the recorded ones, it leads its own process group, and it carries `id`. `gone`: the process
 * Quarry started is not running any more (no process, or the pid now belongs to another program).
 */
export function checkOwnGroup(pid: unknown, recorded: ProcessIdentity, id: string | undefined): Verdict {
  const bad = pidProblem(pid);
  if (bad) return { ok: false, gone: false, why: `its pid ${bad}` };
  const p = pid as number;
  if (!recorded.procStart || !recorded.cmdline || !id)
    return { ok: false, gone: false, why: 'no identity was recorded for it (start time, command line and id)' };
  const start = procStart(p);
  if (start === null) {
    const rest = groupAlive(p)
      ? `; processes of its group ${p} remain, which Quarry cannot tell are the server's (see ps -g ${p})`
      : '';
    return { ok: false, gone: rest === '', why: `it is not running${rest}` };
  }
  if (start !== recorded.procStart)
    return { ok: false, gone: true, why: `it is not running: pid ${p} is now another process, left alone` };
  // Exited but not yet reaped (the `load` that started it is gone, and this machine's init may not reap): /proc no
  // longer shows its command line or environment, so nothing proves the group is Quarry's. With no other process in
  // its group there is nothing to stop; with some left, they are named and left alone like any unproven group.
  if (procState(p) === 'Z') {
    const others = liveMembers(p).filter((m) => m !== p);
    if (others.length === 0) return { ok: false, gone: true, why: 'it has exited' };
    return {
      ok: false,
      gone: false,
      why: `it has exited; processes of its group ${p} remain (${others.join(', ')}), which Quarry cannot tell are its`,
    };
  }
  const cmdline = procCmdline(p) ?? [];
  if (cmdline.join('\0') !== recorded.cmdline.join('\0'))
    return {
      ok: false,
      gone: false,
      why: `pid ${p} runs ${JSON.stringify(cmdline.join(' '))}, not the recorded command`,
    };
  if (procGroup(p) !== p) return { ok: false, gone: false, why: `pid ${p} is not the leader of its own process group` };
  if (!carriesId(p, id))
    return { ok: false, gone: false, why: `pid ${p} does not carry the id Quarry gave its server` };
  return { ok: true };
}

/** Starts a server detached in its own process group, its output in `log`, `id` in its environment. */
export function startServerProcess(
  argv: readonly string[],
  log: string,
  env: NodeJS.ProcessEnv,
  id: string,
): { pid: number } & ProcessIdentity {
  const fd = openSync(log, 'a');
  try {
    const child = spawn(argv[0], argv.slice(1), {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...env, [SERVER_ID_ENV]: id },
    });
    child.on('error', () => {
      /* reported by the wait: the process is not running */
    });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${argv[0]}`);
    // spawn returns once the program is executing, so /proc already shows its command line.
    return { pid: child.pid, ...identityOf(child.pid) };
  } finally {
    closeSync(fd);
  }
}

export interface StopReport {
  said: string[];
  /** Something recorded was not signalled because it could not be shown to be Quarry's: the user should look. */
  refused: boolean;
}

/**
 * Waits up to `ms` for every process of group `pgid` to exit, so that "stopped" means stopped: a tunnel keeper's ssh
 * takes a moment after SIGTERM, and a later unload would otherwise find it still in the group of a keeper that has
 * exited (and refuse it, since an exited process can no longer prove it was Quarry's).
 */
function waitForGroupToEnd(pgid: number, ms: number): void {
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (const end = Date.now() + ms; Date.now() < end && liveMembers(pgid).length > 0; ) Atomics.wait(nap, 0, 0, 50);
}

/** SIGTERM to the group of `pid` when checkOwnGroup says it is Quarry's; otherwise what was found. */
function stopLocalGroup(what: string, pid: number, recorded: ProcessIdentity, id: string | undefined, r: StopReport) {
  const v = checkOwnGroup(pid, recorded, id);
  if (v.ok) {
    try {
      process.kill(-pid, 'SIGTERM');
      waitForGroupToEnd(pid, 5_000);
      r.said.push(`stopped the ${what} (pid ${pid})`);
    } catch {
      r.said.push(`the ${what} (pid ${pid}) was not running`);
    }
  } else if (v.gone) {
    r.said.push(`the ${what} (pid ${pid}) was not running: ${v.why}`);
  } else {
    r.refused = true;
    r.said.push(
      `did not stop the ${what} (pid ${pid}): ${v.why}. Quarry signals only a process group it started; ` +
        `if that process is yours, stop it yourself`,
    );
  }
}

const REMOTE_SAID: Record<RemoteStopAnswer, string> = {
  stopped: 'stopped',
  gone: 'was not running',
  other: 'was not running (its pid is now another process there, left alone)',
  notleader: 'not stopped: its pid there is not the leader of its own process group',
  notours: 'not stopped: its pid there does not carry the id Quarry gave its server',
  failed: 'not stopped: the signal failed there',
};

/** The ssh options that reach a remote server: its target's (rebuilt), the user's at unload, or the kept ones. */
function remoteOptions(server: ServerInfo, workspace: string, given: readonly string[] | undefined): string[] | string {
  if (given) return [...given];
  if (server.target) {
    try {
      const config = targetConfig(loadTargets(workspace), server.target);
      if (config.kind !== 'ssh' || config.host !== server.host)
        return `the target '${server.target}' is no longer the ssh host ${server.host}`;
      return targetSshOptions(config);
    } catch (err) {
      return `its target '${server.target}': ${(err as Error).message}`;
    }
  }
  if (server.sshOptionsLeftOut)
    return (
      'it was loaded with ssh options Quarry does not keep in the workspace (a config file, a jump host or a ' +
      'command); give them again: quarry checkpoints unload NAME --ssh-option OPT…'
    );
  const kept = server.sshOptions ?? [];
  const bad = sshOptionsProblem(kept);
  return bad ? `server.sshOptions: ${bad}` : kept;
}

function stopRemote(server: ServerInfo, workspace: string, given: readonly string[] | undefined, r: StopReport) {
  const what = `${server.kind} server on ${server.host} (pid ${server.pid})`;
  const options = remoteOptions(server, workspace, given);
  if (typeof options === 'string' || !server.procStart || !server.id) {
    r.refused = true;
    const why = typeof options === 'string' ? options : 'no identity was recorded for it (start time and id)';
    r.said.push(`did not stop the ${what}: ${why}`);
    return;
  }
  let args: string[];
  try {
    args = remoteStopArgs(
      server.host,
      server.pid,
      { procStart: server.procStart, idVar: SERVER_ID_ENV, id: server.id },
      options,
    );
  } catch (err) {
    r.refused = true;
    r.said.push(`did not stop the ${what}: ${(err as Error).message}`);
    return;
  }
  const run = spawnSync('ssh', args, { encoding: 'utf8', timeout: 30_000 });
  const answer = run.status === 0 ? (run.stdout.trim().split('\n').pop() as RemoteStopAnswer) : null;
  if (answer && answer in REMOTE_SAID) {
    if (!['stopped', 'gone', 'other'].includes(answer)) r.refused = true;
    r.said.push(answer === 'stopped' ? `stopped the ${what}` : `the ${what}: ${REMOTE_SAID[answer]}`);
  } else {
    r.refused = true;
    const why = (run.stderr ?? '').trim().split('\n').slice(-2).join(' / ') || run.error?.message || 'no answer';
    r.said.push(`could not stop the ${what}: ${why}`);
  }
}

/**
 * Stops what serves a registered model: the tunnel's keeper and the server's process group, here or over ssh, each
 * only when it is shown to be the one Quarry started. `sshOptions`: the user's own, given again at unload.
 */
export function stopServer(server: ServerInfo, workspace: string, sshOptions?: readonly string[]): StopReport {
  const r: StopReport = { said: [], refused: false };
  if (server.tunnel) stopLocalGroup('SSH tunnel', server.tunnel.pid, server.tunnel, server.id, r);
  if (server.host === 'local') stopLocalGroup(`${server.kind} server`, server.pid, server, server.id, r);
  else stopRemote(server, workspace, sshOptions, r);
  return r;
}
