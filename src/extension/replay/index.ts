// Trajectory replay: "Quarry: Open Trajectory Replay…" opens a trajectory JSONL file (or the workspace store) in a
// panel with a filtered, virtualised list, turn-by-turn detail, compare and GRPO group views.
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import type { Services } from '../services';
import type { LabelLookup } from './source';
import { storeLabels } from './labels';
import { panelModule, registerReplay } from './lazyPanel';
import { findTrajectoryFiles } from '../workspaceFiles';

// What `quarry.openReplay` accepts from code: a path, a file Uri, `{ file, id? }` (a file with a trajectory to open),
// or `{ file, compare: [idA, idB] }` (two trajectories side by side).

function fileOf(v: string | vscode.Uri): string {
  return typeof v === 'string' ? v : v.fsPath;
}

function parseArg(arg: unknown): { file: string; id?: string; compare?: [string, string] } | null {
  if (typeof arg === 'string' && arg !== '') return { file: arg };
  if (arg instanceof vscode.Uri) return { file: arg.fsPath };
  if (arg && typeof arg === 'object' && 'file' in arg) {
    const a = arg as { file: unknown; id?: unknown; compare?: unknown };
    if (typeof a.file === 'string' || a.file instanceof vscode.Uri) {
      const pair =
        Array.isArray(a.compare) && a.compare.length === 2 && a.compare.every((x) => typeof x === 'string')
          ? (a.compare as [string, string])
          : undefined;
      return { file: fileOf(a.file), id: typeof a.id === 'string' ? a.id : undefined, compare: pair };
    }
  }
  return null;
}

/** The quick pick without an argument: the workspace store, other trajectory files in the workspace, a file dialog. */
async function pickSource(services: Services): Promise<string | undefined> {
  type Item = vscode.QuickPickItem & { file?: string; browse?: boolean };
  const store = services.trajectoryStorePath();
  const items: Item[] = [];
  items.push(
    existsSync(store)
      ? { label: '$(database) Workspace store', description: vscode.workspace.asRelativePath(store), file: store }
      : {
          label: '$(database) Workspace store',
          description: `${vscode.workspace.asRelativePath(store)} (nothing saved yet)`,
          file: store,
        },
  );
  const found = await findTrajectoryFiles();
  for (const u of found)
    if (u.fsPath !== store) items.push({ label: `$(file) ${vscode.workspace.asRelativePath(u)}`, file: u.fsPath });
  items.push({ label: '$(folder-opened) Open File…', description: 'any trajectory JSONL file', browse: true });
  const pick = await vscode.window.showQuickPick(items, {
    placeHolder: 'Trajectories to replay',
    matchOnDescription: true,
  });
  if (!pick) return undefined;
  if (pick.browse) return (await panelModule()).pickFile();
  return pick.file;
}

export function register(
  context: vscode.ExtensionContext,
  services: Services,
  labels: LabelLookup = storeLabels(services),
): void {
  const open = async (file: string, id?: string) => {
    const { ReplayPanel } = await panelModule();
    const panel = ReplayPanel.show(context, services, labels);
    await panel.open(file, id);
  };
  services.openReplay = (file?: string, id?: string) => open(file ?? services.trajectoryStorePath(), id);
  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.openReplay', async (arg?: unknown) => {
      const given = parseArg(arg);
      if (given?.compare) {
        const { ReplayPanel } = await panelModule();
        return ReplayPanel.show(context, services, labels).openCompare(given.file, ...given.compare);
      }
      if (given) return open(given.file, given.id);
      const file = await pickSource(services);
      if (file) await open(file);
    }),
  );
  // After a window reload the panel comes back on the file and trajectory it showed.
  registerReplay(context, services, labels);
}
