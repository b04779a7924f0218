// Which workspace database each SQL document runs against: remembered per document (its URI) in the workspace state,
// shown in a status bar item on SQL documents, chosen from the same databases the Databases view lists.
import * as vscode from 'vscode';
import { basename } from 'node:path';

const KEY = 'quarry.sql.bindings';

export class SqlBindings {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly state: vscode.Memento) {}

  private all(): Record<string, string> {
    return this.state.get<Record<string, string>>(KEY) ?? {};
  }

  get(uri: vscode.Uri): string | undefined {
    return this.all()[uri.toString()];
  }

  async set(uri: vscode.Uri, db: string): Promise<void> {
    await this.state.update(KEY, { ...this.all(), [uri.toString()]: db });
    this.changed.fire(uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The status bar item on SQL documents: the bound database, or an invitation to bind one. */
export function bindingStatusBar(bindings: SqlBindings): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('quarry.sqlDatabase', vscode.StatusBarAlignment.Left, 50);
  item.name = 'Quarry: SQL Database';
  item.command = 'quarry.bindSqlDocument';
  const update = () => {
    const editor = vscode.window.activeTextEditor;
    if (editor?.document.languageId !== 'sql') {
      item.hide();
      return;
    }
    const db = bindings.get(editor.document.uri);
    item.text = db ? `$(database) ${basename(db)}` : '$(database) Choose Database…';
    item.tooltip = db
      ? `Quarry runs this document's SQL on ${vscode.workspace.asRelativePath(db)} (read-only). Click to change.`
      : 'Quarry: choose the workspace database this SQL document runs on';
    item.show();
  };
  update();
  const subs = [
    vscode.window.onDidChangeActiveTextEditor(update),
    vscode.workspace.onDidOpenTextDocument(update),
    bindings.onDidChange(update),
  ];
  return vscode.Disposable.from(item, ...subs);
}
