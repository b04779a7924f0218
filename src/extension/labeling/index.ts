// Labeling: "Quarry: Label Trajectories…" opens a review queue over a trajectory file (or the workspace store);
// labels go to the workspace label store (.quarry/labels.sqlite); "Export Labeled SFT Data…" and "Export RL
// Prompts…" write training JSONL from them. The heavy parts (SQLite, the reader, the exporters) load on first use.
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Services } from '../services';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import { quarryPath } from '../../core/workspace/quarryLayout';
import type { LabelStore } from '../../core/labels/index';
import { LabelPanel, type StoreProvider } from './panel';
import { findTrajectoryFiles } from '../workspaceFiles';

// What `quarry.openLabeling` accepts from code: a path, a file Uri, or
// `{ file?: string | Uri, path?: string, id?: string, trajectory?: TrajectoryRecord }`.

/** Where this window keeps labels: the first folder's .quarry/labels.sqlite, or global storage without a folder. */
export function labelStoreFile(services: Services): string {
  const dir = services.workspaceDir();
  return dir ? quarryPath(dir, 'labels') : join(services.context.globalStorageUri.fsPath, 'labels.sqlite');
}

/** One store connection per window, shared by the panel and the exports. */
let provider: StoreProvider | null = null;

function storeProvider(context: vscode.ExtensionContext, services: Services): StoreProvider {
  if (provider) return provider;
  let opened: { path: string; store: LabelStore } | null = null;
  context.subscriptions.push({
    dispose: () => {
      opened?.store.close();
      opened = null;
      provider = null;
    },
  });
  provider = async () => {
    const path = labelStoreFile(services);
    if (opened?.path === path) return opened.store;
    const { LabelStore } = await import('../../core/labels/store');
    opened?.store.close();
    opened = { path, store: LabelStore.open(path) };
    services.log.info(`label store: ${path}`);
    return opened.store;
  };
  return provider;
}

const fsPath = (v: string | vscode.Uri): string => (typeof v === 'string' ? v : v.fsPath);

function isRecord(v: unknown): v is TrajectoryRecord {
  return (
    !!v &&
    typeof v === 'object' &&
    typeof (v as TrajectoryRecord).id === 'string' &&
    typeof (v as TrajectoryRecord).task === 'object'
  );
}

/** A trajectory handed over without a file (the Ask panel's record) is appended to the store unless it is there. */
async function fileFor(record: TrajectoryRecord, services: Services): Promise<string> {
  const { validateTrajectory } = await import('../../core/trajectories/validate');
  const problem = validateTrajectory(record);
  if (problem)
    throw new Error(`the trajectory handed to labeling is not a valid record: ${problem.field}: ${problem.message}`);
  const store = services.trajectoryStorePath();
  if (existsSync(store)) {
    const { iterateTrajectories } = await import('../../core/trajectories/reader');
    for await (const r of iterateTrajectories(store)) if (r.record.id === record.id) return store;
  }
  const [{ mkdir }, { dirname }, { TrajectoryWriter }] = await Promise.all([
    import('node:fs/promises'),
    import('node:path'),
    import('../../core/trajectories/writer'),
  ]);
  await mkdir(dirname(store), { recursive: true });
  const w = await TrajectoryWriter.open(store);
  try {
    await w.write(record);
  } finally {
    await w.close();
  }
  services.log.info(`labeling: saved trajectory ${record.id} to ${store} so its label has a file to point at`);
  return store;
}

async function parseArg(arg: unknown, services: Services): Promise<{ file: string; id?: string } | null> {
  if (typeof arg === 'string' && arg !== '') return { file: arg };
  if (arg instanceof vscode.Uri) return { file: arg.fsPath };
  if (!arg || typeof arg !== 'object') return null;
  const a = arg as { file?: unknown; path?: unknown; id?: unknown; trajectory?: unknown };
  const id = typeof a.id === 'string' ? a.id : undefined;
  if (typeof a.file === 'string' || a.file instanceof vscode.Uri) return { file: fsPath(a.file), id };
  if (typeof a.path === 'string') return { file: a.path, id };
  if (isRecord(a.trajectory)) return { file: await fileFor(a.trajectory, services), id: a.trajectory.id };
  return null;
}

type SourceItem = vscode.QuickPickItem & { file?: string; browse?: boolean };

/** The store, files that already have labels, other trajectory files in the workspace, and a file dialog. */
async function pickTrajectoryFile(
  services: Services,
  store: StoreProvider,
  placeHolder: string,
): Promise<string | undefined> {
  const storePath = services.trajectoryStorePath();
  const items: SourceItem[] = [
    {
      label: '$(database) Workspace store',
      file: storePath,
      description:
        `${vscode.workspace.asRelativePath(storePath)}` + `${existsSync(storePath) ? '' : ' (nothing saved yet)'}`,
    },
  ];
  const seen = new Set([storePath]);
  const labeledFiles = await store().then(
    (s) => [...new Set(s.all().map((l) => l.file))],
    () => [] as string[],
  );
  for (const f of labeledFiles) {
    if (seen.has(f) || !existsSync(f)) continue;
    seen.add(f);
    items.push({ label: `$(checklist) ${vscode.workspace.asRelativePath(f)}`, description: 'has labels', file: f });
  }
  const found = await findTrajectoryFiles();
  for (const u of found)
    if (!seen.has(u.fsPath)) {
      seen.add(u.fsPath);
      items.push({ label: `$(file) ${vscode.workspace.asRelativePath(u)}`, file: u.fsPath });
    }
  items.push({ label: '$(folder-opened) Open File…', description: 'any trajectory JSONL file', browse: true });
  const pick = await vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true });
  if (!pick) return undefined;
  if (!pick.browse) return pick.file;
  const uris = await vscode.window.showOpenDialog({
    canSelectMany: false,
    filters: { 'Trajectories (JSONL)': ['jsonl'], 'All files': ['*'] },
    openLabel: 'Open Trajectories',
  });
  return uris?.[0]?.fsPath;
}

async function saveTarget(name: string, title: string): Promise<string | undefined> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const uri = await vscode.window.showSaveDialog({
    title,
    defaultUri: folder ? vscode.Uri.joinPath(folder, name) : undefined,
    filters: { 'JSON Lines': ['jsonl'] },
    saveLabel: 'Export',
  });
  return uri?.fsPath;
}

function reportExport(
  services: Services,
  what: string,
  summary: { out: string; written: number; skipped: { id: string; reason: string }[] },
  missing: { id: string; reason: string }[] = [],
): void {
  for (const s of summary.skipped) services.log.info(`export ${what}: left out ${s.id}: ${s.reason}`);
  for (const s of missing) services.log.warn(`export ${what}: ${s.id}: ${s.reason}`);
  const left = summary.skipped.length + missing.length;
  const text =
    `Quarry: wrote ${summary.written} ${what} to ${vscode.workspace.asRelativePath(summary.out)}` +
    `${left ? ` (${left} left out: see the log)` : ''}.`;
  void vscode.window.showInformationMessage(text, ...(left ? ['Show Log'] : []), 'Open File').then((a) => {
    if (a === 'Show Log') services.log.show();
    else if (a === 'Open File') void vscode.window.showTextDocument(vscode.Uri.file(summary.out));
  });
}

export function register(context: vscode.ExtensionContext, services: Services): void {
  const store = storeProvider(context, services);
  const open = async (file: string, id?: string) => {
    const panel = LabelPanel.show(context, services, store);
    await panel.open(file, id);
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.openLabeling', async (arg?: unknown) => {
      try {
        const given = await parseArg(arg, services);
        if (given) return await open(given.file, given.id);
        const file = await pickTrajectoryFile(services, store, 'Trajectories to label');
        if (file) await open(file);
      } catch (err) {
        services.log.showError('labeling could not open', err);
      }
    }),

    vscode.commands.registerCommand('quarry.exportSft', async (out?: unknown) => {
      try {
        const s = await store();
        const labels = s.all();
        if (labels.length === 0) {
          void vscode.window.showWarningMessage(
            `Quarry: no labels yet in ${vscode.workspace.asRelativePath(s.path)}; ` +
              'label trajectories first (Quarry: Label Trajectories…).',
          );
          return;
        }
        const target = typeof out === 'string' ? out : await saveTarget('sft.jsonl', 'Export labeled SFT data (JSONL)');
        if (!target) return;
        const { readLabeledRecords, exportSft } = await import('../../core/labels/exportJsonl');
        const summary = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: 'Quarry: exporting SFT data' },
          async () => {
            const { records, missing } = await readLabeledRecords(labels);
            const result = await exportSft(records, new Map(labels.map((l) => [l.trajectoryId, l])), target);
            return { result, missing };
          },
        );
        reportExport(services, 'SFT examples', summary.result, summary.missing);
        return summary.result;
      } catch (err) {
        services.log.showError('the SFT export failed', err);
        return undefined;
      }
    }),

    vscode.commands.registerCommand('quarry.exportRlPrompts', async (file?: unknown, out?: unknown) => {
      try {
        const source =
          typeof file === 'string' && file !== ''
            ? file
            : await pickTrajectoryFile(services, store, 'Trajectories whose tasks become RL prompts');
        if (!source) return;
        if (!existsSync(source)) throw new Error(`no such trajectory file: ${source}`);
        const target =
          typeof out === 'string' ? out : await saveTarget('rl-prompts.jsonl', 'Export RL prompts (JSONL)');
        if (!target) return;
        const [{ readTrajectories }, { exportRlPrompts }] = await Promise.all([
          import('../../core/trajectories/reader'),
          import('../../core/labels/exportJsonl'),
        ]);
        const s = await store();
        const result = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: 'Quarry: exporting RL prompts' },
          async () => {
            const read = await readTrajectories(source, { onInvalid: 'collect' });
            return exportRlPrompts(read.records, s.getMany(read.records.map((r) => r.id)), target);
          },
        );
        reportExport(services, 'RL prompts', result);
        return result;
      } catch (err) {
        services.log.showError('the RL prompt export failed', err);
        return undefined;
      }
    }),
  );
  // After a window reload the panel comes back on the file, filter and trajectory it showed.
  LabelPanel.register(context, services, store, () => labelStoreFile(services));
}
