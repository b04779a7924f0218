// The `local` target: a job is a detached process group on this machine (it outlives the CLI and the editor). A small
// POSIX shell wrapper runs the command with its output in the job folder, forwards SIGTERM/SIGINT/HUP to it (so a
// trainer can save before it stops: quarry_trainer's StopOnSignal), waits for it to really end, and records its exit
// code in `exit_code`. The group leader's pid and its kernel start time are recorded, so a pid the system later
// reuses for something else is never taken for the job.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { JobRecord } from '../../../core/training/jobs/job';
import { CHECKPOINT_DIR } from './remoteFiles';
import { jobFailureSummary } from '../failure';
import type { PullReport, StatusReport, Target } from './target';

/** Runs "$@" in the job folder, forwards TERM/INT/HUP to it, records its exit code (shared by ssh and slurm). */
export const WRAPPER = [
  '"$@" >stdout.log 2>stderr.log </dev/null &',
  'child=$!',
  'trap \'kill -TERM "$child" 2>/dev/null\' TERM INT HUP',
  'while :; do wait "$child"; code=$?; kill -0 "$child" 2>/dev/null || break; done',
  'echo "$code" > exit_code.tmp && mv exit_code.tmp exit_code',
].join('\n');

/** The kernel start time of `pid` (field 22 of /proc/<pid>/stat), or null when there is no such process. */
export function procStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the job's process group still runs: the leader's pid is alive with the start time recorded at submit. The
 * leader may have ended while the group lives on (its command still saving: no start time to read); a different
 * start time means the pid now belongs to another program. A record without the start time, where one can be read
 * (Linux), is not taken for the job: job.json is a workspace file, and a planted one must not name a process to signal.
 */
function isJobGroup(job: JobRecord): boolean {
  const pid = job.remote.pid;
  if (pid === undefined || !groupAlive(pid)) return false;
  const start = procStart(pid);
  return start === null || start === job.remote.procStart;
}

function exitCodeOf(dir: string): number | null {
  const file = join(dir, 'exit_code');
  if (!existsSync(file)) return null;
  const n = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(n) ? n : null;
}

export class LocalTarget implements Target {
  readonly kind = 'local' as const;

  constructor(
    readonly name = 'local',
    /** The Python that runs `python …` commands (a target's "python"). */
    readonly python?: string,
  ) {}

  async check(job: JobRecord): Promise<string[]> {
    const problems: string[] = [];
    if (process.platform === 'win32') problems.push('the local target needs a POSIX shell (Linux or macOS)');
    if (job.command.length === 0) problems.push('the job has no command');
    return problems;
  }

  async submit(job: JobRecord, dir: string, secrets: Record<string, string> = {}): Promise<void> {
    const command = job.command.map((a, i) => (i === 0 && this.python && /^python3?$/.test(a) ? this.python : a));
    const child = spawn('/bin/sh', ['-c', WRAPPER, 'quarry-job', ...command], {
      cwd: dir,
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, ...job.env, ...secrets, QUARRY_JOB_ID: job.id, QUARRY_JOB_DIR: dir },
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (err) => reject(new Error(`cannot start the job: ${err.message}`)));
    });
    child.unref();
    const pid = child.pid!;
    job.remote = { pid, procStart: procStart(pid) ?? undefined };
  }

  async status(job: JobRecord, dir: string): Promise<StatusReport> {
    const code = exitCodeOf(dir);
    const cancelled = job.status === 'cancelled';
    if (code !== null) {
      return {
        status: cancelled ? 'cancelled' : code === 0 ? 'succeeded' : 'failed',
        exitCode: code,
        reason: cancelled ? 'cancelled' : code === 0 ? null : `exited with code ${code}${tail(dir)}`,
      };
    }
    if (isJobGroup(job)) return { status: cancelled ? 'cancelled' : 'running', exitCode: null, reason: null };
    if (cancelled) return { status: 'cancelled', exitCode: null, reason: 'cancelled' };
    return {
      status: 'lost',
      exitCode: null,
      reason:
        "the job's processes ended without recording an exit code (killed with SIGKILL, or the machine restarted)",
    };
  }

  async cancel(job: JobRecord, dir: string, graceMs = 10_000): Promise<void> {
    const pid = job.remote.pid;
    if (pid === undefined || !isJobGroup(job)) return;
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      /* ended meanwhile */
    }
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && groupAlive(pid) && exitCodeOf(dir) === null)
      await new Promise((r) => setTimeout(r, 50));
    if (groupAlive(pid)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* ended meanwhile */
      }
      // The kernel takes a moment to tear the group down (and its leader's parent to reap it).
      const gone = Date.now() + 5000;
      while (Date.now() < gone && groupAlive(pid)) await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The job writes straight into its folder: nothing to bring back but the checkpoint list. */
  async pull(_job: JobRecord, dir: string): Promise<PullReport> {
    const out = join(dir, 'out');
    const checkpoints = existsSync(out)
      ? readdirSync(out).filter((n) => CHECKPOINT_DIR.test(n) && statSync(join(out, n)).isDirectory())
      : [];
    return { bytes: 0, checkpoints, error: null };
  }

  async fetchCheckpoint(_job: JobRecord, dir: string, name: string): Promise<string> {
    const path = join(dir, 'out', name);
    if (!CHECKPOINT_DIR.test(name) || !existsSync(path))
      throw new Error(`no checkpoint ${name} in ${join(dir, 'out')}`);
    return path;
  }
}

/** What failed, for the job's reason: ": " and the one-line summary of its logs (app/jobs/failure.ts), or ''. */
function tail(dir: string): string {
  const summary = jobFailureSummary(dir);
  return summary ? `: ${summary}` : '';
}
