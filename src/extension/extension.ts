// VS Code glue only: everything it shows comes from src/core. Activation registers commands and does no heavy work.
import * as vscode from 'vscode';

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
      void vscode.window.showInformationMessage(`Quarry: ${pick.label}`);
    }),
  );
}

export function deactivate(): void {}
