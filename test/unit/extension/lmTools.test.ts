// Tests of the language-model tools' calls (src/extension/lmTools, the parts without `vscode`) on the sample
// databases in a temporary workspace, through a real sandbox pool: databases named only as the workspace lists them,
// the observation a run returns, a write refused and the file unchanged, a plan's tree, and each call as a valid
// trajectory step grouped by its agent-mode session.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqlPool } from '../../../src/core/db';
import {
  describeSchema,
  explainPlan,
  listDatabases,
  resolveToolDatabase,
  runSql,
  ToolInputError,
  LM_TOOLS,
  type ToolContext,
} from '../../../src/extension/lmTools/toolCalls';
import { toolStepRecord } from '../../../src/extension/lmTools/stepRecord';
import { ToolSessions, tokenKey } from '../../../src/extension/lmTools/sessions';
import { validateTrajectory } from '../../../src/core/trajectories/validate';
import { dbSha256 } from '../../../src/core/trajectories/dbHash';
import { buildDb, repoRoot, tempDir } from '../../helpers/fixtures';

const workspace = tempDir();
mkdirSync(join(workspace, 'data'));
const sample = (name: string) =>
  buildDb(name, {
    dir: join(workspace, 'data'),
    sql: readFileSync(join(repoRoot, 'media', 'samples', `${name}.sql`), 'utf8'),
  });
const bookshop = sample('bookshop');
const transit = sample('transit');
/** A database outside the workspace's list: the tools must not open it. */
const outside = buildDb('outside', { sql: 'CREATE TABLE secret (x); INSERT INTO secret VALUES (42);' });

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const ctx: ToolContext = {
  pool,
  databases: [bookshop, transit],
  workspace,
  timeoutMs: 5000,
  maxRows: 50,
  maxChars: 9000,
};

test('databases are named as the workspace lists them; anything else is refused with the list', () => {
  assert.equal(
    listDatabases(ctx).text,
    '2 SQLite databases in the workspace (pass one of these names as "database"):\n' +
      '- data/bookshop.sqlite\n- data/transit.sqlite',
  );
  assert.equal(resolveToolDatabase(ctx, 'data/bookshop.sqlite'), bookshop);
  assert.equal(resolveToolDatabase(ctx, './data/transit.sqlite'), transit);
  assert.equal(resolveToolDatabase(ctx, 'transit.sqlite'), transit);
  assert.equal(resolveToolDatabase(ctx, 'bookshop'), bookshop);
  assert.equal(resolveToolDatabase(ctx, bookshop), bookshop);
  for (const name of [outside, '../outside.sqlite', 'nope']) {
    assert.throws(
      () => resolveToolDatabase(ctx, name),
      (e: Error) => e instanceof ToolInputError && /data\/bookshop\.sqlite, data\/transit\.sqlite/.test(e.message),
      name,
    );
  }
});

test('a run returns the rows as SkyRL-SQL observes them, with the count', async () => {
  const r = await runSql(ctx, {
    database: 'data/bookshop.sqlite',
    sql: "SELECT name FROM author WHERE country = 'Poland' ORDER BY name",
  });
  assert.equal(r.db, bookshop);
  assert.equal(r.exec?.ok, true);
  assert.match(r.text, /^ +name\n0 +Olga Tokarczuk\n1 +Wisława Szymborska\n\(2 rows, [\d.]+ ms\)$/);
  const capped = await runSql(ctx, { database: 'bookshop', sql: 'SELECT book_id FROM book', maxRows: 2 });
  assert.match(capped.text, /\.\.\. \(showing 2 of \d+ rows\)/);
});

test('a write is refused by the sandbox, the file unchanged; bad input is refused before anything runs', async () => {
  const before = readFileSync(bookshop);
  const r = await runSql(ctx, { database: 'bookshop', sql: 'DELETE FROM author' });
  assert.equal(r.exec?.errorClass, 'rejected');
  assert.match(r.text, /^statement rejected: it would write[\s\S]*\(Quarry runs statements read-only/);
  const db = new Database(bookshop, { readonly: true });
  assert.ok((db.prepare('SELECT count(*) FROM author').pluck().get() as number) > 0);
  db.close();
  assert.ok(readFileSync(bookshop).equals(before));
  const err = await runSql(ctx, { database: 'bookshop', sql: 'SELECT nope FROM author' });
  assert.equal(err.text, 'OperationalError: no such column: nope');
  for (const input of [
    null,
    { database: 'bookshop' },
    { database: 'bookshop', sql: '' },
    { database: 'bookshop', sql: 'SELECT 1', maxRows: 0 },
    { database: 'bookshop', sql: 'SELECT 1', openInGrid: 'yes' },
    { database: 7, sql: 'SELECT 1' },
  ]) {
    await assert.rejects(runSql(ctx, input), ToolInputError, JSON.stringify(input));
  }
});

test('a plan is the indented tree with warnings; a schema is rendered in the asked style', async () => {
  const plan = await explainPlan(ctx, {
    database: 'bookshop',
    sql: 'SELECT title, (SELECT name FROM author a WHERE a.author_id = b.author_id) FROM book b',
  });
  assert.match(plan.text, /^QUERY PLAN\n\|--SCAN b {2}\[book: \d+ rows\]\n`--CORRELATED SCALAR SUBQUERY 1/);
  assert.match(plan.text, /Warnings:\n- Correlated subquery/);
  const refused = await explainPlan(ctx, { database: 'bookshop', sql: 'DROP TABLE book' });
  assert.match(refused.text, /^No plan \(rejected\)/);
  const names = await describeSchema(ctx, { database: 'transit', style: 'names' });
  assert.match(names.text, /^Schema of data\/transit\.sqlite \(names\):\n/);
  assert.match(names.text, /line_stop/);
  const ddl = await describeSchema(ctx, { database: 'transit' });
  assert.match(ddl.text, /create table line \(\n {4}line_id INTEGER,[\s\S]*3 example rows from table line:/);
  await assert.rejects(describeSchema(ctx, { database: 'transit', style: 'xml' }), ToolInputError);
});

test('each call is a valid one-turn trajectory step; a run is its final SQL, grouped by session', async () => {
  const sessions = new ToolSessions(1000);
  const token = { sessionId: 'chat-1' };
  const a = sessions.next(token, 0);
  const b = sessions.next({ sessionId: 'chat-1' }, 10);
  const other = sessions.next(undefined, 20);
  const later = sessions.next(token, 5000);
  assert.equal(a.session, b.session);
  assert.deepEqual([a.step, b.step], [0, 1]);
  assert.notEqual(other.session, a.session);
  assert.notEqual(later.session, a.session, 'a pause past the idle time starts a new session');
  assert.equal(later.step, 0);
  assert.equal(tokenKey(undefined), 'direct');

  const input = { database: 'bookshop', sql: 'SELECT count(*) AS n FROM book', question: 'How many books?' };
  const run = await runSql(ctx, input);
  const rec = toolStepRecord({
    tool: LM_TOOLS.runSql,
    input,
    session: a.session,
    step: a.step,
    startedAt: new Date(0),
    ms: 3,
    db: { path: bookshop, sha256: await dbSha256(bookshop) },
    question: input.question,
    sql: run.sql,
    exec: run.exec,
    text: run.text,
  });
  assert.equal(validateTrajectory(rec), null);
  assert.deepEqual(
    [rec.groupId, rec.sample, rec.finalSql, rec.end, rec.task.question, rec.turns[0].exec?.rowCount],
    [a.session, 0, input.sql, 'answer', 'How many books?', 1],
  );
  assert.equal(rec.turns[0].observations[0].content, run.text);
  assert.deepEqual(rec.meta, { source: 'vscode-lm-tool', tool: 'quarry_run_sql', session: a.session, step: 0 });

  const list = toolStepRecord({
    tool: LM_TOOLS.listDatabases,
    input: {},
    session: b.session,
    step: b.step,
    startedAt: new Date(0),
    ms: 1,
    db: null,
    workspace,
    text: listDatabases(ctx).text,
  });
  assert.equal(validateTrajectory(list), null);
  assert.deepEqual(
    [list.finalSql, list.end, list.turns[0].exec, list.turns[0].action.kind],
    [null, 'budget', null, 'memory'],
  );
  assert.equal(list.task.db.path, workspace);
  const bad = toolStepRecord({
    tool: LM_TOOLS.runSql,
    input: { sql: 'x' },
    session: b.session,
    step: 2,
    startedAt: new Date(0),
    ms: 0,
    db: null,
    text: 'Error: "database" is required',
    error: '"database" is required',
  });
  assert.equal(validateTrajectory(bad), null);
  assert.deepEqual(
    [bad.end, bad.turns[0].action.kind, bad.turns[0].action.problems],
    ['invalid', 'invalid', ['"database" is required']],
  );
});
