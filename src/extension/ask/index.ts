// Ask: "Quarry: Ask a Question…" (palette, Databases view, editor selection) and the Ask panel it opens.
import * as vscode from 'vscode';
import type { Services } from '../services';
import { AskPanel, type AskOutcome } from './panel';
import { askQuestion, dbChoice, pickDatabase, rememberDatabase, type DbChoice } from './pickDatabase';

/**
 * Arguments `quarry.ask` accepts when called from code (tests, the chat participant's "Ask in panel" button, the
 * panel's "Change database…"). From the palette it gets none and asks for everything.
 */
interface AskArgs {
  /** Database file path (or a file Uri). */
  db?: string | vscode.Uri;
  /** The question; without it an input box asks. */
  question?: string;
  /** Only choose a (new) database for the panel, ask nothing yet. */
  pickDatabase?: boolean;
}

function isAskArgs(v: unknown): v is AskArgs {
  return (
    !!v &&
    typeof v === 'object' &&
    !(v instanceof vscode.Uri) &&
    ['db', 'question', 'pickDatabase'].some((k) => k in (v as object))
  );
}

export function register(context: vscode.ExtensionContext, services: Services): void {
  // Insert at Cursor needs the editor the user was in before focusing the panel (a webview has no text editor).
  let lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor((e) => {
      if (e) lastEditor = e;
    }),
  );
  const show = () => AskPanel.show(context, services, () => lastEditor);

  async function databaseFrom(db: string | vscode.Uri): Promise<DbChoice | undefined> {
    const path = typeof db === 'string' ? db : db.fsPath;
    const { assertSqliteFile } = await import('../../core/db/open');
    try {
      assertSqliteFile(path);
    } catch (err) {
      services.log.showError(`cannot ask about ${path}`, err);
      return undefined;
    }
    await rememberDatabase(context.workspaceState, path);
    return dbChoice(path);
  }

  /**
   * Database, then question, then the panel runs it. Resolves when the episode has ended (undefined if nothing ran).
   */
  async function ask(args: AskArgs = {}, prefill?: string): Promise<AskOutcome | undefined> {
    const glob = services.settings().databases.glob;
    const db = args.db !== undefined ? await databaseFrom(args.db) : await pickDatabase(context.workspaceState, glob);
    if (!db) return undefined;
    if (args.pickDatabase) {
      const panel = show();
      panel.setDatabase(db);
      panel.focusInput();
      return undefined;
    }
    if (AskPanel.current?.busy) {
      void vscode.window.showWarningMessage('Quarry: a question is still running in the Ask panel; stop it first.');
      AskPanel.current.notice('error', 'A question is still running: stop it first (Stop or Escape).');
      return undefined;
    }
    const followUp = AskPanel.current?.followsUp(db) ?? false;
    const question = args.question?.trim() || (await askQuestion(db, prefill, followUp));
    if (!question) return undefined;
    const panel = show();
    panel.setDatabase(db);
    return panel.ask(question);
  }

  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.ask', (arg?: unknown) => ask(isAskArgs(arg) ? arg : {})),
    vscode.commands.registerCommand('quarry.askSelection', () => {
      const editor = vscode.window.activeTextEditor;
      const text = editor ? editor.document.getText(editor.selection).trim() : '';
      if (!text) {
        void vscode.window.showInformationMessage('Quarry: select the question in the editor first.');
        return undefined;
      }
      // The selection is the question, shown in the input box so it can still be edited before asking.
      return ask({}, text.replace(/\s+/g, ' ').slice(0, 4000));
    }),
  );
  // The Databases view's "Ask about this database" comes through here.
  services.ask = async (dbPath?: string) => {
    await ask(dbPath ? { db: dbPath } : {});
  };

  // After a window reload the panel comes back on its database with the conversation (from the trajectory store).
  AskPanel.register(context, services, () => lastEditor);
}
