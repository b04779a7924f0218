// Running your own SQL in a real extension host: a SQL document bound to clinic.sqlite runs the statement under the
// cursor through the sandbox into the Query Results panel, pages over the whole result, an SQL error becomes a
// diagnostic on the token SQLite names, a write is rejected as read-only, CodeLenses sit above each statement, table
// and column names complete and hover from the schema, and every run lands in the database's history.
import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import type { QuarryApi } from '../../src/extension/extension';
import type { RunOutcome } from '../../src/extension/results/panel';
import type { ResultsAppState, ToApp } from '../../src/protocol/results';
import type { HistoryEntry } from '../../src/extension/sqlEditor/history';

const EXTENSION_ID = 'quarry.quarry';
const DOC = `SELECT name, specialty FROM doctor ORDER BY name;
SELECT nme FROM doctor;
DELETE FROM doctor;
`;

suite('SQL editor: Run Query', () => {
  let folder: string;
  let db: string;
  let doc: vscode.TextDocument;
  let editor: vscode.TextEditor;
  const hook = <T>(op: string, arg?: unknown) =>
    vscode.commands.executeCommand<T>('quarry.sqlEditor.testHook', op, arg);
  /** The Query Results panel's hook (the panel kit's: posted, send, clear, close). */
  const results = <T>(op: string, arg?: unknown) =>
    vscode.commands.executeCommand<T>('quarry.results.testHook', op, arg);

  /** Puts the cursor at the start of `needle` and runs the query under it. */
  async function runAt(needle: string): Promise<RunOutcome> {
    const at = doc.positionAt(doc.getText().indexOf(needle));
    editor.selection = new vscode.Selection(at, at);
    const outcome = await vscode.commands.executeCommand<RunOutcome>('quarry.runQuery');
    assert.ok(outcome, 'Run Query returned its outcome');
    return outcome;
  }

  suiteSetup(async () => {
    await vscode.extensions.getExtension<QuarryApi>(EXTENSION_ID)!.activate();
    folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    db = join(folder, 'data', 'clinic.sqlite');
    doc = await vscode.workspace.openTextDocument({ language: 'sql', content: DOC });
    editor = await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand('quarry.bindSqlDocument', doc.uri, db);
  });
  suiteTeardown(async () => {
    await results('close');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('the binding is remembered for the document', async () => {
    assert.equal(await hook<string>('binding', doc.uri.toString()), db);
  });

  test('runs the statement under the cursor into the results panel, with the whole count', async () => {
    await results('clear');
    const outcome = await runAt('name, specialty');
    assert.ok(outcome.page.ok, outcome.page.ok ? '' : outcome.page.error);
    assert.equal(outcome.sql, 'SELECT name, specialty FROM doctor ORDER BY name');
    assert.deepEqual(outcome.page.columns, ['name', 'specialty']);
    assert.equal(outcome.page.total, 3);
    assert.equal(outcome.page.rows[0][0], 'Amara Okafor');
    const posted = await results<ToApp[]>('posted');
    assert.ok(posted.some((m) => m.type === 'shown' && m.db === 'clinic.sqlite'));
    // The grid sorts on the server through the panel.
    await results('send', { type: 'page', offset: 0, limit: 200, sortColumn: 0, descending: true, filters: [] });
    const page = (await results<ToApp[]>('posted')).filter((m) => m.type === 'page').pop();
    assert.ok(page?.type === 'page');
    assert.equal(page.page.rows[0][0], 'Tomas Berg');
    const history = await hook<HistoryEntry[]>('history', db);
    assert.equal(history[0].sql, outcome.sql);
    assert.equal(history[0].rows, 3);
  });

  test('after a window reload the serializer brings Query Results back on the same page, sort and filter', async () => {
    const revive = (state: unknown) =>
      vscode.commands.executeCommand<string | null>('quarry.webviews.testHook', 'revive', 'quarry.results', state);
    const tabs = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).map((t) => t.label);
    await runAt('name, specialty');
    await results('send', { type: 'page', offset: 1, limit: 200, sortColumn: 1, descending: true, filters: [] });
    const before = (await results<ToApp[]>('posted')).filter((m) => m.type === 'page').pop();
    assert.ok(before?.type === 'page');
    const shown = (await results<ToApp[]>('posted')).filter((m) => m.type === 'shown').pop();
    assert.ok(shown?.type === 'shown');
    assert.equal(shown.path, db, 'the app is told the full path, which it saves');
    await results('close');
    await results('clear');
    // What the app saved (host.saveState) when the window went away.
    const state: ResultsAppState = {
      path: shown.path,
      sql: shown.sql,
      view: { offset: 1, limit: 200, sortColumn: 1, descending: true, filters: [] },
    };
    assert.equal(await revive(state), null);
    const after = (await results<ToApp[]>('posted')).filter((m) => m.type === 'page').pop();
    assert.ok(after?.type === 'page', 'the statement ran again');
    assert.deepEqual({ ...after.page, ms: 0 }, { ...before.page, ms: 0 });
    assert.ok(tabs().includes('Results · clinic.sqlite'), tabs().join(', '));
    // The revived panel is the one Run Query and the grid talk to.
    await results('send', { type: 'page', offset: 0, limit: 200, filters: [{ column: 1, text: 'derm' }] });
    const filtered = (await results<ToApp[]>('posted')).filter((m) => m.type === 'page').pop();
    assert.ok(filtered?.type === 'page');
    assert.deepEqual(filtered.page.rows, [['Tomas Berg', 'dermatology']]);
    assert.match((await revive({ ...state, path: 'data/clinic.sqlite' })) ?? '', /not an absolute path/);
    assert.match((await revive({ ...state, view: { offset: -3, limit: 200, filters: [] } })) ?? '', /offset/);
    // The test hook revives in the editor's own column; the next runs open the panel beside the editor again.
    await results('close');
    editor = await vscode.window.showTextDocument(doc);
  });

  test('an SQL error becomes a diagnostic on the token SQLite names', async () => {
    const outcome = await runAt('nme');
    assert.equal(outcome.page.ok, false);
    const diags = await hook<{ message: string; start: number[]; end: number[] }[]>('diagnostics', doc.uri.toString());
    assert.equal(diags.length, 1);
    assert.match(diags[0].message, /no such column: nme/);
    assert.deepEqual(diags[0].start, [1, 7]);
    assert.deepEqual(diags[0].end, [1, 10]);
  });

  test('a write is rejected because Quarry is read-only', async () => {
    await results('clear');
    const outcome = await runAt('DELETE');
    assert.ok(!outcome.page.ok && outcome.page.errorClass === 'rejected');
    const failed = (await results<ToApp[]>('posted')).find((m) => m.type === 'failed');
    assert.ok(failed?.type === 'failed' && failed.errorClass === 'rejected');
    const diags = await hook<{ message: string }[]>('diagnostics', doc.uri.toString());
    assert.match(diags[0].message, /read-only/);
  });

  test('a CodeLens above each statement runs it', async () => {
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
    const ours = lenses.filter((l) => l.command?.command === 'quarry.runQuery');
    assert.equal(ours.length, 3);
    assert.match(ours[0].command!.title, /Run on clinic\.sqlite/);
    assert.deepEqual(
      ours.map((l) => l.range.start.line),
      [0, 1, 2],
    );
  });

  test('table and column names complete; a table hovers with its columns and row count', async () => {
    const list = await vscode.commands.executeCommand<vscode.CompletionList>(
      'vscode.executeCompletionItemProvider',
      doc.uri,
      new vscode.Position(0, 7),
    );
    const labels = list.items.map((i) => (typeof i.label === 'string' ? i.label : i.label.label));
    for (const name of ['doctor', 'appointment', 'specialty']) assert.ok(labels.includes(name), `${name} completes`);
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
      'vscode.executeHoverProvider',
      doc.uri,
      doc.positionAt(DOC.indexOf('doctor') + 2),
    );
    const text = hovers
      .flatMap((h) => h.contents)
      .map((c) => (typeof c === 'string' ? c : c.value))
      .join('\n');
    assert.match(text, /doctor\*\* \(table, 3 rows\)/);
    assert.match(text, /`specialty`/);
  });

  test(
    "completion fits the context: tables after FROM and JOIN, that table's columns " + 'after alias. or table.',
    async () => {
      const text = 'SELECT a. FROM appointment a JOIN  WHERE doctor. ';
      const other = await vscode.workspace.openTextDocument({ language: 'sql', content: text });
      await vscode.commands.executeCommand('quarry.bindSqlDocument', other.uri, db);
      /** Quarry's items (they carry a detail) at the offset just past `needle` + `extra`. */
      const ours = async (needle: string, extra = 0) => {
        const list = await vscode.commands.executeCommand<vscode.CompletionList>(
          'vscode.executeCompletionItemProvider',
          other.uri,
          other.positionAt(text.indexOf(needle) + needle.length + extra),
          needle.endsWith('.') ? '.' : undefined,
        );
        return list.items
          .filter((i) => i.detail)
          .map((i) => (typeof i.label === 'string' ? i.label : `${i.label.label}:${i.label.description}`))
          .sort();
      };
      assert.deepEqual(
        await ours('a.'),
        [
          'appointment_id:appointment',
          'day:appointment',
          'doctor_id:appointment',
          'fee:appointment',
          'patient_id:appointment',
        ],
        'after the alias a.: the columns of appointment only',
      );
      assert.deepEqual(await ours('JOIN', 1), ['appointment', 'doctor', 'patient'], 'after JOIN: the tables only');
      assert.deepEqual(await ours('doctor.'), ['doctor_id:doctor', 'name:doctor', 'specialty:doctor']);
      await vscode.window.showTextDocument(other);
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    },
  );
});
