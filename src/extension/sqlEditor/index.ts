// Running your own SQL: a `.sql` document bound to a workspace database runs the statement under the cursor (or the
// selection) with "Quarry: Run Query" (Ctrl/Cmd+Enter, a CodeLens above each statement) through the same read-only,
// killable sandbox the agent uses; results open in the Query Results panel, an SQL error becomes a diagnostic where
// SQLite points, table and column names complete (by context: completion.ts) and hover from the agent's schema
// introspection, every run goes into a per-database history, and "Ask about this SQL" hands the SQL to the agent
// with a question.
import * as vscode from 'vscode';
import { basename } from 'node:path';
import type { Services } from '../services';
import type { SchemaInfo } from '../../core/db/schema/types';
import { errorSpot, splitStatements, statementAt } from '../../core/sql/statements';
import { pickDatabase } from '../ask/pickDatabase';
import { testHooksOn } from '../webviews/kit';
import { bindingStatusBar, SqlBindings } from './bindings';
import { QueryHistory, historyDescription } from './history';
import { questionWithSql } from '../../protocol/askAboutSql';
import { ResultsPanel, type RunOutcome } from '../results/panel';
import { failureText } from '../../protocol/results';
import { completionContext } from '../../core/sql/completionContext';
import { completionItems } from './completion';

/** What "Quarry: Run Query" accepts from code (the CodeLens, tests): a document and the statement's offsets. */
interface RunArgs {
  uri?: string;
  start?: number;
  end?: number;
}

const SQL_SELECTOR: vscode.DocumentSelector = [{ language: 'sql' }];

export function register(context: vscode.ExtensionContext, services: Services): void {
  const bindings = new SqlBindings(context.workspaceState);
  const history = new QueryHistory(context.globalState);
  const diagnostics = vscode.languages.createDiagnosticCollection('quarry-sql');
  const schemas = new Map<string, Promise<SchemaInfo | null>>();
  const lensesChanged = new vscode.EventEmitter<void>();
  context.subscriptions.push(bindings, diagnostics, lensesChanged, bindingStatusBar(bindings));
  bindings.onDidChange(() => lensesChanged.fire());

  /** The bound database's schema, introspected through the sandbox once per database (and again after a run). */
  function schemaOf(db: string): Promise<SchemaInfo | null> {
    let s = schemas.get(db);
    if (!s) {
      s = (async () => {
        try {
          const { introspectViaPool } = await import('../../core/db/schema/viaPool');
          return await introspectViaPool(await services.pool(), db, { sampleRows: 0 });
        } catch (err) {
          services.log.warn(`sql editor: cannot read the schema of ${db}: ${(err as Error).message}`);
          return null;
        }
      })();
      schemas.set(db, s);
    }
    return s;
  }

  async function bind(uri?: vscode.Uri, db?: string): Promise<string | undefined> {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    if (!target) {
      void vscode.window.showInformationMessage('Quarry: open a SQL document first.');
      return undefined;
    }
    let path = db;
    if (!path) {
      const glob = services.settings().databases.glob;
      const choice = await pickDatabase(
        context.workspaceState,
        glob,
        `Quarry: which database does ${basename(target.path)} run on?`,
        'Database this SQL document runs on (read-only)',
      );
      path = choice?.path;
    }
    if (!path) return undefined;
    await bindings.set(target, path);
    services.log.info(`sql editor: ${basename(target.path)} runs on ${vscode.workspace.asRelativePath(path)}`);
    return path;
  }

  /** The statement to run: the selection, else the one under the cursor (or the offsets a CodeLens passed). */
  function statementToRun(editor: vscode.TextEditor, args: RunArgs): { sql: string; start: number } | null {
    const doc = editor.document;
    if (typeof args.start === 'number' && typeof args.end === 'number')
      return { sql: doc.getText().slice(args.start, args.end), start: args.start };
    if (!editor.selection.isEmpty) {
      const text = doc.getText(editor.selection);
      const lead = text.length - text.trimStart().length;
      return { sql: text.trim(), start: doc.offsetAt(editor.selection.start) + lead };
    }
    const s = statementAt(doc.getText(), doc.offsetAt(editor.selection.active));
    return s ? { sql: s.text, start: s.start } : null;
  }

  async function runQuery(args: RunArgs = {}): Promise<RunOutcome | undefined> {
    let editor = vscode.window.activeTextEditor;
    if (args.uri) {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(args.uri));
      editor = await vscode.window.showTextDocument(doc, { preserveFocus: true, preview: false });
    }
    if (!editor) {
      void vscode.window.showInformationMessage('Quarry: open a SQL document to run a query from it.');
      return undefined;
    }
    const doc = editor.document;
    const statement = statementToRun(editor, args);
    if (!statement || statement.sql.trim() === '') {
      void vscode.window.showInformationMessage('Quarry: there is no SQL statement at the cursor.');
      return undefined;
    }
    const db = bindings.get(doc.uri) ?? (await bind(doc.uri));
    if (!db) return undefined;
    diagnostics.delete(doc.uri);
    const outcome = await ResultsPanel.show(context, services, db, statement.sql);
    const page = outcome.page;
    await history.add(db, {
      sql: statement.sql,
      at: new Date().toISOString(),
      ok: page.ok,
      rows: page.ok ? page.total : null,
    });
    if (!page.ok) {
      const spot = errorSpot(statement.sql, page.error);
      const from = doc.positionAt(statement.start + spot.start);
      const to = doc.positionAt(statement.start + spot.start + Math.max(1, spot.length));
      const d = new vscode.Diagnostic(
        new vscode.Range(from, to),
        failureText(page.errorClass, page.error),
        page.errorClass === 'sql' || page.errorClass === 'rejected'
          ? vscode.DiagnosticSeverity.Error
          : vscode.DiagnosticSeverity.Warning,
      );
      d.source = 'Quarry';
      diagnostics.set(doc.uri, [d]);
    }
    services.log.info(
      `sql editor: ran ${statement.sql.length} characters on ${basename(db)}: ` +
        (page.ok ? `${page.total ?? '?'} rows` : `${page.errorClass}: ${page.error}`),
    );
    return outcome;
  }

  async function showHistory(): Promise<void> {
    const active = vscode.window.activeTextEditor?.document;
    const bound = active?.languageId === 'sql' ? bindings.get(active.uri) : undefined;
    let db = bound;
    if (!db) {
      const dbs = history.databases();
      if (dbs.length === 0) {
        void vscode.window.showInformationMessage('Quarry: no queries run yet.');
        return;
      }
      const pick = await vscode.window.showQuickPick(
        dbs.map((d) => ({ label: basename(d), description: vscode.workspace.asRelativePath(d), db: d })),
        { title: 'Quarry: query history of which database?' },
      );
      db = pick?.db;
    }
    if (!db) return;
    const entries = history.list(db);
    if (entries.length === 0) {
      void vscode.window.showInformationMessage(`Quarry: no queries run on ${basename(db)} yet.`);
      return;
    }
    const pick = await vscode.window.showQuickPick(
      entries.map((e) => ({
        label: e.sql.replace(/\s+/g, ' ').slice(0, 200),
        description: historyDescription(e, (at) => new Date(at).toLocaleString()),
        entry: e,
      })),
      {
        title: `Quarry: query history of ${basename(db)} (newest first) — pick one to run it again`,
        matchOnDescription: true,
      },
    );
    if (!pick) return;
    const doc = await openBoundSql(pick.entry.sql, db);
    await runQuery({ uri: doc.uri.toString(), start: 0, end: pick.entry.sql.length });
  }

  /** A new SQL document holding `sql`, bound to `db`, shown beside the current editor. */
  async function openBoundSql(sql: string, db: string, column?: vscode.ViewColumn): Promise<vscode.TextDocument> {
    const doc = await vscode.workspace.openTextDocument({
      language: 'sql',
      content: sql.endsWith('\n') ? sql : `${sql}\n`,
    });
    await bindings.set(doc.uri, db);
    await vscode.window.showTextDocument(doc, { viewColumn: column ?? vscode.ViewColumn.Active, preview: false });
    return doc;
  }

  async function askAboutSql(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return;
    const statement = statementToRun(editor, {});
    if (!statement) {
      void vscode.window.showInformationMessage('Quarry: select the SQL to ask about first.');
      return;
    }
    const question = await vscode.window.showInputBox({
      title: 'Quarry: Ask about this SQL',
      prompt: 'What should the agent do with it? (explain it, fix its error, change it…)',
      placeHolder: 'Why does this return no rows?',
      ignoreFocusOut: true,
    });
    if (!question?.trim()) return;
    const db = bindings.get(editor.document.uri) ?? (await bind(editor.document.uri));
    if (!db) return;
    await vscode.commands.executeCommand('quarry.ask', {
      db,
      question: questionWithSql(question, statement.sql),
    });
  }

  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.bindSqlDocument', (uri?: vscode.Uri | string, db?: string) =>
      bind(typeof uri === 'string' ? vscode.Uri.parse(uri) : uri, typeof db === 'string' ? db : undefined),
    ),
    vscode.commands.registerCommand('quarry.runQuery', (args?: unknown) =>
      runQuery(args && typeof args === 'object' && !(args instanceof vscode.Uri) ? (args as RunArgs) : {}),
    ),
    vscode.commands.registerCommand('quarry.queryHistory', () => showHistory()),
    vscode.commands.registerCommand('quarry.askAboutSql', () => askAboutSql()),
    vscode.commands.registerCommand('quarry.openBoundSql', async (sql: unknown, db: unknown) =>
      typeof sql === 'string' && typeof db === 'string' ? (await openBoundSql(sql, db)).uri.toString() : undefined,
    ),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document.languageId === 'sql' && e.contentChanges.length) {
        diagnostics.delete(e.document.uri);
        lensesChanged.fire();
      }
    }),
    vscode.languages.registerCodeLensProvider(SQL_SELECTOR, {
      onDidChangeCodeLenses: lensesChanged.event,
      provideCodeLenses(doc) {
        const db = bindings.get(doc.uri);
        return splitStatements(doc.getText()).map((s) => {
          const range = new vscode.Range(doc.positionAt(s.start), doc.positionAt(s.start));
          return new vscode.CodeLens(range, {
            title: db ? `▶ Run on ${basename(db)}` : '▶ Run (choose a database)',
            tooltip: 'Run this statement read-only in Quarry’s sandbox (Ctrl+Enter / Cmd+Enter)',
            command: 'quarry.runQuery',
            arguments: [{ uri: doc.uri.toString(), start: s.start, end: s.end }],
          });
        });
      },
    }),
    vscode.languages.registerCompletionItemProvider(
      SQL_SELECTOR,
      {
        async provideCompletionItems(doc, position) {
          const db = bindings.get(doc.uri);
          const schema = db ? await schemaOf(db) : null;
          return schema ? completionItems(schema, completionContext(doc.getText(), doc.offsetAt(position))) : [];
        },
      },
      '.',
    ),
    vscode.languages.registerHoverProvider(SQL_SELECTOR, {
      async provideHover(doc, position) {
        const db = bindings.get(doc.uri);
        const range = doc.getWordRangeAtPosition(position, /[A-Za-z_][A-Za-z0-9_$]*/);
        if (!db || !range) return undefined;
        const word = doc.getText(range).toLowerCase();
        const schema = await schemaOf(db);
        const t = schema?.tables.find((x) => x.name.toLowerCase() === word);
        if (!t) return undefined;
        const rows = t.rowCount === null ? 'rows not counted' : `${t.rowCount.toLocaleString('en-US')} rows`;
        const md = new vscode.MarkdownString();
        md.appendMarkdown(`**${t.name}** (${t.kind}, ${rows}) in ${basename(db)}\n\n`);
        for (const c of t.columns)
          md.appendMarkdown(`- \`${c.name}\` ${c.type || 'untyped'}${c.pkIndex ? ' · PK' : ''}\n`);
        return new vscode.Hover(md, range);
      },
    }),
  );
  // After a window reload the Query Results panel comes back and runs its statement again on the page it showed.
  ResultsPanel.register(context, services);
  // Test-only: what the SQL editor keeps (the panel's own hook is `quarry.results.testHook`, the kit's).
  if (testHooksOn(context)) {
    context.subscriptions.push(
      vscode.commands.registerCommand('quarry.sqlEditor.testHook', async (op: unknown, arg?: unknown) => {
        if (op === 'binding') return bindings.get(vscode.Uri.parse(String(arg)));
        if (op === 'history') return history.list(String(arg));
        if (op === 'diagnostics')
          return diagnostics.get(vscode.Uri.parse(String(arg)))?.map((d) => ({
            message: d.message,
            start: [d.range.start.line, d.range.start.character],
            end: [d.range.end.line, d.range.end.character],
          }));
        throw new Error(`quarry.sqlEditor.testHook: unknown op ${JSON.stringify(op)}`);
      }),
    );
  }
}
