// Jobs, the use cases the CLI (`quarry jobs`) and the editor share: submit a spec to a target, refresh and read status,
// pull logs, metrics and the checkpoint list back, read logs from an offset (to follow them), cancel, fetch a
// checkpoint. The job folder is the source of truth; a target only runs things. Several processes follow one job (a
// submit in a terminal while the editor or `quarry jobs list` refreshes it): a starting job is left to its submitter,
// and every change to job.json goes through the store's update(), which refuses to write over a newer record.
import { existsSync, openSync, readFileSync, readSync, closeSync, statSync, writeFileSync } from 'node:fs';
import { writeJsonAtomicSync } from '../../core/util/atomicWrite';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  FINAL_STATUSES,
  jobSpecProblem,
  newJobId,
  newJobRecord,
  type JobRecord,
  type JobSpec,
} from '../../core/training/jobs/job';
import { splitEnv } from '../../core/training/jobs/targets';
import type { JobStore } from './store';
import { procStart } from './targets/local';
import { loadTargets, makeTarget, targetConfig } from './targets/registry';
import type { PullReport, Target } from './targets/target';

export { JobStore } from './store';

/** The target a job names, from the workspace's targets (and the editor's setting). */
function targetNamed(name: string, store?: JobStore): Target {
  const targets = store ? loadTargets(store.workspace, store.options.targets) : {};
  return makeTarget(name, targetConfig(targets, name));
}

async function secretValues(store: JobStore, names: Record<string, string>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, from] of Object.entries(names)) {
    const v = store.options.secret ? await store.options.secret(from) : process.env[from];
    if (v === undefined || v === '') missing.push(from === name ? name : `${name} (from ${from})`);
    else out[name] = v;
  }
  if (missing.length) {
    throw new Error(
      `the target's secret ${missing.join(', ')} ${missing.length > 1 ? 'have' : 'has'} no value: set ` +
        "it in the environment (or the editor's secret storage)",
    );
  }
  return out;
}

export async function submitJob(store: JobStore, spec: JobSpec): Promise<JobRecord> {
  const problem = jobSpecProblem(spec);
  if (problem) throw new Error(`bad job spec: ${problem}`);
  const config = targetConfig(loadTargets(store.workspace, store.options.targets), spec.target);
  const target = makeTarget(spec.target, config);
  const { plain, secrets } = splitEnv(config.env);
  const job = newJobRecord({ ...spec, env: { ...plain, ...(spec.env ?? {}) } }, newJobId());
  const secretEnv = await secretValues(store, secrets);
  if (Object.keys(secrets).length) job.secretEnv = Object.keys(secrets);
  const missing = await target.check(job);
  if (missing.length) throw new Error(`target ${target.name} cannot run this job: ${missing.join('; ')}`);
  job.submitter = { pid: process.pid, procStart: procStart(process.pid), host: hostname() };
  const dir = store.create(job);
  writeFileSync(
    join(dir, 'launch.json'),
    JSON.stringify(
      { command: job.command, cwd: job.cwd, env: Object.keys(job.env), secretEnv: job.secretEnv ?? [] },
      null,
      2,
    ) + '\n',
  );
  try {
    await target.submit(job, dir, secretEnv);
  } catch (err) {
    store.update(job.id, (cur) => {
      if (FINAL_STATUSES.includes(cur.status)) return null;
      const { submitter: _, ...rest } = cur;
      const ended = { status: 'failed' as const, reason: (err as Error).message, endedAt: new Date().toISOString() };
      return { ...rest, ...ended, remote: job.remote };
    });
    throw err;
  }
  // Only this process knows where the job runs: that goes in whatever the record says now. A job cancelled while it
  // was starting stays cancelled, and is stopped here, now that it can be.
  const started = store.update(job.id, (cur) => {
    const { submitter: _, ...rest } = cur;
    const status = cur.status === 'staged' || cur.status === 'lost' ? 'running' : cur.status;
    return { ...rest, status, remote: job.remote, startedAt: new Date().toISOString() };
  });
  if (started.status === 'cancelled') {
    await target.cancel(started, dir);
    return refreshJob(store, job.id);
  }
  return started;
}

/** Whether the process that is submitting a staged job still runs (on another host: taken to, as it cannot be told). */
function submitterAlive(job: JobRecord): boolean {
  const s = job.submitter;
  if (!s) return false;
  if (s.host !== hostname()) return true;
  try {
    process.kill(s.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = procStart(s.pid);
  return s.procStart === null || now === null || now === s.procStart;
}

/**
 * Asks the target and records what changed, then pulls what is new of the logs and metrics (after the status, so a
 * job seen ended has all its output pulled). A finished job is not asked again, once its last pull is done. A staged
 * job is starting: its submitter alone knows where it runs, so it is not asked about until that is recorded (or the
 * submitter is gone). What the target said is written only over the record it was asked from: a newer one (the
 * submitter's, a cancel's) stays.
 */
export async function refreshJob(store: JobStore, id: string): Promise<JobRecord> {
  let job = store.get(id);
  const dir = store.dir(id);
  if (job.status === 'staged') {
    if (submitterAlive(job)) return job;
    const asked = job.rev;
    return store.update(id, (cur) => {
      if (cur.rev !== asked) return null;
      const { submitter, ...rest } = cur;
      return {
        ...rest,
        status: 'lost',
        reason:
          `the process that submitted it${submitter ? ` (pid ${submitter.pid})` : ''} ended before it recorded ` +
          `where the job runs: if it started on ${cur.target}, it runs there untracked`,
        endedAt: new Date().toISOString(),
      };
    });
  }
  const final = FINAL_STATUSES.includes(job.status);
  if (final && existsSync(join(dir, 'pulled'))) return job;
  const target = targetNamed(job.target, store);
  // A cancelled job is still asked: its processes may take a while to end (and to write their last lines).
  if (!final || job.status === 'cancelled') {
    const r = await target.status(job, dir);
    const changed = r.status !== job.status || r.exitCode !== job.exitCode || r.reason !== job.reason;
    if (changed) {
      const asked = job.rev;
      job = store.update(id, (cur) => {
        if (cur.rev !== asked) return null;
        const ended = FINAL_STATUSES.includes(r.status) && cur.endedAt === null;
        return { ...cur, ...r, ...(ended ? { endedAt: new Date().toISOString() } : {}) };
      });
    }
  }
  const pulled = await pullInto(target, job, dir);
  // A final job whose last pull succeeded is settled: its folder holds all the target had (a cancelled one, once it
  // has had time to end).
  const quiet =
    job.status !== 'cancelled' || job.exitCode !== null || Date.now() - Date.parse(job.endedAt ?? '') > 60_000;
  if (FINAL_STATUSES.includes(job.status) && pulled.error === null && quiet) writeFileSync(join(dir, 'pulled'), '');
  return job;
}

/** The pull, and the checkpoint list it saw written to checkpoints.json. */
async function pullInto(target: Target, job: JobRecord, dir: string): Promise<PullReport> {
  if (job.status === 'staged' || (job.status === 'failed' && !job.startedAt))
    return { bytes: 0, checkpoints: [], error: null };
  const r = await target.pull(job, dir);
  if (r.checkpoints) {
    const file = join(dir, 'checkpoints.json');
    const before = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as string[]) : [];
    const all = [...new Set([...before, ...r.checkpoints])];
    if (all.length !== before.length) writeJsonAtomicSync(file, all);
  }
  return r;
}

/** Pulls a job's logs, metrics and checkpoint list now; with `checkpoint`, also that checkpoint's files. */
export async function pullJob(
  store: JobStore,
  id: string,
  checkpoint?: string,
): Promise<{ job: JobRecord; pull: PullReport; checkpoints: string[]; fetched: string | null }> {
  const job = await refreshJob(store, id);
  const dir = store.dir(id);
  const target = targetNamed(job.target, store);
  const pull = await pullInto(target, job, dir);
  const file = join(dir, 'checkpoints.json');
  const checkpoints = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as string[]) : [];
  const fetched = checkpoint ? await target.fetchCheckpoint(job, dir, checkpoint) : null;
  return { job, pull, checkpoints, fetched };
}

/** Cancels a job; one still starting is marked cancelled, and its submitter stops it once it has started. */
export async function cancelJob(store: JobStore, id: string, graceMs?: number): Promise<JobRecord> {
  const seen = await refreshJob(store, id);
  if (FINAL_STATUSES.includes(seen.status)) return seen;
  const job = store.update(id, (cur) =>
    FINAL_STATUSES.includes(cur.status) ? null : { ...cur, status: 'cancelled', reason: 'cancelled' },
  );
  if (job.status !== 'cancelled') return job;
  await targetNamed(job.target, store).cancel(job, store.dir(id), graceMs);
  return refreshJob(store, id);
}

/** Bytes of a job's log from `offset` (stdout.log or stderr.log), and the offset to read from next. */
export function readLog(
  store: JobStore,
  id: string,
  which: 'stdout' | 'stderr',
  offset = 0,
): { text: string; next: number } {
  const file = join(store.dir(id), `${which}.log`);
  if (!existsSync(file)) return { text: '', next: offset };
  const size = statSync(file).size;
  if (size <= offset) return { text: '', next: size < offset ? 0 : offset };
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(Math.min(size - offset, 4 << 20));
    const n = readSync(fd, buf, 0, buf.length, offset);
    // Stop at the last whole UTF-8 character; the rest comes with the next read.
    let end = n;
    while (end > 0 && (buf[end - 1] & 0xc0) === 0x80) end--;
    if (end > 0 && buf[end - 1] >= 0xc0) end--;
    if (end === 0) end = n;
    return { text: buf.subarray(0, end).toString('utf8'), next: offset + end };
  } finally {
    closeSync(fd);
  }
}
