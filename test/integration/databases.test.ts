// The Databases view in a real extension host over the sample workspace: SQLite files found by the glob and checked by
// header (the text file named *.db is left out), tables with row counts, columns with type and PK/FK, Copy DDL to
// the clipboard, Preview Table and Show Schema through the sandbox, the Ask hand-off, and refresh on file events.
import * as assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import type { QuarryApi } from '../../src/extension/extension';
import type { DatabasesTree, DbTreeNode, DatabaseNode, TableNode } from '../../src/extension/databases/tree';
import type { PreviewOutcome } from '../../src/extension/preview/panel';
import type { ToApp as PreviewToApp } from '../../src/protocol/preview';
import { until } from '../support/until';

const EXTENSION_ID = 'quarry.quarry';

function iconId(item: vscode.TreeItem): string | undefined {
  return item.iconPath instanceof vscode.ThemeIcon ? item.iconPath.id : undefined;
}

suite('Databases view', () => {
  let a: QuarryApi;
  let tree: DatabasesTree;
  let folder: string;
  let Database: typeof import('better-sqlite3');
  const made: string[] = [];

  const rel = (p: string) => vscode.workspace.asRelativePath(p);
  const dbNode = async (relPath: string): Promise<DatabaseNode> => {
    const nodes = (await tree.getChildren()) as DatabaseNode[];
    const n = nodes.find((d) => rel(d.path) === relPath);
    assert.ok(n, `${relPath} is listed (listed: ${nodes.map((d) => rel(d.path)).join(', ')})`);
    return n;
  };
  const tableNode = async (relPath: string, table: string): Promise<TableNode> => {
    const kids = await tree.getChildren(await dbNode(relPath));
    const t = kids.find((k): k is TableNode => k.kind === 'table' && k.table.name === table);
    assert.ok(t, `${table} in ${relPath}`);
    return t;
  };
  /** Counts read straight from the file, independently of the extension. */
  const countOf = (path: string, table: string): number => {
    const d = new Database(path, { readonly: true });
    try {
      return (d.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
    } finally {
      d.close();
    }
  };

  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension<QuarryApi>(EXTENSION_ID)!;
    a = await ext.activate();
    assert.ok(a.databases);
    tree = a.databases.tree;
    folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    Database = createRequire(join(ext.extensionPath, 'package.json'))(
      'better-sqlite3',
    ) as typeof import('better-sqlite3');
  });
  suiteTeardown(async () => {
    for (const p of made) rmSync(p, { force: true });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('lists the workspace SQLite files and leaves out a text file named *.db', async () => {
    const paths = await vscode.commands.executeCommand<string[]>('quarry.refreshDatabases');
    const names = paths.map(rel).sort();
    for (const db of ['archive/weather.sqlite', 'data/clinic.sqlite', 'data/orchard.sqlite'])
      assert.ok(names.includes(db), `${db} in ${names.join(', ')}`);
    assert.ok(!names.includes('notes/not-a-database.db'), 'the text file is not listed');
    assert.ok(
      tree
        .rejectedFiles()
        .some((r) => rel(r.path) === 'notes/not-a-database.db' && /not a SQLite database/.test(r.why)),
    );
    const item = tree.getTreeItem(await dbNode('data/clinic.sqlite'));
    assert.equal(item.label, 'clinic.sqlite');
    assert.equal(item.contextValue, 'quarry.database');
    assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
    assert.match(String(item.description), /^data · /);
    assert.equal(a.databases!.view.message?.includes('1 file'), true, a.databases!.view.message);
  });

  test('tables carry their row counts; a view is marked as one', async () => {
    const clinic = await dbNode('data/clinic.sqlite');
    const tables = (await tree.getChildren(clinic)) as TableNode[];
    assert.deepEqual(
      tables.map((t) => t.table.name),
      ['doctor', 'patient', 'appointment'],
    );
    for (const t of tables) {
      const item = tree.getTreeItem(t);
      const n = countOf(clinic.path, t.table.name);
      assert.equal(item.description, `${n} ${n === 1 ? 'row' : 'rows'}`, t.table.name);
      assert.equal(item.contextValue, 'quarry.table');
      assert.equal(iconId(item), 'table');
    }
    assert.deepEqual(
      tables.map((t) => t.table.rowCount),
      [3, 5, 7],
    );
    const view = tree.getTreeItem(await tableNode('archive/weather.sqlite', 'wettest'));
    assert.equal(iconId(view), 'eye');
    assert.equal(view.description, `view · ${countOf((await dbNode('archive/weather.sqlite')).path, 'wettest')} rows`);
  });

  test('columns show type and PK/FK as description and icon', async () => {
    const appt = await tableNode('data/clinic.sqlite', 'appointment');
    const cols = await tree.getChildren(appt);
    const items = new Map(
      cols.map((c) => {
        const i = tree.getTreeItem(c);
        return [String(i.label), i];
      }),
    );
    assert.deepEqual([...items.keys()], ['appointment_id', 'doctor_id', 'patient_id', 'day', 'fee']);
    assert.equal(items.get('appointment_id')!.description, 'INTEGER · PK');
    assert.equal(iconId(items.get('appointment_id')!), 'key');
    assert.equal(items.get('doctor_id')!.description, 'INTEGER · FK → doctor.doctor_id · NOT NULL');
    assert.equal(iconId(items.get('doctor_id')!), 'references');
    assert.equal(items.get('fee')!.description, 'REAL');
    assert.equal(iconId(items.get('fee')!), 'symbol-field');
  });

  test("Copy DDL puts the table's CREATE statement, or the whole database's, on the clipboard", async () => {
    await vscode.env.clipboard.writeText('');
    const tableDdl = await vscode.commands.executeCommand<string>(
      'quarry.copyDdl',
      await tableNode('data/clinic.sqlite', 'appointment'),
    );
    assert.match(tableDdl, /^CREATE TABLE appointment \(/);
    assert.ok(!/CREATE TABLE doctor/.test(tableDdl));
    assert.equal(await vscode.env.clipboard.readText(), tableDdl);

    const clinic = await dbNode('data/clinic.sqlite');
    const dbDdl = await vscode.commands.executeCommand<string>('quarry.copyDdl', clinic);
    assert.equal(await vscode.env.clipboard.readText(), dbDdl);
    assert.deepEqual(
      [...dbDdl.matchAll(/CREATE TABLE (\w+)/g)].map((m) => m[1]),
      ['doctor', 'patient', 'appointment'],
    );
    // The script rebuilds the same schema in an empty database.
    const copy = join(folder, 'ddl-copy.tmp');
    made.push(copy);
    const d = new Database(copy);
    d.exec(dbDdl);
    const names = d.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid").pluck().all();
    d.close();
    assert.deepEqual(names, ['doctor', 'patient', 'appointment']);
  });

  test('Preview Table runs the first rows through the sandbox and opens a preview panel', async () => {
    const outcome = await vscode.commands.executeCommand<PreviewOutcome>(
      'quarry.previewTable',
      await tableNode('data/clinic.sqlite', 'doctor'),
    );
    assert.ok(outcome?.page.ok, outcome?.page.ok === false ? outcome.page.error : 'no outcome');
    assert.deepEqual(outcome.page.columns, ['doctor_id', 'name', 'specialty']);
    assert.equal(outcome.page.rows.length, 3);
    assert.equal(outcome.page.total, 3);
    assert.deepEqual(outcome.page.rows[0], [1, 'Ines Duarte', 'cardiology']);
    await until('the preview tab is open', () =>
      vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.label === 'doctor · clinic.sqlite'),
    );
    // Not a table: the command says so instead of failing.
    assert.equal(
      await vscode.commands.executeCommand('quarry.previewTable', await dbNode('data/clinic.sqlite')),
      undefined,
    );
  });

  test('after a window reload the serializer brings a preview back on its table and runs it again', async () => {
    const preview = (op: string) => vscode.commands.executeCommand<PreviewToApp[]>('quarry.preview.testHook', op);
    const revive = (state: unknown) =>
      vscode.commands.executeCommand<string | null>('quarry.webviews.testHook', 'revive', 'quarry.preview', state);
    const tabs = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).map((t) => t.label);
    const path = join(folder, 'data', 'clinic.sqlite');
    await vscode.commands.executeCommand('quarry.previewTable', { db: path, table: 'doctor' });
    const shown = (await preview('posted')).filter((m) => m.type === 'shown').pop();
    const page = (await preview('posted')).filter((m) => m.type === 'page').pop();
    assert.ok(shown && shown.type === 'shown' && page?.type === 'page');
    assert.equal(shown.path, path, 'the app is told the full path, which it saves');
    await preview('close');
    await until('the preview tab to close', () => !tabs().includes('doctor · clinic.sqlite'));
    await preview('clear');
    assert.equal(await revive({ path, table: 'doctor' }), null);
    const again = await until('the preview to run again', async () =>
      (await preview('posted')).filter((m) => m.type === 'page').pop(),
    );
    assert.ok(again.type === 'page');
    assert.deepEqual({ ...again.page, ms: 0 }, { ...page.page, ms: 0 });
    assert.ok((await preview('posted')).some((m) => m.type === 'shown' && m.path === path));
    await until('the revived tab is titled as before', () => tabs().includes('doctor · clinic.sqlite'));
    assert.match((await revive({ path: 'data/clinic.sqlite', table: 'doctor' })) ?? '', /not an absolute path/);
    assert.match((await revive({ table: 'doctor' })) ?? '', /missing path/);
    await preview('close');
  });

  test('Preview pages, sorts and filters the whole table in SQLite, with the total', async () => {
    const preview = (op: string, arg?: unknown) =>
      vscode.commands.executeCommand<PreviewToApp[]>('quarry.preview.testHook', op, arg);
    const path = join(folder, 'data', 'trips.sqlite');
    made.push(path);
    const d = new Database(path);
    d.exec(`CREATE TABLE trip(id INTEGER PRIMARY KEY, duration INTEGER, fare REAL);
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 9959)
      INSERT INTO trip SELECT i, (i * 7919) % 100003, (i % 5) * 1.0 FROM n;`);
    d.close();
    const largest = (() => {
      const r = new Database(path, { readonly: true });
      try {
        return r.prepare('SELECT max(duration) FROM trip').pluck().get() as number;
      } finally {
        r.close();
      }
    })();
    await preview('clear');
    const outcome = await vscode.commands.executeCommand<PreviewOutcome>('quarry.previewTable', {
      db: path,
      table: 'trip',
    });
    assert.ok(outcome?.page.ok);
    assert.equal(outcome.page.total, 9959);
    assert.equal(outcome.page.rows.length, 200);
    const lastPage = async () => {
      const p = (await preview('posted')).filter((m) => m.type === 'page').pop();
      assert.ok(p?.type === 'page');
      return p.page;
    };
    await preview('send', { type: 'page', offset: 200, limit: 200, filters: [] });
    let p = await lastPage();
    assert.equal(p.offset, 200);
    assert.equal(p.rows[0][0], 201);
    assert.equal(p.total, 9959);
    // Today's fault was the largest of the first 200: the sort must run over the whole table.
    await preview('send', { type: 'page', offset: 0, limit: 200, sortColumn: 1, descending: true, filters: [] });
    p = await lastPage();
    assert.equal(p.rows[0][1], largest);
    assert.deepEqual(p.realColumns, [false, false, true]);
    await preview('send', {
      type: 'page',
      offset: 0,
      limit: 200,
      filters: [{ column: 2, text: '=4' }],
    });
    p = await lastPage();
    assert.equal(p.total, 1992);
    // A malformed request is refused on the host and changes nothing.
    await preview('clear');
    await preview('send', { type: 'page', offset: -5, limit: 200, filters: [] });
    assert.deepEqual(await preview('posted'), []);
    await preview('close');
  });

  test("Quarry's own files (.quarry/**) are never listed as databases", async () => {
    const own = join(folder, '.quarry', 'exports');
    mkdirSync(own, { recursive: true });
    const copy = join(own, 'clinic-copy.sqlite');
    copyFileSync(join(folder, 'data', 'clinic.sqlite'), copy);
    made.push(copy);
    const paths = await vscode.commands.executeCommand<string[]>('quarry.refreshDatabases');
    assert.ok(paths.map(rel).includes('data/clinic.sqlite'));
    assert.ok(!paths.some((p) => p.includes('.quarry')), paths.join(', '));
    // The file watcher saw the copy appear: the list is read again, and still leaves it out.
    const again = await vscode.commands.executeCommand<string[]>('quarry.refreshDatabases');
    assert.ok(!again.some((p) => p.includes('.quarry')), again.join(', '));
  });

  test('Show Schema on a file that is not a database says so and opens nothing', async () => {
    const before = vscode.window.activeTextEditor?.document.uri.toString();
    const text = await vscode.commands.executeCommand<string | undefined>(
      'quarry.showSchemaOf',
      join(folder, 'notes', 'not-a-database.db'),
      'list',
    );
    assert.equal(text, undefined);
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), before, 'no document was opened');
  });

  test('Show Schema opens the schema in the prompt style the agent sees', async () => {
    const text = await vscode.commands.executeCommand<string>(
      'quarry.showSchemaOf',
      await dbNode('data/orchard.sqlite'),
      'ddl',
    );
    assert.match(text, /CREATE TABLE/i);
    const editor = await until(
      'the schema document is shown',
      () => vscode.window.activeTextEditor?.document.getText() === text && vscode.window.activeTextEditor,
    );
    // A read-only virtual document: not untitled, never dirty, so closing it asks nothing.
    assert.equal(editor.document.uri.scheme, 'quarry-schema');
    assert.equal(editor.document.isUntitled, false);
    assert.equal(editor.document.languageId, 'sql');
    assert.match(editor.document.uri.path, /orchard\.sqlite schema \(ddl\)\.sql$/);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    assert.ok(
      !vscode.window.visibleTextEditors.some((e) => e.document.uri.scheme === 'quarry-schema'),
      'closed without a save prompt',
    );
  });

  test('Ask about this database hands the database to the Ask feature', async () => {
    const asked: (string | undefined)[] = [];
    const original = a.services.ask;
    a.services.ask = (db) => {
      asked.push(db);
    };
    try {
      const clinic = await dbNode('data/clinic.sqlite');
      await vscode.commands.executeCommand('quarry.askAboutDatabase', clinic);
      assert.deepEqual(asked, [clinic.path]);
      a.services.ask = undefined;
      // Without the Ask feature: a clear message, no exception.
      await vscode.commands.executeCommand('quarry.askAboutDatabase', clinic);
    } finally {
      a.services.ask = original;
    }
  });

  test(
    'a database created, changed or deleted in the ' + 'workspace shows up, updates and goes away by itself',
    async () => {
      const path = join(folder, 'data', 'fresh.sqlite');
      made.push(path);
      const d = new Database(path);
      d.exec(
        "CREATE TABLE fruit (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO fruit (name) VALUES ('fig'), ('plum');",
      );
      d.close();
      const listed = () => tree.getChildren().then((ns) => (ns as DatabaseNode[]).find((n) => n.path === path));
      const node = await until('fresh.sqlite is listed', listed);
      const fruit = async () =>
        ((await tree.getChildren(node)) as DbTreeNode[]).find(
          (k): k is TableNode => k.kind === 'table' && k.table.name === 'fruit',
        );
      assert.equal((await fruit())?.table.rowCount, 2);

      const w = new Database(path);
      w.exec("INSERT INTO fruit (name) VALUES ('quince')");
      w.close();
      await until('the new row count is shown', async () => (await fruit())?.table.rowCount === 3);

      // A text file under a database name is never listed.
      const fake = join(folder, 'data', 'fake.sqlite');
      made.push(fake);
      writeFileSync(fake, 'not a database\n');
      rmSync(path);
      await until('fresh.sqlite is gone', async () => !(await listed()));
      const names = ((await tree.getChildren()) as DatabaseNode[]).map((n) => rel(n.path));
      assert.ok(!names.includes('data/fake.sqlite'), names.join(', '));
    },
  );
});
