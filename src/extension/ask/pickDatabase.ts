// Choosing the database a question is about: the workspace's SQLite files (checked by header, so a `.db` that is not
// SQLite is never offered), the last one used first. The last choice is remembered per workspace.
import * as vscode from 'vscode';
import { findWorkspaceFiles } from '../workspaceFiles';

const LAST_DB_KEY = 'quarry.ask.lastDatabase';

export interface DbChoice {
  path: string;
  /** Workspace-relative path, for labels. */
  label: string;
}

export function dbChoice(path: string): DbChoice {
  return { path, label: vscode.workspace.asRelativePath(vscode.Uri.file(path)) };
}

export function lastDatabase(state: vscode.Memento): string | undefined {
  return state.get<string>(LAST_DB_KEY);
}

export async function rememberDatabase(state: vscode.Memento, path: string): Promise<void> {
  await state.update(LAST_DB_KEY, path);
}

/** Workspace files matching the databases glob that really are SQLite files, sorted by path. */
export async function workspaceDatabases(glob: string): Promise<string[]> {
  const files = await findWorkspaceFiles(glob, 2000);
  const { assertSqliteFile } = await import('../../core/db/open');
  const ok: string[] = [];
  for (const f of files) {
    try {
      assertSqliteFile(f.fsPath);
      ok.push(f.fsPath);
    } catch {
      // Not SQLite (or unreadable): it is simply not offered.
    }
  }
  return ok.sort();
}

/**
 * Asks which database; the last used one is on top and preselected. Undefined when the user dismissed the pick or the
 * workspace has none (said in a message with a way to change the glob).
 */
export async function pickDatabase(
  state: vscode.Memento,
  glob: string,
  title = 'Quarry: Ask — which database?',
  placeHolder = 'Database to ask about',
): Promise<DbChoice | undefined> {
  const found = await workspaceDatabases(glob);
  if (found.length === 0) {
    const pick = await vscode.window.showWarningMessage(
      `Quarry: no SQLite databases matching ${glob} in this workspace.`,
      'Open Settings',
    );
    if (pick) await vscode.commands.executeCommand('workbench.action.openSettings', 'quarry.databases.glob');
    return undefined;
  }
  const last = lastDatabase(state);
  const ordered = last && found.includes(last) ? [last, ...found.filter((f) => f !== last)] : found;
  const items = ordered.map((path) => ({ ...dbChoice(path), description: path === last ? 'last used' : undefined }));
  const chosen = await vscode.window.showQuickPick(items, {
    title,
    placeHolder,
    matchOnDescription: true,
  });
  if (!chosen) return undefined;
  await rememberDatabase(state, chosen.path);
  return { path: chosen.path, label: chosen.label };
}

/** The question, typed by the user (prefilled with `value`, e.g. the editor's selection). */
export async function askQuestion(db: DbChoice, value?: string, followUp = false): Promise<string | undefined> {
  const q = await vscode.window.showInputBox({
    title: `Quarry: Ask about ${db.label}`,
    prompt: followUp
      ? 'A follow-up: the agent remembers the earlier questions and answers in the Ask panel'
      : 'A question in plain words; the agent explores the database with read-only SQL',
    placeHolder: 'e.g. Which customers ordered more than three books last year?',
    value,
    ignoreFocusOut: true,
    validateInput: (v) =>
      v.trim() === '' ? 'Type a question' : v.length > 4000 ? 'At most 4000 characters' : undefined,
  });
  return q?.trim() || undefined;
}
