// "Quarry: Show Schema of a Database…": pick a workspace database and a prompt style, see the schema as the agent
// would in an untitled document. The Databases view's "Show Schema" reuses showSchemaDocument.
import * as vscode from 'vscode';
import type { SchemaStyle } from '../core/db/schema/renderStyles';
import type { Services } from './services';

const STYLE_PICKS: { label: string; description: string; style: SchemaStyle }[] = [
  { label: 'List', description: 'Table: t / - col (TYPE, PRIMARY KEY) — SkyRL-SQL, SQL-Trail', style: 'list' },
  { label: 'DDL', description: 'create table … with example rows — MTSQL-R1, CodeS/OmniSQL', style: 'ddl' },
  { label: 'Names', description: 'table names only — no-schema setting', style: 'names' },
];

/** Asks for a style (List is the default when the pick is dismissed). */
export async function pickSchemaStyle(): Promise<SchemaStyle> {
  const stylePick = await vscode.window.showQuickPick(STYLE_PICKS, {
    placeHolder: 'Schema style (List is the default)',
  });
  return stylePick?.style ?? 'list';
}

/** Renders the schema of `dbPath` in `style` and opens it (returns the text); errors become a notification with "Open Log". */
export async function showSchemaDocument(
  services: Services,
  dbPath: string,
  style: SchemaStyle,
): Promise<string | undefined> {
  let text: string;
  try {
    // Read through the sandbox pool (worker processes, time-limited), never on the extension host's thread.
    const [{ introspectViaPool }, { renderSchema }, pool] = await Promise.all([
      import('../core/db/schema/viaPool'),
      import('../core/db/schema/render'),
      services.pool(),
    ]);
    const info = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Quarry: reading the schema' },
      () => introspectViaPool(pool, dbPath, { sampleRows: 3 }),
    );
    text = renderSchema(info, { style });
  } catch (err) {
    services.log.showError(`cannot show the schema of ${vscode.workspace.asRelativePath(dbPath)}`, err);
    return undefined;
  }
  const doc = await vscode.workspace.openTextDocument({
    content: text,
    language: style === 'ddl' ? 'sql' : 'plaintext',
  });
  await vscode.window.showTextDocument(doc, { preview: false });
  return text;
}

export function registerShowSchema(context: vscode.ExtensionContext, services: Services): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.showSchema', async () => {
      const files = await vscode.workspace.findFiles(services.settings().databases.glob, '**/node_modules/**', 200);
      if (files.length === 0) {
        void vscode.window.showInformationMessage(
          'Quarry: no SQLite databases (*.sqlite, *.sqlite3, *.db) in this workspace.',
        );
        return;
      }
      const pick = await vscode.window.showQuickPick(
        files.map((f) => ({ label: vscode.workspace.asRelativePath(f), uri: f })),
        { placeHolder: 'Database to show' },
      );
      if (!pick) return;
      await showSchemaDocument(services, pick.uri.fsPath, await pickSchemaStyle());
    }),
  );
}
