// "Quarry: Show Schema of a Database…": pick a workspace database and a prompt style, see the schema as the agent
// would, in a read-only virtual document (`quarry-schema:` scheme: nothing to save, no prompt on close). The
// Databases view's "Show Schema" reuses showSchemaDocument. A file that is not a SQLite database is said to be one.
import * as vscode from 'vscode';
import type { SchemaStyle } from '../core/db/schema/renderStyles';
import type { Services } from './services';
import { findWorkspaceFiles } from './workspaceFiles';

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

/** The scheme of schema documents: served from memory by SchemaDocuments, read-only in the editor. */
const SCHEMA_SCHEME = 'quarry-schema';

/** The texts of the schema documents opened so far, by URI (a reopened one shows its latest rendering). */
class SchemaDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  set(uri: vscode.Uri, text: string): void {
    const had = this.texts.has(uri.toString());
    this.texts.set(uri.toString(), text);
    if (had) this.changed.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '(this schema is no longer in memory: run Show Schema again)';
  }

  dispose(): void {
    this.changed.dispose();
  }
}

const schemaDocuments = new SchemaDocuments();

/** The virtual document's URI: `quarry-schema:/<db> schema (<style>).<sql|txt>?<db path>`, named for its tab. */
function schemaUri(dbPath: string, style: SchemaStyle): vscode.Uri {
  const name = dbPath.split(/[\\/]/).pop() ?? dbPath;
  const ext = style === 'ddl' ? 'sql' : 'txt';
  return vscode.Uri.from({ scheme: SCHEMA_SCHEME, path: `/${name} schema (${style}).${ext}`, query: dbPath });
}

/**
 * Renders the schema of `dbPath` in `style` and opens it (returns the text); errors become a notification with
 * "Open Log".
 */
export async function showSchemaDocument(
  services: Services,
  dbPath: string,
  style: SchemaStyle,
): Promise<string | undefined> {
  const rel = vscode.workspace.asRelativePath(dbPath);
  try {
    const { assertSqliteFile } = await import('../core/db/open');
    assertSqliteFile(dbPath);
  } catch (err) {
    const why = (err as Error).message;
    services.log.info(`show schema: ${rel} is not a database: ${why}`);
    void vscode.window.showWarningMessage(`Quarry: ${rel} is not a SQLite database, so it has no schema (${why}).`);
    return undefined;
  }
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
    services.log.showError(`cannot show the schema of ${rel}`, err);
    return undefined;
  }
  const uri = schemaUri(dbPath, style);
  schemaDocuments.set(uri, text);
  let doc = await vscode.workspace.openTextDocument(uri);
  if (style === 'ddl' && doc.languageId !== 'sql') doc = await vscode.languages.setTextDocumentLanguage(doc, 'sql');
  await vscode.window.showTextDocument(doc, { preview: false });
  return text;
}

export function registerShowSchema(context: vscode.ExtensionContext, services: Services): void {
  context.subscriptions.push(
    schemaDocuments,
    vscode.workspace.registerTextDocumentContentProvider(SCHEMA_SCHEME, schemaDocuments),
    vscode.commands.registerCommand('quarry.showSchema', async () => {
      const files = await findWorkspaceFiles(services.settings().databases.glob, 200);
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
