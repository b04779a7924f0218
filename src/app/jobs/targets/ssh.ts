// The `ssh` target: a job on any host the user's OpenSSH config reaches. The launch and data are staged into
// `<remoteDir>/<job id>/`, the command runs there detached (setsid + nohup) under the same wrapper as `local`, which
// records its pid and kernel start time (`pid`) and its exit code (`exit_code`). Status reads those two files; logs and
// metrics are pulled by byte offset (remoteFiles.ts); cancel sends SIGTERM to the job's process group, then SIGKILL.
// Every operation is its own ssh connection, so a dropped connection loses nothing: the next poll redoes it.
import type { JobRecord } from '../../../core/training/jobs/job';
import type { SshTargetConfig } from '../../../core/training/jobs/targets';
import { shellQuote as q } from '../../../core/training/overrides';
import { WRAPPER } from './local';
import { READ_SECRETS, RemoteFolderTarget, remoteTail, secretsInput, stage, stagePlan } from './remoteFiles';
import { Shell, ShellError } from './shell';
import type { StatusReport, Target } from './target';

/** The wrapper, first writing `pid` as "<pid> <start time>" (field 22 of /proc/<pid>/stat where there is one). */
const REMOTE_WRAPPER = [
  `echo "$$ $(cut -d' ' -f22 /proc/$$/stat 2>/dev/null)" > pid.tmp && mv pid.tmp pid`,
  WRAPPER,
].join('\n');

/** `export NAME=value` lines for the job's plain environment. */
export function exportLines(env: Record<string, string>): string[] {
  return Object.entries(env).map(([k, v]) => `export ${k}=${q(v)}`);
}

/** The module a `python -m X.Y` command needs (X), or null. */
function moduleOf(command: string[]): string | null {
  const i = command.indexOf('-m');
  return i >= 0 && command[i + 1] ? command[i + 1].split('.')[0] : null;
}

const ENGINE_MODULE: Record<string, string> = { trl: 'trl', verl: 'verl', skyrl: 'skyrl_train' };

/**
 * Probes a shell for a job: reachable, the Python and the modules the job imports, free space in `dir`, GPUs.
 * Returns the problems in words.
 */
export async function probe(
  shell: Shell,
  job: JobRecord,
  opts: { python: string; dir: string; minFreeMB: number; gpus: boolean },
): Promise<string[]> {
  const modules = [moduleOf(job.command), job.engine ? ENGINE_MODULE[job.engine] : null].filter(
    (m): m is string => !!m,
  );
  const py = q(opts.python);
  const lines = [
    'echo reachable',
    `if command -v ${py} >/dev/null 2>&1; then echo python ok; else echo python missing; fi`,
    ...[...new Set(modules)].map(
      (m) =>
        `if ${py} -c ${q(`import ${m}`)} >/dev/null 2>&1; ` +
        `then echo "module ${m} ok"; else echo "module ${m} missing"; fi`,
    ),
    `d=${q(opts.dir)}; while [ ! -d "$d" ]; do d="$(dirname "$d")"; done`,
    `echo "free $(df -Pk "$d" | awk 'NR==2 {print $4}') $d"`,
    opts.gpus ? 'echo "gpus $(nvidia-smi -L 2>/dev/null | grep -c "^GPU")"' : 'true',
  ];
  let out: string;
  try {
    out = (await shell.run(lines.join('\n'), { timeoutMs: 60_000 })).stdout.toString('utf8');
  } catch (err) {
    return [(err as Error).message];
  }
  const problems: string[] = [];
  if (/^python missing$/m.test(out))
    problems.push(`${opts.python} is not on ${shell.where} (set "python" in the target)`);
  else {
    for (const m of out.matchAll(/^module (\S+) missing$/gm)) {
      problems.push(`${opts.python} on ${shell.where} cannot import ${m[1]}`);
    }
  }
  const free = /^free (\d+) (.*)$/m.exec(out);
  if (free && Number(free[1]) / 1024 < opts.minFreeMB) {
    problems.push(
      `only ${Math.floor(Number(free[1]) / 1024)} MB free in ${free[2]} on ${shell.where} ` +
        `(the target asks for ${opts.minFreeMB} MB: minFreeMB)`,
    );
  }
  const wanted = job.resources?.gpus ?? 0;
  const gpus = /^gpus (\d+)$/m.exec(out);
  if (opts.gpus && wanted > 0 && gpus && Number(gpus[1]) < wanted) {
    problems.push(`the job asks for ${wanted} GPUs; nvidia-smi on ${shell.where} lists ${gpus[1]}`);
  }
  return problems;
}

/** Reads `exit_code` and `pid` in the remote folder: `exit N`, `running`, `gone` or `nodir`. */
function processStateScript(dir: string): string {
  return [
    `cd ${q(dir)} 2>/dev/null || { echo nodir; exit 0; }`,
    '[ -f exit_code ] && { echo "exit $(cat exit_code)"; exit 0; }',
    'if [ -f pid ]; then set -- $(cat pid)',
    '  if kill -0 "-$1" 2>/dev/null; then',
    `    now="$(cut -d' ' -f22 /proc/$1/stat 2>/dev/null)"`,
    '    if [ -z "$now" ] || [ -z "$2" ] || [ "$now" = "$2" ]; then echo running; exit 0; fi',
    '  fi',
    'fi',
    '[ -f exit_code ] && { echo "exit $(cat exit_code)"; exit 0; }',
    'echo gone',
  ].join('\n');
}

/** The job's state from processStateScript's answer. */
export function processStatus(job: JobRecord, answer: string, where: string): StatusReport {
  const cancelled = job.status === 'cancelled';
  const exit = /^exit (-?\d+)/.exec(answer.trim());
  if (exit) {
    const code = Number(exit[1]);
    if (cancelled) return { status: 'cancelled', exitCode: code, reason: 'cancelled' };
    return {
      status: code === 0 ? 'succeeded' : 'failed',
      exitCode: code,
      reason: code ? `exited with code ${code}` : null,
    };
  }
  if (answer.trim() === 'running') return { status: cancelled ? 'cancelled' : 'running', exitCode: null, reason: null };
  if (cancelled) return { status: 'cancelled', exitCode: null, reason: 'cancelled' };
  if (answer.trim() === 'nodir') {
    return { status: 'lost', exitCode: null, reason: `the job's folder ${job.remote.dir} is gone from ${where}` };
  }
  return {
    status: 'lost',
    exitCode: null,
    reason: `the job's processes on ${where} ended without recording an exit code (killed, or the host restarted)`,
  };
}

/** While the host cannot be reached the job keeps its state, with the reason said. */
export function unreachable(job: JobRecord, err: unknown): StatusReport {
  if (!(err instanceof ShellError)) throw err;
  return { status: job.status, exitCode: job.exitCode, reason: `${err.message} (will retry)` };
}

export class SshTarget extends RemoteFolderTarget implements Target {
  readonly kind = 'ssh' as const;

  constructor(
    readonly name: string,
    readonly config: SshTargetConfig,
  ) {
    super(new Shell(config), config.remoteDir);
  }

  check(job: JobRecord): Promise<string[]> {
    return probe(this.shell, job, {
      python: this.config.python ?? 'python3',
      dir: this.config.remoteDir,
      minFreeMB: this.config.minFreeMB ?? 1024,
      gpus: (job.resources?.gpus ?? 0) > 0,
    });
  }

  async submit(job: JobRecord, dir: string, secrets: Record<string, string> = {}): Promise<void> {
    const rdir = this.remoteDir(job);
    const plan = stagePlan(job, dir, rdir, this.config.python ?? 'python3');
    await stage(this.shell, plan, rdir);
    job.remote = { dir: rdir, host: this.config.host };
    const script = [
      'set -e',
      `cd ${q(rdir)}`,
      ...READ_SECRETS,
      ...exportLines({ ...job.env, QUARRY_JOB_ID: job.id, QUARRY_JOB_DIR: rdir }),
      'if command -v setsid >/dev/null 2>&1; then s=setsid; else s=; fi',
      `$s nohup sh -c ${q(REMOTE_WRAPPER)} quarry-job ${plan.command.map((a) => q(a)).join(' ')} ` +
        '>/dev/null 2>&1 </dev/null &',
      'i=0; while [ ! -s pid ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done',
      'cat pid',
    ].join('\n');
    const r = await this.shell.run(script, { stdin: secretsInput(secrets) });
    const [pid, start] = r.stdout.toString('utf8').trim().split(/\s+/);
    if (!/^\d+$/.test(pid ?? '')) throw new Error(`the job did not start on ${this.config.host}: ${r.stderr.trim()}`);
    job.remote = { ...job.remote, pid: Number(pid), ...(start ? { procStart: start } : {}) };
  }

  async status(job: JobRecord, _dir: string): Promise<StatusReport> {
    try {
      const r = await this.shell.run(processStateScript(this.remoteDir(job)));
      const report = processStatus(job, r.stdout.toString('utf8'), this.config.host);
      if (report.status === 'failed')
        report.reason = `${report.reason}${await remoteTail(this.shell, this.remoteDir(job))}`;
      return report;
    } catch (err) {
      return unreachable(job, err);
    }
  }

  async cancel(job: JobRecord, _dir: string, graceMs = 10_000): Promise<void> {
    await this.shell.run(
      [
        `cd ${q(this.remoteDir(job))} 2>/dev/null && [ -f pid ] || exit 0`,
        'set -- $(cat pid); kill -TERM "-$1" 2>/dev/null || exit 0',
        this.graceLoop(
          'kill -0 "-$1" 2>/dev/null && [ ! -f exit_code ]',
          graceMs,
          'kill -KILL "-$1" 2>/dev/null; exit 0',
        ),
      ].join('\n'),
      { timeoutMs: graceMs + 60_000 },
    );
  }
}
