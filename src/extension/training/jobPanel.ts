// The job panel's host side: one panel per job, following the job's folder while it is open — job.json's state (asked
// of the target through app/jobs), the metrics files (app/jobs/jobFiles: only appended bytes are read), the stdout and
// stderr tails, the checkpoint list — once a second while the job (or the one overlaid) runs, and posting what
// changed. Every message from the webview is checked before it is acted on. The panel comes back after a reload.
import { jobStore } from './jobStore';
import * as vscode from 'vscode';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Services } from '../services';
import { webviewHtml, webviewOptions } from '../webviews/html';
import { preparePanel } from '../webviews/restore';
import { checkMessage } from '../../protocol/validate';
import {
  JOB_PANEL_RULES,
  jobPanelMessageProblem,
  jobPanelRestore,
  type CheckpointInfo,
  type JobHeader,
  type LogStream,
  type ToApp,
  type ToHost,
} from '../../protocol/jobPanel';
import { FINAL_STATUSES, type JobRecord } from '../../core/training/jobs/job';
import { type JobStore, readLog, refreshJob } from '../../app/jobs';
import { JobMetrics, jobCheckpoints } from '../../app/jobs/jobFiles';
import { isTrusted } from '../trust';

export const JOB_PANEL_VIEW = 'quarry.jobPanel';
/** How much of a log the panel shows when it opens. */
const LOG_TAIL_BYTES = 64 * 1024;
const POLL_MS = 1000;

interface JobPanelTestLog {
  posted: Array<{ jobId: string; message: ToApp }>;
  rejected: string[];
}

interface Followed {
  job: JobRecord;
  metrics: JobMetrics;
}

export class JobPanel {
  static readonly open = new Map<string, JobPanel>();
  static testLog: JobPanelTestLog | undefined;

  private main: Followed;
  private overlay: Followed | null = null;
  private logOffsets: Record<LogStream, number> = { stdout: 0, stderr: 0 };
  private checkpoints: CheckpointInfo[] = [];
  private others: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private disposed = false;

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    context: vscode.ExtensionContext,
    private readonly services: Services,
    private readonly store: JobStore,
    job: JobRecord,
  ) {
    this.main = { job, metrics: new JobMetrics(job, store.dir(job.id)) };
    panel.title = `Job: ${job.name}`;
    panel.webview.html = webviewHtml(panel.webview, context.extensionUri, 'jobs', `Quarry job ${job.name}`);
    panel.onDidDispose(() => {
      this.disposed = true;
      if (this.timer) clearInterval(this.timer);
      if (JobPanel.open.get(job.id) === this) JobPanel.open.delete(job.id);
    });
    panel.webview.onDidReceiveMessage((raw: unknown) => {
      void this.receive(raw);
    });
    JobPanel.open.set(job.id, this);
  }

  get jobId(): string {
    return this.main.job.id;
  }

  /** Opens (or reveals) the panel of a job in the workspace `ws`. */
  static async show(context: vscode.ExtensionContext, services: Services, ws: string, id: string): Promise<JobPanel> {
    const cur = JobPanel.open.get(id);
    if (cur && !cur.disposed) {
      cur.panel.reveal(undefined, false);
      return cur;
    }
    const store = jobStore(ws);
    const job = store.get(id);
    // After a window reload VS Code brings a hidden panel back only when its tab is shown, so the job may still have
    // a tab that no JobPanel follows yet: close it rather than leave two tabs for one job.
    const stale = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter(
        (t) =>
          t.input instanceof vscode.TabInputWebview &&
          t.input.viewType.endsWith(JOB_PANEL_VIEW) &&
          t.label === `Job: ${job.name}`,
      );
    if (stale.length > 0) await vscode.window.tabGroups.close(stale);
    const panel = vscode.window.createWebviewPanel(
      JOB_PANEL_VIEW,
      `Job: ${job.name}`,
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
      { ...webviewOptions(context.extensionUri), retainContextWhenHidden: false },
    );
    panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icons', 'quarry.svg');
    return new JobPanel(panel, context, services, store, job);
  }

  /** After a window reload: the same job (and overlay) again, read from its folder. */
  static async revive(
    panel: vscode.WebviewPanel,
    context: vscode.ExtensionContext,
    services: Services,
    state: unknown,
  ): Promise<string | null> {
    preparePanel(panel, context.extensionUri);
    const saved = jobPanelRestore(state);
    const ws = services.workspaceDir();
    if (!ws) {
      panel.dispose();
      return 'no workspace folder is open';
    }
    const store = jobStore(ws);
    let job: JobRecord;
    try {
      // Without a saved state (a reload before the webview stored one), the panel's own title names the job, when
      // exactly one job has that name.
      const byTitle = store.list().filter((j) => `Job: ${j.name}` === panel.title);
      if (saved.ok) job = store.get(saved.value.jobId);
      else if (byTitle.length === 1) job = byTitle[0];
      else throw new Error(saved.error);
    } catch (err) {
      panel.dispose();
      return (err as Error).message;
    }
    const revived = new JobPanel(panel, context, services, store, job);
    if (saved.ok && saved.value.overlayId) revived.setOverlay(saved.value.overlayId);
    return null;
  }

  close(): void {
    this.panel.dispose();
  }

  private post(message: ToApp): void {
    JobPanel.testLog?.posted.push({ jobId: this.jobId, message });
    void this.panel.webview.postMessage(message);
  }

  private header(f: Followed): JobHeader {
    const j = f.job;
    return {
      id: j.id,
      name: j.name,
      status: j.status,
      target: j.target,
      engine: j.engine,
      recipe: j.recipe,
      model: j.model,
      data: j.data,
      command: j.command.join(' '),
      createdAt: j.createdAt,
      startedAt: j.startedAt,
      endedAt: j.endedAt,
      exitCode: j.exitCode,
      reason: j.reason,
      latestStep: f.metrics.latestStep(),
      metricsFiles: f.metrics.sources(),
    };
  }

  private postJob(): void {
    const jobs = this.store.list().filter((j) => j.id !== this.jobId);
    this.others = jobs.map((j) => j.id);
    this.post({
      type: 'job',
      job: this.header(this.main),
      others: jobs.map((j) => ({ id: j.id, label: `${j.name} (${j.status}, ${j.id})` })),
    });
  }

  /** Everything, from the start (a new or restored webview said `ready`). */
  private sendAll(): void {
    this.main.metrics.read();
    this.postJob();
    this.post({ type: 'metrics', which: 'main', rows: this.main.metrics.all(), reset: true });
    if (this.overlay) {
      this.overlay.metrics.read();
      this.post({ type: 'overlay', job: this.header(this.overlay) });
      this.post({ type: 'metrics', which: 'overlay', rows: this.overlay.metrics.all(), reset: true });
    } else this.post({ type: 'overlay', job: null });
    const dir = this.store.dir(this.jobId);
    for (const stream of ['stdout', 'stderr'] as const) {
      const file = join(dir, `${stream}.log`);
      const size = existsSync(file) ? statSync(file).size : 0;
      const start = Math.max(0, size - LOG_TAIL_BYTES);
      const { text, next } = readLog(this.store, this.jobId, stream, start);
      this.logOffsets[stream] = next;
      this.post({ type: 'log', stream, text: start > 0 ? text.slice(text.indexOf('\n') + 1) : text, reset: true });
    }
    this.checkpoints = this.readCheckpoints();
    this.post({ type: 'checkpoints', checkpoints: this.checkpoints });
    this.schedule();
  }

  private readCheckpoints(): CheckpointInfo[] {
    return jobCheckpoints(this.main.job, this.store.dir(this.jobId)).map((c) => ({
      name: c.name,
      path: c.path,
      step: c.step,
      engine: c.engine,
      loadable: c.loadable,
      note: c.note,
    }));
  }

  private running(): boolean {
    const live = (j: JobRecord) => !FINAL_STATUSES.includes(j.status);
    return live(this.main.job) || (this.overlay !== null && live(this.overlay.job));
  }

  /** Polls while a job shown runs; a last poll after it ends picks up its final lines. */
  private schedule(): void {
    if (this.timer || this.disposed) return;
    this.timer = setInterval(() => void this.tick(), POLL_MS);
  }

  /** One look at the folders: what changed is posted. */
  async tick(): Promise<void> {
    if (this.ticking || this.disposed) return;
    this.ticking = true;
    try {
      const wasRunning = this.running();
      const before = JSON.stringify(this.header(this.main));
      // Untrusted: the record as written (asking its target waits until the folder is trusted).
      this.main.job = isTrusted()
        ? await refreshJob(this.store, this.jobId).catch(() => this.main.job)
        : this.store.get(this.jobId);
      const m = this.main.metrics.read();
      if (m.changed.length > 0 || m.restarted) {
        this.post({ type: 'metrics', which: 'main', rows: m.changed, reset: false });
      }
      if (JSON.stringify(this.header(this.main)) !== before) this.postJob();
      for (const stream of ['stdout', 'stderr'] as const) {
        const { text, next } = readLog(this.store, this.jobId, stream, this.logOffsets[stream]);
        const reset = next < this.logOffsets[stream];
        this.logOffsets[stream] = next;
        if (text || reset) this.post({ type: 'log', stream, text, reset });
      }
      const cps = this.readCheckpoints();
      if (JSON.stringify(cps) !== JSON.stringify(this.checkpoints)) {
        this.checkpoints = cps;
        this.post({ type: 'checkpoints', checkpoints: cps });
      }
      if (this.overlay) {
        const o = this.overlay;
        o.job = isTrusted() ? await refreshJob(this.store, o.job.id).catch(() => o.job) : this.store.get(o.job.id);
        const r = o.metrics.read();
        if (r.changed.length > 0) this.post({ type: 'metrics', which: 'overlay', rows: r.changed, reset: false });
      }
      if (!wasRunning && !this.running() && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    } catch (err) {
      this.services.log.error(`job panel ${this.jobId}: cannot read the job's folder`, err);
    } finally {
      this.ticking = false;
    }
  }

  private setOverlay(id: string): void {
    if (id === '') {
      this.overlay = null;
      this.post({ type: 'overlay', job: null });
      return;
    }
    const job = this.store.get(id);
    this.overlay = { job, metrics: new JobMetrics(job, this.store.dir(id)) };
    this.overlay.metrics.read();
    this.post({ type: 'overlay', job: this.header(this.overlay) });
    this.post({ type: 'metrics', which: 'overlay', rows: this.overlay.metrics.all(), reset: true });
    this.schedule();
  }

  async receive(raw: unknown): Promise<void> {
    const checked = checkMessage<ToHost>(raw, JOB_PANEL_RULES);
    const problem = checked.ok
      ? jobPanelMessageProblem(checked.message, {
          jobs: this.others,
          checkpoints: this.checkpoints.map((c) => c.path),
        })
      : checked.error;
    if (!checked.ok || problem) {
      JobPanel.testLog?.rejected.push(problem ?? 'invalid');
      this.services.log.warn(`job panel: ignored a message from the webview: ${problem}`);
      return;
    }
    const msg = checked.message;
    try {
      switch (msg.type) {
        case 'ready':
          this.sendAll();
          return;
        case 'setOverlay':
          this.setOverlay(msg.id);
          return;
        case 'cancel':
          await vscode.commands.executeCommand('quarry.cancelJob', this.jobId);
          await this.tick();
          return;
        case 'openLogs': {
          const file = join(this.store.dir(this.jobId), `${msg.stream}.log`);
          if (existsSync(file)) await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
          else this.post({ type: 'error', text: `The job has no ${msg.stream}.log yet.` });
          return;
        }
        case 'openFolder':
          await vscode.commands.executeCommand('quarry.openJobFolder', this.jobId);
          return;
        case 'revealCheckpoint':
          await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(msg.path));
          return;
        case 'loadCheckpoint':
          await vscode.commands.executeCommand('quarry.loadCheckpoint', { checkpoint: msg.path, jobId: this.jobId });
          return;
      }
    } catch (err) {
      this.services.log.error(`job panel ${this.jobId}: ${msg.type} failed`, err);
      this.post({ type: 'error', text: `${msg.type} failed: ${(err as Error).message}` });
    }
  }
}
