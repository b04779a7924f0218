// Watching the workspace's jobs in the background, whether or not the Jobs view is open: every 2 s while a job runs
// (and once when a job.json changes) it asks each unfinished job's target for its state, follows its metrics for the
// latest step, and looks for new checkpoints. It keeps the status bar item ("2 jobs · step 40"), tells the user when
// a job ends, fails (in one line: the exception that ended it) or writes a checkpoint, and tells the Jobs view to
// redraw. After a window reload it starts from the folders again: what was already there when it first looks is not
// announced.
import { jobStore } from './jobStore';
import * as vscode from 'vscode';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Log, Services } from '../services';
import { FINAL_STATUSES, type JobRecord } from '../../core/training/jobs/job';
import { refreshJob } from '../../app/jobs';
import { JobMetrics, jobCheckpoints } from '../../app/jobs/jobFiles';
import { failureLogEntry, failureNotice, jobFailureSummary } from '../../app/jobs/failure';
import { isTrusted } from '../trust';

const JOBS_STATUS_ID = 'quarry.jobs.status';
const POLL_MS = 2000;

type JobEvent =
  | { kind: 'ended'; job: JobRecord }
  | { kind: 'failed'; job: JobRecord; tail: string; summary: string; dir: string }
  | { kind: 'checkpoint'; job: JobRecord; name: string; step: number };

/** The last lines of a job's stderr (else stdout), for a failure message. */
function logTail(dir: string, lines = 5): string {
  for (const f of ['stderr.log', 'stdout.log']) {
    try {
      const t = readFileSync(join(dir, f), 'utf8').trimEnd();
      if (t) return t.split('\n').slice(-lines).join('\n');
    } catch {
      /* no such log */
    }
  }
  return '';
}

export class JobsMonitor implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires after a look at the jobs (the Jobs view redraws). */
  readonly onDidChange = this.changed.event;
  private readonly eventEmitter = new vscode.EventEmitter<JobEvent>();
  readonly onDidEvent = this.eventEmitter.event;
  readonly statusItem: vscode.StatusBarItem;
  private timer: NodeJS.Timeout | undefined;
  private busy: Promise<void> | null = null;
  private jobs: JobRecord[] = [];
  private readonly metrics = new Map<string, JobMetrics>();
  private readonly status = new Map<string, string>();
  private readonly checkpoints = new Map<string, Set<string>>();
  /** Every event so far (tests read it). */
  readonly events: JobEvent[] = [];

  constructor(private readonly services: Services) {
    this.statusItem = vscode.window.createStatusBarItem(JOBS_STATUS_ID, vscode.StatusBarAlignment.Left, 50);
    this.statusItem.name = 'Quarry Training Jobs';
    this.statusItem.command = 'quarry.showJobs';
  }

  /** The jobs as last read, newest first. */
  list(): JobRecord[] {
    return this.jobs;
  }

  latestStep(id: string): number | null {
    return this.metrics.get(id)?.latestStep() ?? null;
  }

  /** Looks now (one look at a time; a caller during a look waits for it). */
  poke(): Promise<void> {
    this.busy ??= this.look().finally(() => {
      this.busy = null;
    });
    return this.busy;
  }

  private async look(): Promise<void> {
    const ws = this.services.workspaceDir();
    if (!ws) return;
    const store = jobStore(ws);
    const listed = store.list();
    const jobs: JobRecord[] = [];
    // In an untrusted workspace the records are shown as written: asking a job's target (ssh, Slurm, Ray, a pid) waits
    // until the folder is trusted (the Jobs view looks again then).
    const follow = isTrusted();
    for (const j of listed) {
      const fresh = FINAL_STATUSES.includes(j.status) || !follow ? j : await refreshJob(store, j.id).catch(() => j);
      jobs.push(fresh);
      const dir = store.dir(j.id);
      let m = this.metrics.get(j.id);
      const first = !this.status.has(j.id);
      if (!m) this.metrics.set(j.id, (m = new JobMetrics(fresh, dir)));
      if (first || !FINAL_STATUSES.includes(fresh.status) || this.status.get(j.id) !== fresh.status) m.read();
      // Checkpoints: new names after the first look are news.
      if (first || fresh.status === 'running' || this.status.get(j.id) !== fresh.status) {
        const names = new Set(jobCheckpoints(fresh, dir).map((c) => `${c.step}\t${c.name}`));
        const before = this.checkpoints.get(j.id);
        if (before && !first) {
          for (const n of names) {
            if (before.has(n)) continue;
            const [step, name] = n.split('\t');
            this.emit({ kind: 'checkpoint', job: fresh, name, step: Number(step) });
          }
        }
        this.checkpoints.set(j.id, names);
      }
      const was = this.status.get(j.id);
      if (was === 'running' && fresh.status !== 'running') {
        if (fresh.status === 'succeeded') this.emit({ kind: 'ended', job: fresh });
        else if (fresh.status === 'failed' || fresh.status === 'lost') {
          this.emit({ kind: 'failed', job: fresh, tail: logTail(dir), summary: jobFailureSummary(dir), dir });
        }
      }
      this.status.set(j.id, fresh.status);
    }
    this.jobs = jobs;
    this.updateStatusItem();
    this.changed.fire();
    this.schedule(follow && jobs.some((j) => j.status === 'running'));
  }

  private emit(e: JobEvent): void {
    this.events.push(e);
    this.eventEmitter.fire(e);
  }

  private updateStatusItem(): void {
    const running = this.jobs.filter((j) => j.status === 'running');
    if (running.length === 0) {
      this.statusItem.hide();
      return;
    }
    const steps = running.map((j) => this.latestStep(j.id)).filter((s): s is number => s !== null);
    const newest = running[0];
    const step = this.latestStep(newest.id);
    const followed = isTrusted();
    const icon = followed ? 'sync~spin' : 'workspace-untrusted';
    this.statusItem.text =
      `$(${icon}) ${running.length === 1 ? '1 job' : `${running.length} jobs`}` +
      (step !== null ? ` · step ${step}` : steps.length ? ` · step ${Math.max(...steps)}` : '');
    this.statusItem.tooltip = new vscode.MarkdownString(
      running
        .map(
          (j) =>
            `**${j.name}** on ${j.target}${this.latestStep(j.id) !== null ? `: step ${this.latestStep(j.id)}` : ''}`,
        )
        .join('\n\n') +
        (followed ? '' : '\n\nAs last recorded: not followed while the folder is untrusted.') +
        '\n\nClick to show the Training Jobs view.',
    );
    this.statusItem.accessibilityInformation = {
      label: `${running.length} Quarry training job(s) running. Show training jobs`,
      role: 'button',
    };
    this.statusItem.show();
  }

  private schedule(running: boolean): void {
    if (running && !this.timer) this.timer = setInterval(() => void this.poke(), POLL_MS);
    if (!running && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.statusItem.dispose();
    this.changed.dispose();
    this.eventEmitter.dispose();
  }
}

/** The notifications a job's events raise. */
export function notifyJobEvents(monitor: JobsMonitor, log: Pick<Log, 'error'>): vscode.Disposable {
  return monitor.onDidEvent((e) => {
    const name = e.job.name;
    if (e.kind === 'ended') {
      void vscode.window.showInformationMessage(`Quarry: job ${name} finished.`, 'Show Job').then((a) => {
        if (a) void vscode.commands.executeCommand('quarry.openJobPanel', e.job.id);
      });
    } else if (e.kind === 'failed') {
      // The Quarry log keeps what failed and the log's last lines after the notification is gone.
      log.error(failureLogEntry(e.job, e.summary, e.tail, e.dir));
      // One line: what failed (the exception's type and message), the log one click away.
      void vscode.window.showErrorMessage(failureNotice(e.job, e.summary), 'Show Log').then((a) => {
        if (a) void vscode.commands.executeCommand('quarry.openJobLogs', e.job.id);
      });
    } else {
      void vscode.window.showInformationMessage(`Quarry: job ${name} saved checkpoint ${e.name} (step ${e.step}).`);
    }
  });
}
