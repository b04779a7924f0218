// The Jobs view: every training job in the workspace's .quarry/jobs/ (the folders `quarry jobs` writes too), with its
// state, target, elapsed time and latest step from metrics.jsonl, refreshed while any job runs; and the commands on a
// job: Cancel Job, Open Job Logs, Open Job Folder, Show Training Jobs. A job that ends says so in a notification
// (with the log's last lines when it failed). A window reload finds the same folders, so jobs stay followed.
import * as vscode from 'vscode';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Services } from '../services';
import type { JobRecord } from '../../core/training/jobs/job';

const ICONS: Record<string, string> = {
  staged: 'circle-outline',
  running: 'sync~spin',
  succeeded: 'pass',
  failed: 'error',
  cancelled: 'circle-slash',
  lost: 'question',
};

/** The last metrics row of a job (its `out/metrics.jsonl`), or null. */
function latestMetrics(dir: string): Record<string, unknown> | null {
  const file = join(dir, 'out', 'metrics.jsonl');
  if (!existsSync(file)) return null;
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      return JSON.parse(lines[i]) as Record<string, unknown>;
    } catch {
      /* a line being written */
    }
  }
  return null;
}

function elapsed(job: JobRecord): string {
  if (!job.startedAt) return '';
  const s = Math.round(((job.endedAt ? Date.parse(job.endedAt) : Date.now()) - Date.parse(job.startedAt)) / 1000);
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
}

export class JobItem extends vscode.TreeItem {
  constructor(
    readonly job: JobRecord,
    readonly dir: string,
  ) {
    super(job.name, vscode.TreeItemCollapsibleState.None);
    const m = latestMetrics(dir);
    const step = typeof m?.step === 'number' ? `step ${m.step}` : '';
    this.id = job.id;
    this.description = [job.status, job.target, elapsed(job), step].filter(Boolean).join(' · ');
    this.tooltip = new vscode.MarkdownString(
      [
        `**${job.name}** (${job.id})`,
        `status: ${job.status}${job.exitCode !== null ? ` (exit ${job.exitCode})` : ''}`,
        `target: ${job.target}`,
        job.engine ? `engine: ${job.engine}` : '',
        job.reason ? `reason: ${job.reason}` : '',
        `command: \`${job.command.join(' ')}\``,
      ]
        .filter(Boolean)
        .join('\n\n'),
    );
    this.iconPath = new vscode.ThemeIcon(ICONS[job.status] ?? 'circle-outline');
    this.contextValue = job.status === 'running' ? 'quarry.job.running' : 'quarry.job';
    this.command = { command: 'quarry.openJobLogs', title: 'Open Job Logs', arguments: [this] };
  }
}

export class JobsTree implements vscode.TreeDataProvider<JobItem> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private timer: NodeJS.Timeout | undefined;
  private seen = new Map<string, string>();

  constructor(
    private readonly services: Services,
    private readonly notify: (job: JobRecord, dir: string) => void,
  ) {}

  refresh(): void {
    this.changed.fire();
  }

  async getChildren(): Promise<JobItem[]> {
    const ws = this.services.workspaceDir();
    if (!ws) return [];
    const { JobStore, refreshJob } = await import('../../app/jobs');
    const store = new JobStore(ws);
    const jobs = await Promise.all(store.list().map((j) => refreshJob(store, j.id).catch(() => j)));
    for (const j of jobs) {
      const before = this.seen.get(j.id);
      if (before === 'running' && j.status !== 'running') this.notify(j, store.dir(j.id));
      this.seen.set(j.id, j.status);
    }
    this.schedule(jobs.some((j) => j.status === 'running'));
    return jobs.map((j) => new JobItem(j, store.dir(j.id)));
  }

  getTreeItem(item: JobItem): vscode.TreeItem {
    return item;
  }

  /** While a job runs the view refreshes every 2 s; it stops when none does. */
  private schedule(running: boolean): void {
    if (running && !this.timer) this.timer = setInterval(() => this.refresh(), 2000);
    if (!running && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.changed.dispose();
  }
}

function pickJob(services: Services, arg: unknown): Promise<{ job: JobRecord; dir: string } | undefined> {
  if (arg instanceof JobItem) return Promise.resolve({ job: arg.job, dir: arg.dir });
  return (async () => {
    const ws = services.workspaceDir();
    if (!ws) {
      void vscode.window.showErrorMessage('Open a folder first: jobs live in its .quarry/jobs/.');
      return undefined;
    }
    const { JobStore } = await import('../../app/jobs');
    const store = new JobStore(ws);
    const id = typeof arg === 'string' ? arg : undefined;
    if (id) return { job: store.get(id), dir: store.dir(id) };
    const jobs = store.list();
    if (jobs.length === 0) {
      void vscode.window.showInformationMessage('No training jobs in this workspace yet.');
      return undefined;
    }
    const chosen = await vscode.window.showQuickPick(
      jobs.map((j) => ({ label: j.name, description: `${j.status} · ${j.target}`, detail: j.id, job: j })),
      { title: 'Quarry: choose a job' },
    );
    return chosen ? { job: chosen.job, dir: store.dir(chosen.job.id) } : undefined;
  })();
}

export function registerJobsView(context: vscode.ExtensionContext, services: Services): JobsTree {
  const tree = new JobsTree(services, (job, dir) => {
    if (job.status === 'succeeded') void vscode.window.showInformationMessage(`Quarry: job ${job.name} finished.`);
    else if (job.status === 'failed' || job.status === 'lost') {
      let tail = '';
      try {
        tail = readFileSync(join(dir, 'stderr.log'), 'utf8').trimEnd().split('\n').slice(-3).join('\n');
      } catch {
        /* none */
      }
      void vscode.window
        .showErrorMessage(
          `Quarry: job ${job.name} ${job.status}: ${job.reason ?? ''}${tail ? `\n${tail}` : ''}`,
          'Open Logs',
        )
        .then((a) => {
          if (a) void vscode.commands.executeCommand('quarry.openJobLogs', job.id);
        });
    }
  });
  const view = vscode.window.createTreeView('quarry.jobs', { treeDataProvider: tree });
  const watcher = vscode.workspace.createFileSystemWatcher('**/.quarry/jobs/*/job.json');
  context.subscriptions.push(
    tree,
    view,
    watcher,
    watcher.onDidCreate(() => tree.refresh()),
    watcher.onDidChange(() => tree.refresh()),
    watcher.onDidDelete(() => tree.refresh()),
    vscode.commands.registerCommand('quarry.refreshJobs', () => tree.refresh()),
    vscode.commands.registerCommand('quarry.showJobs', async () => {
      await vscode.commands.executeCommand('quarry.jobs.focus');
      tree.refresh();
    }),
    vscode.commands.registerCommand('quarry.cancelJob', async (arg?: unknown) => {
      const picked = await pickJob(services, arg);
      if (!picked) return undefined;
      const ws = services.workspaceDir()!;
      const { JobStore, cancelJob } = await import('../../app/jobs');
      const done = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Cancelling ${picked.job.name}…` },
        () => cancelJob(new JobStore(ws), picked.job.id),
      );
      tree.refresh();
      return done;
    }),
    vscode.commands.registerCommand('quarry.openJobLogs', async (arg?: unknown) => {
      const picked = await pickJob(services, arg);
      if (!picked) return;
      const file = join(picked.dir, 'stdout.log');
      if (!existsSync(file)) {
        void vscode.window.showInformationMessage(`Job ${picked.job.name} has no log yet.`);
        return;
      }
      await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
    }),
    vscode.commands.registerCommand('quarry.openJobFolder', async (arg?: unknown) => {
      const picked = await pickJob(services, arg);
      if (picked) await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(picked.dir));
    }),
  );
  return tree;
}
