// A job's folder on the far side of a Shell (an ssh host, or a Slurm cluster's shared directory): staging the launch
// and data there (tar through the shell, so the remote needs nothing but sh and tar), pulling logs and metrics back
// incrementally by byte offset (the offset is the local copy's size, so a pull cut off by a dropped connection is
// simply redone, and metrics.jsonl only ever gains whole lines), the checkpoint list, and a checkpoint's files.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are sh, where ${NAME} is the shell's
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { shellQuote as q } from '../../../core/training/overrides';
import { writeJsonAtomicSync } from '../../../core/util/atomicWrite';
import type { JobRecord } from '../../../core/training/jobs/job';
import type { Shell } from './shell';
import type { ShellError } from './shell';
import type { PullReport } from './target';
import { underPullLock } from './pullLock';
import type { JobRecord as Job } from '../../../core/training/jobs/job';

/** Files pulled back, by their path in the job folder; metrics files take whole lines only. */
const PULLED = ['stdout.log', 'stderr.log', 'out/metrics.jsonl'] as const;
const LINE_FILES = new Set<string>(['out/metrics.jsonl']);
/** At most this much of one file per pull; the rest comes with the next. */
const CHUNK = 8 << 20;

export const CHECKPOINT_DIR = /^(checkpoint-\d+|global_step_\d+|final)$/;

/** Secrets for a script's standard input: NAME=base64(value) lines and a blank line. */
export function secretsInput(secrets: Record<string, string>): string {
  return (
    Object.entries(secrets)
      .map(([k, v]) => `${k}=${Buffer.from(v, 'utf8').toString('base64')}\n`)
      .join('') + '\n'
  );
}

/** Shell lines that read secretsInput() from standard input and export them (the values touch no disk, no argv). */
export const READ_SECRETS = [
  'while IFS= read -r l; do [ -z "$l" ] && break; n="${l%%=*}"; v="$(printf %s "${l#*=}" | base64 -d)"; ' +
    'export "$n=$v"; done',
];

/** What the remote side stages for a job, and the command with the staged local paths rewritten to remote ones. */
interface StagePlan {
  items: Array<{ local: string; remoteSub: string }>;
  command: string[];
}

/** The job folder's launch.json always; the launch folder (`cwd`) and the data, when they are local paths. */
export function stagePlan(job: JobRecord, jobDir: string, remoteDir: string, python: string): StagePlan {
  const items: StagePlan['items'] = [{ local: join(jobDir, 'launch.json'), remoteSub: '.' }];
  const rewrites: Array<[string, string]> = [];
  if (job.cwd && existsSync(job.cwd) && statSync(job.cwd).isDirectory()) {
    items.push({ local: `${resolve(job.cwd)}/.`, remoteSub: 'launch' });
    rewrites.push([resolve(job.cwd), `${remoteDir}/launch`]);
  }
  if (job.data && existsSync(job.data)) {
    items.push({ local: resolve(job.data), remoteSub: 'data' });
    rewrites.push([resolve(job.data), `${remoteDir}/data/${basename(resolve(job.data))}`]);
  }
  const command = job.command.map((arg, i) => {
    if (i === 0 && (arg === 'python' || arg === 'python3')) return python;
    const eq = arg.indexOf('=');
    for (const [from, to] of rewrites) {
      if (arg === from || arg.startsWith(`${from}/`)) return to + arg.slice(from.length);
      const v = arg.slice(eq + 1);
      if (eq > 0 && (v === from || v.startsWith(`${from}/`))) return arg.slice(0, eq + 1) + to + v.slice(from.length);
    }
    return arg;
  });
  return { items, command };
}

function tarOf(local: string): ReturnType<typeof spawn> {
  const dot = local.endsWith('/.');
  const dir = dot ? local.slice(0, -2) : dirname(local);
  const name = dot ? '.' : basename(local);
  return spawn('tar', ['-C', dir, '-cf', '-', name], { stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Copies the plan's items into remoteDir (tar through the shell). A full disk or a missing tar is said plainly. */
export async function stage(shell: Shell, plan: StagePlan, remoteDir: string): Promise<void> {
  await shell.run(`mkdir -p ${q(remoteDir)}/out`);
  for (const item of plan.items) {
    const tar = tarOf(item.local);
    let tarErr = '';
    tar.stderr?.on('data', (b: Buffer) => {
      tarErr += b.toString();
    });
    const target = `${remoteDir}/${item.remoteSub}`;
    try {
      await shell.run(`mkdir -p ${q(target)} && tar -C ${q(target)} -xf -`, {
        stdin: tar.stdout!,
        timeoutMs: 1_800_000,
      });
    } catch (err) {
      const e = err as ShellError;
      // GNU tar says "Wrote only N of M bytes" when the disk fills mid-block.
      if (/No space left on device|Wrote only \d+ of \d+ bytes|Disk quota exceeded/i.test(e.stderr ?? '')) {
        throw new Error(`no space left on ${shell.where} in ${remoteDir} while staging ${item.local}`);
      }
      throw new Error(`staging ${item.local} to ${shell.where}:${target} failed: ${e.message}`);
    }
    if (tarErr.trim()) throw new Error(`reading ${item.local} to stage it: ${tarErr.trim()}`);
  }
}

function localSize(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

/**
 * Where each remote file has been read to. Without truncation it is the local copy's size; a remote file that shrank
 * (verl's file logger starts its file again when a run resumes) is read again from its start and appended, so the
 * history already pulled stays and readers keep the latest line of a step. Kept in pull-offsets.json.
 */
const OFFSETS_FILE = 'pull-offsets.json';

function remoteOffsets(jobDir: string): Record<string, number> {
  try {
    const doc = JSON.parse(readFileSync(join(jobDir, OFFSETS_FILE), 'utf8')) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(doc).filter((e): e is [string, number] => typeof e[1] === 'number'));
  } catch {
    return {};
  }
}

/**
 * The remote script: for each file a header `name size n offset` (offset 0 again when the file shrank) then n bytes
 * from that offset; then the checkpoint dirs.
 */
function pullScript(remoteDir: string, offsets: Array<[string, number]>): string {
  const specs = offsets.map(([f, o]) => q(`${f}:${o}`)).join(' ');
  return [
    `cd ${q(remoteDir)} || exit 3`,
    `for s in ${specs}; do f="\${s%:*}"; o="\${s##*:}"`,
    '  if [ -f "$f" ]; then z=$(($(wc -c <"$f"))); else z=-1; fi',
    '  if [ "$z" -ge 0 ] && [ "$z" -lt "$o" ]; then o=0; fi',
    `  n=0; if [ "$z" -gt "$o" ]; then n=$((z - o)); [ "$n" -gt ${CHUNK} ] && n=${CHUNK}; fi`,
    '  echo "$f $z $n $o"',
    '  if [ "$n" -gt 0 ]; then tail -c +$((o + 1)) "$f" | head -c "$n"; fi',
    'done',
    'echo "@checkpoints"',
    'for d in out/*; do [ -d "$d" ] && echo "${d#out/}"; done',
    'exit 0',
  ].join('\n');
}

/** Pulls what is new of the job's logs and metrics into `jobDir`; never throws (a failed pull is redone later). */
export async function pullFiles(shell: Shell, remoteDir: string, jobDir: string): Promise<PullReport> {
  const known = remoteOffsets(jobDir);
  const offsets = PULLED.map((f): [string, number] => [f, known[f] ?? localSize(join(jobDir, f))]);
  let res: Buffer;
  try {
    const r = await shell.run(pullScript(remoteDir, offsets), { check: false });
    if (r.code === 3) return { bytes: 0, checkpoints: null, error: `${remoteDir} is missing on ${shell.where}` };
    if (r.code !== 0)
      return { bytes: 0, checkpoints: null, error: `pull failed on ${shell.where}: ${r.stderr.trim()}` };
    res = r.stdout;
  } catch (err) {
    return { bytes: 0, checkpoints: null, error: (err as Error).message };
  }
  let at = 0;
  let bytes = 0;
  const chunks: Array<[string, Buffer, number]> = [];
  const nextLine = (): string | null => {
    const nl = res.indexOf(10, at);
    if (nl < 0) return null;
    const s = res.subarray(at, nl).toString('utf8');
    at = nl + 1;
    return s;
  };
  for (const [file] of offsets) {
    const header = nextLine();
    const m = header ? /^(\S+) (-?\d+) (\d+) (\d+)$/.exec(header) : null;
    if (!m || m[1] !== file) return { bytes: 0, checkpoints: null, error: `unexpected pull answer: ${header}` };
    const n = Number(m[3]);
    if (at + n > res.length) return { bytes: 0, checkpoints: null, error: 'the pull was cut short; retrying later' };
    chunks.push([file, res.subarray(at, at + n), Number(m[4])]);
    at += n;
  }
  if (nextLine() !== '@checkpoints') return { bytes: 0, checkpoints: null, error: 'the pull was cut short' };
  const checkpoints: string[] = [];
  for (let l = nextLine(); l !== null; l = nextLine()) if (CHECKPOINT_DIR.test(l)) checkpoints.push(l);
  // Only now, with the whole answer in hand, write anything: under the folder's pull lock, from the offsets as they
  // are now (another pull of the same job may have written part or all of this answer meanwhile).
  const asked = new Map(offsets);
  try {
    underPullLock(jobDir, () => {
      const now = remoteOffsets(jobDir);
      const next = { ...known, ...now };
      for (const [file, chunk, from] of chunks) {
        let data = chunk;
        if (LINE_FILES.has(file)) data = chunk.subarray(0, chunk.lastIndexOf(10) + 1);
        const current = now[file] ?? localSize(join(jobDir, file));
        if (current === asked.get(file)) next[file] = from + data.length;
        else {
          // Another pull moved this file on. Without a restart of the remote file keep only what lies beyond it;
          // after a restart leave the file to the next pull, which asks from the offset stored now.
          if (from !== asked.get(file) || current < from) continue;
          data = data.subarray(Math.min(data.length, current - from));
          next[file] = current + data.length;
        }
        if (data.length === 0) continue;
        const local = join(jobDir, file);
        mkdirSync(dirname(local), { recursive: true });
        appendFileSync(local, data);
        bytes += data.length;
      }
      writeJsonAtomicSync(join(jobDir, OFFSETS_FILE), next);
    });
  } catch (err) {
    return { bytes: 0, checkpoints: null, error: (err as Error).message };
  }
  return { bytes, checkpoints, error: null };
}

/** Copies out/<name> from the remote job folder into the local job folder's out/<name> (streamed through tar). */
async function fetchRemoteDir(shell: Shell, remoteDir: string, jobDir: string, name: string): Promise<string> {
  if (!CHECKPOINT_DIR.test(name)) throw new Error(`not a checkpoint name: ${name}`);
  const dest = join(jobDir, 'out');
  mkdirSync(dest, { recursive: true });
  const script = `cd ${q(`${remoteDir}/out`)} && [ -d ${q(name)} ] || exit 3; tar -cf - ${q(name)}`;
  const [cmd, ...args] = shell.argv(script);
  const from = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const tar = spawn('tar', ['-C', dest, '-xf', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
  from.stdout.pipe(tar.stdin);
  let err = '';
  from.stderr.on('data', (b: Buffer) => {
    err += b.toString();
  });
  tar.stderr.on('data', (b: Buffer) => {
    err += b.toString();
  });
  const [fromCode, tarCode] = await Promise.all([
    new Promise<number | null>((r) => from.on('close', r)),
    new Promise<number | null>((r) => tar.on('close', r)),
  ]);
  if (fromCode === 3) throw new Error(`no checkpoint ${name} in ${remoteDir}/out on ${shell.where}`);
  if (fromCode !== 0 || tarCode !== 0) throw new Error(`copying ${name} from ${shell.where} failed: ${err.trim()}`);
  return join(dest, name);
}

/** The last lines of the remote job's stderr.log, for a failure message (empty when there are none). */
export async function remoteTail(shell: Shell, remoteDir: string): Promise<string> {
  try {
    const r = await shell.run(`tail -n 3 ${q(`${remoteDir}/stderr.log`)}`, { check: false });
    const lines = r.stdout.toString('utf8').trimEnd().split('\n').join(' / ');
    return lines ? `: ${lines.slice(-300)}` : '';
  } catch {
    return '';
  }
}

/** What the ssh and slurm targets share: a Shell, and each job's folder under the target's remoteDir. */
export abstract class RemoteFolderTarget {
  constructor(
    readonly shell: Shell,
    private readonly baseDir: string,
  ) {}

  protected remoteDir(job: Job): string {
    return job.remote.dir ?? `${this.baseDir.replace(/\/+$/, '')}/${job.id}`;
  }

  /** A shell loop waiting up to `graceMs` while `cond` holds (the sh condition), then running `after`. */
  protected graceLoop(cond: string, graceMs: number, after: string): string {
    const tenths = Math.ceil(graceMs / 100);
    return `i=0; while ${cond} && [ $i -lt ${tenths} ]; do sleep 0.1; i=$((i + 1)); done\n${after}`;
  }

  pull(job: Job, dir: string): Promise<PullReport> {
    return pullFiles(this.shell, this.remoteDir(job), dir);
  }

  fetchCheckpoint(job: Job, dir: string, name: string): Promise<string> {
    return fetchRemoteDir(this.shell, this.remoteDir(job), dir, name);
  }
}
