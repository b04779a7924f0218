// What the final SQL's buttons do in the editor: open it, insert it, save the trajectory, hand it to labeling (the
// result grid's export is the paged grid's, src/extension/results/gridSession.ts). Each returns what happened in
// words or the path it wrote, so the panel can say so.
import * as vscode from 'vscode';
import type { Services } from '../services';
import type { TrajectoryRecord } from '../../core/trajectories/types';

/**
 * A new untitled `.sql` editor with the SQL: in the column of the last text editor, unless that is the panel's own
 * column (or there is none) — then beside it, so the panel stays in view.
 */
export async function openSql(
  sql: string,
  last: vscode.TextEditor | undefined,
  panelColumn?: vscode.ViewColumn,
  db?: string,
): Promise<vscode.TextDocument> {
  const doc = await vscode.workspace.openTextDocument({
    language: 'sql',
    content: sql.endsWith('\n') ? sql : sql + '\n',
  });
  // Bound to the answer's database, so Run Query (Ctrl/Cmd+Enter) works at once.
  if (db) await vscode.commands.executeCommand('quarry.bindSqlDocument', doc.uri, db);
  const column =
    last?.viewColumn !== undefined && last.viewColumn !== panelColumn ? last.viewColumn : vscode.ViewColumn.Beside;
  await vscode.window.showTextDocument(doc, { viewColumn: column, preview: false });
  return doc;
}

/** Inserts at the cursor (replacing a selection) of the last active text editor. */
export async function insertSql(sql: string, last: vscode.TextEditor | undefined): Promise<string> {
  const editor = last && !last.document.isClosed ? last : vscode.window.visibleTextEditors[0];
  if (!editor) {
    await openSql(sql, undefined);
    return 'No text editor was open: the SQL is in a new editor.';
  }
  const ok = await editor.edit((b) => b.replace(editor.selection, sql));
  if (!ok)
    throw new Error(
      `${vscode.workspace.asRelativePath(editor.document.uri)} did not accept the edit (is it read-only?)`,
    );
  await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preserveFocus: false });
  return `SQL inserted into ${vscode.workspace.asRelativePath(editor.document.uri)}.`;
}

async function append(record: TrajectoryRecord, path: string): Promise<void> {
  const { appendTrajectory } = await import('../../app/trajectoryStore');
  await appendTrajectory(record, path);
}

/** Appends to the workspace trajectory store (quarry.trajectories.store) and returns its path. */
export async function appendToStore(record: TrajectoryRecord, services: Services): Promise<string> {
  const path = services.trajectoryStorePath();
  await append(record, path);
  return path;
}

/** Asks where, then appends the record there (a JSONL file can hold many). */
export async function saveTrajectoryAs(record: TrajectoryRecord): Promise<string | undefined> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const uri = await vscode.window.showSaveDialog({
    title: 'Save the trajectory (appended if the file exists)',
    defaultUri: folder ? vscode.Uri.joinPath(folder, `trajectory-${record.id.slice(0, 8)}.jsonl`) : undefined,
    filters: { 'Trajectories (JSONL)': ['jsonl'], 'All files': ['*'] },
    saveLabel: 'Save Trajectory',
  });
  if (!uri) return undefined;
  await append(record, uri.fsPath);
  return uri.fsPath;
}

/**
 * Opens the trajectory in the labeling queue (helper E5's `quarry.openLabeling`); says so clearly when it is missing.
 */
export async function label(path: string, id: string, services: Services): Promise<void> {
  const available = await vscode.commands.getCommands(true);
  if (!available.includes('quarry.openLabeling')) {
    const text =
      'Labeling is not available in this build (no quarry.openLabeling command). ' +
      `The trajectory ${id} is saved in ${path}.`;
    services.log.warn(text);
    void vscode.window.showWarningMessage(`Quarry: ${text}`);
    return;
  }
  // The same argument shape quarry.openReplay and quarry.openDiagnostics take.
  await vscode.commands.executeCommand('quarry.openLabeling', { file: path, id });
}
