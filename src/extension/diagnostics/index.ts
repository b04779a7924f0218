// Reward diagnostics: "Quarry: Open Reward Diagnostics…" scores a trajectory file with a reward panel and charts the
// run (reward and turn histograms, EX by hardness, term contributions, integrity flags, group statistics), or one
// trajectory (terms, ODT of prediction and gold, clause F1, verification verdicts).
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import type { Services } from '../services';
import { DiagnosticsPanel, pickTrajectoryFile } from './panel';
import { findTrajectoryFiles } from '../workspaceFiles';

// What `quarry.openDiagnostics` accepts from code (checked by parseArg): a path, a file Uri, or
// `{ file: string | Uri, id?: string }`, a file with one trajectory to show.

function parseArg(arg: unknown): { file: string; id?: string } | null {
  if (typeof arg === 'string' && arg !== '') return { file: arg };
  if (arg instanceof vscode.Uri) return { file: arg.fsPath };
  if (arg && typeof arg === 'object' && 'file' in arg) {
    const a = arg as { file: unknown; id?: unknown };
    const file = typeof a.file === 'string' ? a.file : a.file instanceof vscode.Uri ? a.file.fsPath : null;
    if (file) return { file, id: typeof a.id === 'string' ? a.id : undefined };
  }
  return null;
}

/** Without an argument: the workspace store, other JSONL files of the workspace, or a file dialog. */
async function pickSource(services: Services): Promise<string | undefined> {
  type Item = vscode.QuickPickItem & { file?: string; browse?: boolean };
  const store = services.trajectoryStorePath();
  const items: Item[] = [
    {
      label: '$(database) Workspace store',
      description: `${vscode.workspace.asRelativePath(store)}${existsSync(store) ? '' : ' (nothing saved yet)'}`,
      file: store,
    },
  ];
  const found = await findTrajectoryFiles();
  for (const u of found)
    if (u.fsPath !== store) items.push({ label: `$(file) ${vscode.workspace.asRelativePath(u)}`, file: u.fsPath });
  items.push({ label: '$(folder-opened) Open File…', description: 'any trajectory JSONL file', browse: true });
  const pick = await vscode.window.showQuickPick(items, {
    placeHolder: 'Trajectories to diagnose',
    matchOnDescription: true,
  });
  if (!pick) return undefined;
  return pick.browse ? pickTrajectoryFile() : pick.file;
}

export function register(context: vscode.ExtensionContext, services: Services): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.openDiagnostics', async (arg?: unknown) => {
      const given: { file: string; id?: string } | null =
        parseArg(arg) ?? (await pickSource(services).then((file) => (file ? { file } : null)));
      if (!given) return;
      if (!existsSync(given.file)) {
        void vscode.window.showErrorMessage(`Quarry: no trajectory file at ${given.file}`);
        return;
      }
      await DiagnosticsPanel.show(context, services).open(given.file, given.id, given.id !== undefined);
    }),
  );
  // After a window reload the panel comes back on the file, reward panel and trajectory it showed.
  DiagnosticsPanel.register(context, services);
}
