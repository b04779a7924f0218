// The `slurm` target: `sbatch --parsable` on a login node (over ssh when the target names a `host`, else on this
// machine), with partition, GPUs (`--gres=gpu:N` or `--gpus-per-node=N`), nodes, time and account from the target (a
// job's own `resources` override gpus, nodes and time). The launch and data are staged into `<remoteDir>/<job id>/`,
// which the login and compute nodes share; the batch script runs the command under the same wrapper as `local`
// (exit code in `exit_code`). State: `squeue` while Slurm has the job in its queue; after, `sacct` when the cluster
// keeps accounting, else `scontrol show job` (kept for MinJobAge), else the `exit_code` file. A job cancelled with
// `scancel` from outside Quarry shows as cancelled. Cancel is `scancel` (Slurm sends SIGTERM, then SIGKILL after its
// KillWait). Every value that goes into the batch script is checked first (targets.ts: no newline that would become a
// line of it, Slurm's formats), and the script reaches the login node through a here-document whose delimiter is random
// and absent from the script, so no argument can end it early.
import { randomBytes } from 'node:crypto';
import type { JobRecord, JobStatus } from '../../../core/training/jobs/job';
import { isSlurmTime, type SlurmTargetConfig, targetConfigProblem } from '../../../core/training/jobs/targets';
import { shellQuote as q } from '../../../core/training/overrides';
import { WRAPPER } from './local';
import { READ_SECRETS, RemoteFolderTarget, remoteTail, secretsInput, stage, stagePlan } from './remoteFiles';
import { Shell } from './shell';
import { exportLines, probe, unreachable } from './ssh';
import type { StatusReport, Target } from './target';

/** Why this target cannot take this job's batch script (a value that would break out of its line), or null. */
function batchProblem(config: SlurmTargetConfig, job: JobRecord): string | null {
  const problem = targetConfigProblem(config);
  if (problem) return problem;
  const time = job.resources?.time;
  if (time !== undefined && !isSlurmTime(time))
    return 'the job\'s "resources.time" must be a Slurm time limit: minutes, HH:MM:SS or D-HH:MM:SS';
  return null;
}

/** The sbatch options for a job on this target (throws on a value that would break out of its #SBATCH line). */
export function sbatchOptions(config: SlurmTargetConfig, job: JobRecord, rdir: string): string[] {
  const problem = batchProblem(config, job) ?? (/[\0-\x1f\x7f\s'"]/.test(rdir) ? `bad job folder ${rdir}` : null);
  if (problem) throw new Error(`Slurm target: ${problem}`);
  const opts = [`--job-name=quarry-${job.id}`, `--chdir=${rdir}`, `--output=${rdir}/slurm.log`];
  if (config.partition) opts.push(`--partition=${config.partition}`);
  if (config.account) opts.push(`--account=${config.account}`);
  const nodes = job.resources?.nodes ?? config.nodes;
  if (nodes) opts.push(`--nodes=${nodes}`);
  const time = job.resources?.time ?? config.time;
  if (time) opts.push(`--time=${time}`);
  const gpus = job.resources?.gpus ?? config.gpus;
  if (gpus) opts.push(config.gpuFlag === 'gpus-per-node' ? `--gpus-per-node=${gpus}` : `--gres=gpu:${gpus}`);
  return [...opts, ...(config.sbatchArgs ?? [])];
}

/**
 * sh lines writing `body` to `file` through a quoted here-document (nothing in it expands) whose delimiter is random
 * and does not occur in the body: no line of the body can end it early.
 */
export function hereDocument(file: string, body: string): string {
  let delim: string;
  do delim = `QUARRY_EOF_${randomBytes(12).toString('hex')}`;
  while (body.includes(delim));
  return `cat > ${q(file)} <<'${delim}'\n${body}${body.endsWith('\n') ? '' : '\n'}${delim}`;
}

/** The batch script: #SBATCH lines, the job's plain environment, then the wrapper running the command. */
export function batchScript(config: SlurmTargetConfig, job: JobRecord, rdir: string, command: string[]): string {
  return [
    '#!/bin/sh',
    `# Quarry job ${job.id}`,
    ...sbatchOptions(config, job, rdir).map((o) => `#SBATCH ${o}`),
    `cd ${q(rdir)}`,
    ...exportLines({ ...job.env, QUARRY_JOB_ID: job.id, QUARRY_JOB_DIR: rdir }),
    `set -- ${command.map((a) => q(a)).join(' ')}`,
    WRAPPER,
    'exit "$code"',
    '',
  ].join('\n');
}

const RUNNING_STATES = new Set(['RUNNING', 'COMPLETING', 'CONFIGURING', 'SUSPENDED', 'STAGE_OUT', 'RESIZING']);
const WAITING_STATES = new Set(['PENDING', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'RESV_DEL_HOLD', 'SIGNALING']);

/** Slurm's state word in Quarry's terms. */
function slurmState(state: string): JobStatus | null {
  const s = state.replace(/\+$/, '').split(' ')[0];
  if (RUNNING_STATES.has(s) || WAITING_STATES.has(s)) return 'running';
  if (s === 'COMPLETED') return 'succeeded';
  if (s === 'CANCELLED') return 'cancelled';
  if (/^(FAILED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED|SPECIAL_EXIT)$/.test(s)) return 'failed';
  return null;
}

/** One script asking squeue, then sacct, then scontrol, then the exit_code file; one `source value…` line each. */
function stateScript(id: string, rdir: string): string {
  const j = q(id);
  return [
    `s="$(squeue -h -j ${j} -o '%T|%r' 2>/dev/null)"; [ -n "$s" ] && echo "squeue $s"`,
    `a="$(sacct -n -X -P -j ${j} -o State,ExitCode 2>/dev/null | head -1)"; [ -n "$a" ] && echo "sacct $a"`,
    `c="$(scontrol -o show job ${j} 2>/dev/null)"`,
    '[ -n "$c" ] && echo "scontrol $(echo "$c" | tr \' \' \'\\n\' ' +
      "| grep -E '^(JobState|ExitCode|Reason)=' | tr '\\n' ' ')\"",
    `[ -f ${q(`${rdir}/exit_code`)} ] && echo "exit $(cat ${q(`${rdir}/exit_code`)})"`,
    'exit 0',
  ].join('\n');
}

/** The job's state from stateScript's answer (the first source that knows the job wins). */
export function slurmStatus(job: JobRecord, answer: string): StatusReport {
  const lines = Object.fromEntries(
    answer
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf(' ')), l.slice(l.indexOf(' ') + 1)]),
  );
  const exitFile = lines.exit !== undefined ? Number(lines.exit) : null;
  const cancelledHere = job.status === 'cancelled';
  let state: string | null = null;
  let exitCode: number | null = exitFile;
  let why: string | null = null;
  if (lines.squeue) {
    const [st, reason] = lines.squeue.split('|');
    state = st;
    if (st === 'PENDING') why = `waiting in Slurm's queue (${reason || 'no reason given'})`;
  } else if (lines.sacct) {
    const [st, ec] = lines.sacct.split('|');
    state = st;
    if (exitCode === null && ec) exitCode = Number(ec.split(':')[0]);
  } else if (lines.scontrol) {
    state = /JobState=(\S+)/.exec(lines.scontrol)?.[1] ?? null;
    const ec = /ExitCode=(\d+)/.exec(lines.scontrol)?.[1];
    if (exitCode === null && ec !== undefined) exitCode = Number(ec);
    const reason = /Reason=(\S+)/.exec(lines.scontrol)?.[1];
    if (reason && reason !== 'None') why = reason;
  }
  let status = state ? slurmState(state) : null;
  if (status === null && exitFile !== null) status = exitFile === 0 ? 'succeeded' : 'failed';
  if (status === null) {
    if (cancelledHere) return { status: 'cancelled', exitCode, reason: 'cancelled' };
    return {
      status: 'lost',
      exitCode: null,
      reason: `Slurm no longer knows job ${job.remote.slurmJobId} and it left no exit code (no accounting to ask)`,
    };
  }
  if (cancelledHere && status !== 'running') return { status: 'cancelled', exitCode, reason: 'cancelled' };
  if (status === 'cancelled') {
    return { status, exitCode, reason: `cancelled in Slurm (scancel from outside Quarry, or an administrator)` };
  }
  if (status === 'failed') {
    const word = state && state !== 'FAILED' ? `Slurm: ${state}` : `exited with code ${exitCode ?? '?'}`;
    return { status, exitCode, reason: why && state === 'FAILED' ? `${word} (${why})` : word };
  }
  return { status: cancelledHere ? 'cancelled' : status, exitCode, reason: status === 'running' ? why : null };
}

export class SlurmTarget extends RemoteFolderTarget implements Target {
  readonly kind = 'slurm' as const;

  constructor(
    readonly name: string,
    readonly config: SlurmTargetConfig,
  ) {
    super(new Shell(config.host ? { ...config, host: config.host } : null), config.remoteDir);
  }

  async check(job: JobRecord): Promise<string[]> {
    const problems = await probe(this.shell, job, {
      python: this.config.python ?? 'python3',
      dir: this.config.remoteDir,
      minFreeMB: this.config.minFreeMB ?? 1024,
      gpus: false,
    });
    if (problems.some((p) => /cannot reach|refused the login|host key/.test(p))) return problems;
    const part = this.config.partition ? `-p ${q(this.config.partition)}` : '';
    const r = await this.shell.run(
      `command -v sbatch >/dev/null || { echo nosbatch; exit 0; }; sinfo -h ${part} -o '%G|%a' 2>&1`,
      { check: false },
    );
    const out = r.stdout.toString('utf8').trim();
    if (out === 'nosbatch') return [...problems, `sbatch is not on ${this.shell.where}`];
    if (r.code !== 0 || !out) {
      return [...problems, `sinfo on ${this.shell.where} says: ${out || r.stderr.trim() || 'nothing (no partition?)'}`];
    }
    const wanted = job.resources?.gpus ?? this.config.gpus ?? 0;
    if (wanted > 0) {
      const most = Math.max(0, ...[...out.matchAll(/gpu(?::[^:,|]+)?:(\d+)/g)].map((m) => Number(m[1])));
      if (most < wanted) {
        problems.push(
          `the job asks for ${wanted} GPUs per node; the partition's nodes have ${most} (sinfo -o %G: ${out})`,
        );
      }
    }
    return problems;
  }

  async submit(job: JobRecord, dir: string, secrets: Record<string, string> = {}): Promise<void> {
    const problem = batchProblem(this.config, job);
    if (problem) throw new Error(`the Slurm target ${this.name} cannot take the job: ${problem}`);
    const rdir = this.remoteDir(job);
    const plan = stagePlan(job, dir, rdir, this.config.python ?? 'python3');
    const script = batchScript(this.config, job, rdir, plan.command);
    await stage(this.shell, plan, rdir);
    job.remote = { dir: rdir, ...(this.config.host ? { host: this.config.host } : {}) };
    // Secrets reach sbatch through its environment (sbatch exports it to the job), never a file.
    const r = await this.shell.run(
      [
        'set -e',
        `cd ${q(rdir)}`,
        hereDocument('job.sbatch', script),
        ...READ_SECRETS,
        'sbatch --parsable job.sbatch',
      ].join('\n'),
      { stdin: secretsInput(secrets), check: false },
    );
    const id = r.stdout.toString('utf8').trim().split(';')[0];
    if (r.code !== 0 || !/^\d+$/.test(id)) {
      throw new Error(
        `sbatch refused the job: ${r.stderr.trim().split('\n').slice(-3).join(' / ') || `exit ${r.code}`}`,
      );
    }
    job.remote = { ...job.remote, slurmJobId: id };
  }

  async status(job: JobRecord, _dir: string): Promise<StatusReport> {
    const id = job.remote.slurmJobId;
    if (!id) return { status: 'lost', exitCode: null, reason: 'no Slurm job id was recorded' };
    try {
      const r = await this.shell.run(stateScript(id, this.remoteDir(job)));
      const report = slurmStatus(job, r.stdout.toString('utf8'));
      if (report.status === 'failed' && job.status !== 'failed') {
        report.reason = `${report.reason}${await remoteTail(this.shell, this.remoteDir(job))}`;
      }
      return report;
    } catch (err) {
      return unreachable(job, err);
    }
  }

  async cancel(job: JobRecord, _dir: string, graceMs = 10_000): Promise<void> {
    const id = job.remote.slurmJobId;
    if (!id) return;
    const queued = `[ -n "$(squeue -h -j ${q(id)} -o %T 2>/dev/null)" ]`;
    await this.shell.run(
      [
        `scancel ${q(id)}`,
        this.graceLoop(queued, graceMs, `${queued} && scancel --signal=KILL --full ${q(id)}; exit 0`),
      ].join('\n'),
      { timeoutMs: graceMs + 60_000 },
    );
  }
}
