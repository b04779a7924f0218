// Where a job's metrics and checkpoints are, and following them: the job folder's out/ (where a run writes, and where
// remote targets pull to), the launch's own folder (`cwd`, where `quarry train` launches write), and verl's file logger
// at the job's VERL_FILE_LOGGER_PATH. The CLI, the Jobs view, the status bar and the job panel all read through here.
import { isAbsolute, join, resolve } from 'node:path';
import type { JobRecord } from '../../core/training/jobs/job';
import { MetricsFollower, type MetricRow } from '../../core/training/metricsReader';
import { findCheckpoints, type FoundCheckpoint } from '../../core/training/checkpoints';

/** The folders a job's run writes into: out/ in the job folder, then the launch folder when it has one. */
export function jobOutputDirs(job: JobRecord, dir: string): string[] {
  const out = [join(dir, 'out')];
  if (job.cwd) out.push(isAbsolute(job.cwd) ? job.cwd : resolve(dir, job.cwd));
  return [...new Set(out)];
}

/** The metrics files a job may write, whether they exist yet or not. */
export function jobMetricsFiles(job: JobRecord, dir: string): string[] {
  const files = jobOutputDirs(job, dir).map((d) => join(d, 'metrics.jsonl'));
  const verl = job.env.VERL_FILE_LOGGER_PATH;
  if (verl) files.push(isAbsolute(verl) ? verl : resolve(job.cwd ? resolve(dir, job.cwd) : dir, verl));
  return [...new Set(files)];
}

/** Every checkpoint in the job's output folders. */
export function jobCheckpoints(job: JobRecord, dir: string): FoundCheckpoint[] {
  const seen = new Set<string>();
  const out: FoundCheckpoint[] = [];
  for (const d of jobOutputDirs(job, dir)) {
    for (const c of findCheckpoints(d)) {
      if (seen.has(c.path)) continue;
      seen.add(c.path);
      out.push(c);
    }
  }
  return out.sort((a, b) => a.step - b.step);
}

/** Follows all of a job's metrics files at once; rows of the same step from different files merge. */
export class JobMetrics {
  private readonly followers: MetricsFollower[];

  constructor(job: JobRecord, dir: string) {
    this.followers = jobMetricsFiles(job, dir).map((f) => new MetricsFollower(f));
  }

  /** What is new since the last read: the changed rows (whole), and whether any file was rewritten. */
  read(): { changed: MetricRow[]; restarted: boolean } {
    const steps = new Set<number>();
    let restarted = false;
    for (const f of this.followers) {
      const r = f.read();
      restarted ||= r.restarted;
      for (const row of r.changed) steps.add(row.step);
    }
    if (steps.size === 0) return { changed: [], restarted };
    const all = this.all();
    return { changed: all.filter((r) => steps.has(r.step)), restarted };
  }

  /** Every row read so far, in step order. */
  all(): MetricRow[] {
    const merged = new Map<number, Record<string, number>>();
    for (const f of this.followers) {
      for (const r of f.all()) merged.set(r.step, { ...(merged.get(r.step) ?? {}), ...r.values });
    }
    return [...merged.entries()].sort((a, b) => a[0] - b[0]).map(([step, values]) => ({ step, values }));
  }

  latestStep(): number | null {
    let max: number | null = null;
    for (const f of this.followers) {
      const s = f.latestStep();
      if (s !== null && (max === null || s > max)) max = s;
    }
    return max;
  }

  /** The files followed, and the format each was read as (null: nothing read from it yet). */
  sources(): Array<{ file: string; format: string | null }> {
    return this.followers.map((f) => ({ file: f.file, format: f.format }));
  }
}
