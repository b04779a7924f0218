// VS Code glue only: everything it shows comes from src/core. Activation registers commands and does no heavy work.
import * as vscode from 'vscode';
import type { SchemaStyle } from '../core/db/schema';

const STYLE_PICKS: { label: string; description: string; style: SchemaStyle }[] = [
  { label: 'List', description: 'Table: t / - col (TYPE, PRIMARY KEY) — SkyRL-SQL, SQL-Trail', style: 'list' },
  { label: 'DDL', description: 'create table … with example rows — MTSQL-R1, CodeS/OmniSQL', style: 'ddl' },
  { label: 'Names', description: 'table names only — no-schema setting', style: 'names' },
];

export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.showSchema', async () => {
      const files = await vscode.workspace.findFiles('**/*.{sqlite,sqlite3,db}', '**/node_modules/**', 200);
      if (files.length === 0) {
        void vscode.window.showInformationMessage('Quarry: no SQLite databases (*.sqlite, *.sqlite3, *.db) in this workspace.');
        return;
      }
      const pick = await vscode.window.showQuickPick(files.map((f) => ({ label: vscode.workspace.asRelativePath(f), uri: f })),
        { placeHolder: 'Database to show' });
      if (!pick) return;
      const stylePick = await vscode.window.showQuickPick(STYLE_PICKS, { placeHolder: 'Schema style (List is the default)' });
      const style = stylePick?.style ?? 'list';
      // Loaded on first use so activation does not pay for the SQLite addon.
      const { introspectSchema, renderSchema } = await import('../core/db/schema');
      let text: string;
      try {
        text = renderSchema(introspectSchema(pick.uri.fsPath, { sampleRows: 3 }), { style });
      } catch (err) {
        void vscode.window.showErrorMessage(`Quarry: ${(err as Error).message}`);
        return;
      }
      const doc = await vscode.workspace.openTextDocument({ content: text, language: style === 'ddl' ? 'sql' : 'plaintext' });
      await vscode.window.showTextDocument(doc, { preview: false });
    }),
  );
}

export function deactivate(): void {}
