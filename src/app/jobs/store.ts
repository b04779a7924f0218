// The jobs folder, `.quarry/jobs/` in the workspace: one folder per job with job.json (written whole: a temporary file
// renamed over it, so a reader never sees half a record), the launch as run, its logs (stdout.log, stderr.log), its
// exit code when it ends (exit_code), and out/ where the run writes metrics.jsonl and checkpoints.
// Several processes write one job.json (the submitter, `quarry jobs list` in a terminal, the editor's monitor), so a
// change is made with update(): under the folder's lock file it re-reads the record as it is now and changes that;
// each write bumps the record's `rev`, so a writer that decided from an older read can see it and leave the newer
// record alone.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TargetsConfig } from '../../core/training/jobs/targets';
import { jobRecordProblem, type JobRecord } from '../../core/training/jobs/job';
import { writeJsonAtomicSync } from '../../core/util/atomicWrite';
import { quarryPath } from '../../core/workspace/quarryLayout';
import { underFolderLock } from './targets/pullLock';

const LOCK_FILE = 'job.lock';

interface JobStoreOptions {
  /** Targets from the editor's `quarry.targets` setting, over the workspace's .quarry/targets.json. */
  targets?: TargetsConfig;
  /** Where a secret's value comes from (the editor's SecretStorage); default: this process's environment. */
  secret?: (name: string) => Promise<string | undefined>;
}

export class JobStore {
  readonly root: string;

  constructor(
    readonly workspace: string,
    readonly options: JobStoreOptions = {},
  ) {
    this.root = quarryPath(workspace, 'jobs');
  }

  dir(id: string): string {
    if (!/^[\w.-]+$/.test(id)) throw new Error(`not a job id: ${JSON.stringify(id)}`);
    return join(this.root, id);
  }

  /** Makes the job's folder and writes its first record (rev 1); refuses an id already taken. */
  create(job: JobRecord): string {
    const dir = this.dir(job.id);
    mkdirSync(this.root, { recursive: true });
    mkdirSync(dir);
    mkdirSync(join(dir, 'out'));
    job.rev = 1;
    underFolderLock(dir, LOCK_FILE, 'another process is writing job.json', () => this.write(job));
    return dir;
  }

  /**
   * Changes the record as it is now, under the folder's lock: `change` gets the current record (a copy) and returns
   * the new one, or null to leave it. What is written gets the next `rev`; the record as it now is comes back.
   */
  update(id: string, change: (current: JobRecord) => JobRecord | null): JobRecord {
    return underFolderLock(this.dir(id), LOCK_FILE, 'another process is writing job.json', () => {
      const current = this.get(id);
      const next = change(structuredClone(current));
      if (next === null) return current;
      next.rev = (current.rev ?? 0) + 1;
      this.write(next);
      return next;
    });
  }

  /** Writes the record over what is there, whatever it is now (tests; a record no other process writes). */
  save(job: JobRecord): void {
    job.rev = this.update(job.id, () => ({ ...job })).rev;
  }

  private write(job: JobRecord): void {
    writeJsonAtomicSync(join(this.dir(job.id), 'job.json'), job, 2);
  }

  get(id: string): JobRecord {
    const file = join(this.dir(id), 'job.json');
    if (!existsSync(file)) throw new Error(`no job ${id} in ${this.root}`);
    const job = JSON.parse(readFileSync(file, 'utf8')) as JobRecord;
    const problem = jobRecordProblem(job);
    if (problem) throw new Error(`${file}: ${problem}`);
    if (job.id !== id) throw new Error(`${file} holds job ${job.id}, not ${id}`);
    return job;
  }

  /** Every job, newest first; a folder without a readable job.json is skipped. */
  list(): JobRecord[] {
    if (!existsSync(this.root)) return [];
    const out: JobRecord[] = [];
    for (const id of readdirSync(this.root).sort().reverse()) {
      try {
        out.push(this.get(id));
      } catch {
        /* a folder being created, or not a job */
      }
    }
    return out;
  }
}
