// The Jobs view: every training job in the workspace's .quarry/jobs/ (the folders `quarry jobs` writes too), with its
// state, target, elapsed time and latest step (from its metrics, read by the JobsMonitor, which also refreshes the view
// while any job runs, keeps the status bar item and raises the notifications); and the commands on a job: Show Job
// (the job panel), Cancel Job, Open Job Logs, Open Job Folder, Show Training Jobs. A window reload finds the same
// folders, so jobs stay followed.
import { jobStore, registerJobStore } from './jobStore';
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Services } from '../services';
import { FINAL_STATUSES, type JobRecord } from '../../core/training/jobs/job';
import { QUARRY_LAYOUT } from '../../core/workspace/quarryLayout';
import { JobsMonitor, notifyJobEvents } from './jobsMonitor';
import { JobPanel } from '../jobs/panel';
import { registerTrainWizard } from './trainWizard';
import { isTrusted, onDidGrantTrust, requireTrust } from '../trust';

const ICONS: Record<string, string> = {
  staged: 'circle-outline',
  running: 'sync~spin',
  succeeded: 'pass',
  failed: 'error',
  cancelled: 'circle-slash',
  lost: 'question',
};

function elapsed(job: JobRecord): string {
  if (!job.startedAt) return '';
  const s = Math.round(((job.endedAt ? Date.parse(job.endedAt) : Date.now()) - Date.parse(job.startedAt)) / 1000);
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
}

class JobItem extends vscode.TreeItem {
  constructor(
    readonly job: JobRecord,
    readonly dir: string,
    latestStep: number | null,
    /** False in an untrusted workspace: an unfinished job's status is as last recorded, its target not asked. */
    followed = true,
  ) {
    super(job.name, vscode.TreeItemCollapsibleState.None);
    const step = latestStep !== null ? `step ${latestStep}` : '';
    const stale = !followed && !FINAL_STATUSES.includes(job.status) ? 'not followed: folder untrusted' : '';
    this.id = job.id;
    this.description = [job.status, job.target, elapsed(job), step, stale].filter(Boolean).join(' · ');
    this.tooltip = new vscode.MarkdownString(
      [
        `**${job.name}** (${job.id})`,
        `status: ${job.status}${job.exitCode !== null ? ` (exit ${job.exitCode})` : ''}`,
        `target: ${job.target}`,
        job.engine ? `engine: ${job.engine}` : '',
        job.reason ? `reason: ${job.reason}` : '',
        stale ? 'status as last recorded: its target is asked once the folder is trusted' : '',
        `command: \`${job.command.join(' ')}\``,
      ]
        .filter(Boolean)
        .join('\n\n'),
    );
    this.iconPath = new vscode.ThemeIcon(stale ? 'workspace-untrusted' : (ICONS[job.status] ?? 'circle-outline'));
    this.contextValue = job.status === 'running' ? 'quarry.job.running' : 'quarry.job';
    this.command = { command: 'quarry.openJobPanel', title: 'Show Job', arguments: [this] };
  }
}

export class JobsTree implements vscode.TreeDataProvider<JobItem> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sub: vscode.Disposable;

  constructor(
    private readonly services: Services,
    readonly monitor: JobsMonitor,
  ) {
    this.sub = monitor.onDidChange(() => this.changed.fire());
  }

  /** Looks at the jobs again (the view redraws when the look is done). */
  refresh(): void {
    void this.monitor.poke();
  }

  async getChildren(): Promise<JobItem[]> {
    const ws = this.services.workspaceDir();
    if (!ws) return [];
    if (this.monitor.list().length === 0) await this.monitor.poke();
    const store = jobStore(ws);
    const followed = isTrusted();
    return this.monitor.list().map((j) => new JobItem(j, store.dir(j.id), this.monitor.latestStep(j.id), followed));
  }

  getTreeItem(item: JobItem): vscode.TreeItem {
    return item;
  }

  dispose(): void {
    this.sub.dispose();
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
    const store = jobStore(ws);
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
  registerJobStore(context);
  const monitor = new JobsMonitor(services);
  const tree = new JobsTree(services, monitor);
  const view = vscode.window.createTreeView('quarry.jobs', { treeDataProvider: tree });
  const watcher = vscode.workspace.createFileSystemWatcher(`**/${QUARRY_LAYOUT.jobs}/*/job.json`);
  context.subscriptions.push(
    monitor,
    notifyJobEvents(monitor, services.log),
    tree,
    view,
    watcher,
    watcher.onDidCreate(() => tree.refresh()),
    watcher.onDidChange(() => tree.refresh()),
    watcher.onDidDelete(() => tree.refresh()),
    // Trusted now: the jobs' targets may be asked (the monitor only read their records until then).
    onDidGrantTrust(() => tree.refresh()),
    vscode.commands.registerCommand('quarry.refreshJobs', () => tree.refresh()),
    vscode.commands.registerCommand('quarry.showJobs', async () => {
      await vscode.commands.executeCommand('quarry.jobs.focus');
      await monitor.poke();
    }),
    vscode.commands.registerCommand('quarry.openJobPanel', async (arg?: unknown) => {
      const picked = await pickJob(services, arg);
      if (!picked) return undefined;
      return (await JobPanel.show(context, services, services.workspaceDir()!, picked.job.id)).jobId;
    }),
    vscode.commands.registerCommand('quarry.cancelJob', async (arg?: unknown) => {
      if (!requireTrust('cancelJob')) return undefined;
      const picked = await pickJob(services, arg);
      if (!picked) return undefined;
      const ws = services.workspaceDir()!;
      const { cancelJob } = await import('../../app/jobs');
      const done = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Cancelling ${picked.job.name}…` },
        () => cancelJob(jobStore(ws), picked.job.id),
      );
      await monitor.poke();
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
  // After a window reload an open job panel comes back on its job (and overlay); the monitor looks at the folders.
  // Under tests `quarry.jobs.testHook('poke')` makes the monitor look now and lists its events.
  JobPanel.register(context, services, {
    poke: async () => {
      await monitor.poke();
      return { statusText: monitor.statusItem.text, events: JSON.parse(JSON.stringify(monitor.events)) as unknown };
    },
  });
  registerTrainWizard(context, services);
  void monitor.poke();
  return tree;
}
