// What `quarry mcp` must do through any transport, driven by the MCP TypeScript SDK's own Client against the built CLI
// (dist/cli.js) in a child process: a served folder with real SQLite files (and files it must not serve), every tool
// called, the sandbox's attack classes refused with the file and folder unchanged, a runaway statement killed, a huge
// result capped, malformed arguments answered as tool errors, and ask_quarry's episode saved as `quarry ask` saves it.
// stdio.test.ts and http.test.ts run it over their transport.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { buildDb, fixturesDir, repoRoot, tempDir } from '../../helpers/fixtures';
import { readTrajectories } from '../../../src/core/trajectories';
import { startReplayServer, type ReplayServer } from '../../support/openaiReplayServer';

export const cli = join(repoRoot, 'dist', 'cli.js');

/** The limits the suite starts servers with, so caps are reached quickly. */
const LIMITS = ['--timeout-ms', '1500', '--max-rows', '100', '--max-chars', '3000'];

/** A served folder: what must be listed, and what must not be reachable. */
interface Served {
  root: string;
  /** Where the server saves ask_quarry's trajectories. */
  trajectory: string;
  bookshop: string;
  outside: string;
}

/** The bookshop fixture built once (in one transaction: a statement per fsync is slow on a busy disk), then copied. */
let template: string | undefined;
function bookshopCopy(dir: string, file: string): string {
  template ??= buildDb('bookshop', {
    sql: `BEGIN;\n${readFileSync(join(fixturesDir, 'bookshop.sql'), 'utf8')}\nCOMMIT;`,
  });
  mkdirSync(dir, { recursive: true });
  copyFileSync(template, join(dir, file));
  return join(dir, file);
}

export function servedFolder(): Served {
  const root = tempDir('quarry-mcp-');
  const bookshop = bookshopCopy(root, 'bookshop.sqlite');
  bookshopCopy(join(root, 'concert'), 'concert.sqlite');
  bookshopCopy(join(root, 'deep', 'er'), 'inner.db');
  // Not to be served: a hidden folder, dependencies, a file that is not SQLite, a link to a database outside.
  for (const d of ['.secret', 'node_modules']) bookshopCopy(join(root, d), 'hidden.sqlite');
  writeFileSync(join(root, 'notes.db'), 'not a database');
  const outside = bookshopCopy(tempDir('quarry-mcp-outside-'), 'outside.sqlite');
  symlinkSync(outside, join(root, 'escape.sqlite'));
  return { root, trajectory: join(tempDir(), 'asked.jsonl'), bookshop, outside };
}

export function text(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** The replay server ask_quarry's model is: it answers one question with SQL, then a final query. */
async function replayModel(): Promise<ReplayServer> {
  return startReplayServer({
    script: [
      { turn: 0, response: '<think>Count first.</think>\n<sql>SELECT count(*) AS n FROM author</sql>' },
      { turn: 1, response: '<solution>SELECT name FROM author ORDER BY name LIMIT 2</solution>' },
    ],
  });
}

const hash = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

/** Statements the sandbox refuses, one or more per attack class of test/unit/db/bypass.test.ts. */
function attacks(outsideDir: string): string[] {
  return [
    "INSERT INTO author (name) VALUES ('x')",
    'UPDATE author SET name = 1',
    'DELETE FROM author',
    "REPLACE INTO author (author_id, name) VALUES (1, 'x')",
    "WITH x AS (SELECT 1) INSERT INTO author (name) SELECT 'x' FROM x",
    'WITH x AS (SELECT 1) DELETE FROM author',
    'CREATE TABLE t (a)',
    'DROP TABLE author',
    'CREATE TEMP TABLE t (a)',
    'SELECT 1; DELETE FROM author',
    "ATTACH ':memory:' AS m",
    `ATTACH '${join(outsideDir, 'attached.sqlite')}' AS a`,
    'DETACH main',
    'VACUUM',
    `VACUUM INTO '${join(outsideDir, 'vacuumed.sqlite')}'`,
    'PRAGMA query_only = 0',
    'PRAGMA journal_mode = delete',
    'PRAGMA user_version = 5',
    'EXPLAIN PRAGMA case_sensitive_like = 1',
    "SELECT load_extension('/tmp/nothing.so')",
    'BEGIN IMMEDIATE',
    'REINDEX',
    'ANALYZE',
  ];
}

interface SuiteOptions {
  /** Starts a server (`quarry mcp ARGS…` over the transport) and returns a connected client. */
  connect: (args: string[]) => Promise<Client>;
}

/** Registers the transport-independent tests. */
export function mcpSuite(label: string, opts: SuiteOptions): void {
  const served = servedFolder();
  const outsideDir = tempDir('quarry-mcp-attack-');
  let model: ReplayServer;
  let client: Client;
  before(async () => {
    model = await replayModel();
    client = await opts.connect([
      '--db-dir',
      served.root,
      ...LIMITS,
      '--model',
      model.spec(),
      '--trajectory',
      served.trajectory,
    ]);
  });
  after(async () => {
    await client?.close();
    await model?.close();
  });
  const call = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  test(`${label}: initialize names the server; six read-only tools with bounded schemas`, async () => {
    assert.equal(client.getServerVersion()?.name, 'quarry');
    assert.match(client.getInstructions() ?? '', /list_databases/);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      'ask_quarry',
      'describe_schema',
      'explain_query',
      'list_databases',
      'run_sql',
      'sample_rows',
    ]);
    for (const t of tools) {
      assert.equal(t.annotations?.readOnlyHint, true, t.name);
      assert.ok((t.description ?? '').length > 80, `${t.name} has a description written for a model`);
      assert.equal(t.inputSchema.additionalProperties, false, `${t.name} refuses unknown arguments`);
    }
    const run = tools.find((t) => t.name === 'run_sql')!;
    const props = run.inputSchema.properties as Record<string, { maximum?: number }>;
    assert.equal(props.max_rows.maximum, 100, 'the --max-rows cap is in the schema');
    assert.equal(props.timeout_ms.maximum, 1500, 'the --timeout-ms cap is in the schema');
    assert.deepEqual(run.inputSchema.required, ['database', 'sql']);
  });

  test(`${label}: list_databases: SQLite files by id; no hidden, dependency, non-SQLite or escaping ones`, async () => {
    const r = await call('list_databases', {});
    assert.equal(r.isError, undefined, text(r));
    const ids = (r.structuredContent as { databases: { id: string }[] }).databases.map((d) => d.id);
    assert.deepEqual(ids, ['bookshop', 'concert', 'deep/er/inner.db']);
    assert.doesNotMatch(text(r), new RegExp(served.root.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
  });

  test(`${label}: describe_schema renders each prompt style`, async () => {
    const list = await call('describe_schema', { database: 'bookshop' });
    assert.match(text(list), /^Table: author\n- author_id \(INTEGER, PRIMARY KEY\)/m);
    assert.match(text(list), /Foreign keys:\nbook\.author_id = author\.author_id/);
    const ddl = await call('describe_schema', { database: 'concert', style: 'ddl', sample_rows: 2 });
    assert.match(text(ddl), /create table author \(/i);
    assert.match(text(ddl), /2 example rows from table author/);
    const names = await call('describe_schema', { database: 'deep/er/inner.db', style: 'names' });
    assert.equal(text(names), 'author\nbook\ncustomer\norders\norder_item');
    const short = await call('describe_schema', { database: 'bookshop', style: 'ddl', max_chars: 300 });
    assert.ok(text(short).length <= 300, `${text(short).length} characters`);
  });

  test(`${label}: sample_rows: a table's first rows as an observation; a missing table is a tool error`, async () => {
    const r = await call('sample_rows', { database: 'bookshop', table: 'author', rows: 2, format: 'table' });
    assert.equal(r.isError, undefined, text(r));
    assert.equal(text(r).split('\n').length, 6, text(r)); // rule, header, rule, 2 rows, rule
    assert.match(text(r), /^\+-+/);
    assert.equal((r.structuredContent as { rowCount: number }).rowCount, 2);
    const missing = await call('sample_rows', { database: 'bookshop', table: 'nope"; DROP TABLE author; --' });
    assert.equal(missing.isError, true);
    assert.match(text(missing), /^sql: no such table: nope"; DROP TABLE author; --/);
  });

  test(`${label}: run_sql answers in each observation format the agent protocols use`, async () => {
    const sql = 'SELECT name FROM author ORDER BY name LIMIT 2';
    const df = await call('run_sql', { database: 'bookshop', sql });
    assert.equal(df.isError, undefined, text(df));
    assert.match(text(df), /^ +name\n0 /);
    const json = await call('run_sql', { database: 'bookshop', sql, format: 'json' });
    assert.match(text(json), /^\{"columns": \["name"\], "data": \[\{"name": /);
    const py = await call('run_sql', { database: 'bookshop', sql, format: 'text' });
    assert.match(text(py), /^\[\('.+',\), \('.+',\)\]$/);
    const sqlError = await call('run_sql', { database: 'bookshop', sql: 'SELECT nope FROM author' });
    assert.equal(sqlError.isError, true);
    assert.equal(text(sqlError), 'sql: no such column: nope');
  });

  test(`${label}: every attack class is "rejected"; the file, its folder and the outside stay unchanged`, async () => {
    const before = { hash: hash(served.bookshop), listing: readdirSync(served.root).sort() };
    for (const sql of attacks(outsideDir)) {
      const r = await call('run_sql', { database: 'bookshop', sql });
      assert.equal(r.isError, true, `${sql} was not refused: ${text(r)}`);
      assert.match(text(r), /^rejected: /, sql);
      const plan = await call('explain_query', { database: 'bookshop', sql });
      assert.equal(plan.isError, true, `explain_query planned ${sql}: ${text(plan)}`);
    }
    assert.equal(hash(served.bookshop), before.hash);
    assert.deepEqual(readdirSync(served.root).sort(), before.listing);
    assert.deepEqual(readdirSync(outsideDir), []);
    const still = await call('run_sql', { database: 'bookshop', sql: 'SELECT count(*) AS n FROM author' });
    assert.equal(still.isError, undefined, text(still));
  });

  test(`${label}: a runaway statement is killed at the time limit and the server answers the next call`, async () => {
    const started = Date.now();
    const r = await call('run_sql', {
      database: 'bookshop',
      sql: 'WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r',
    });
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /^timeout: /);
    assert.ok(Date.now() - started < 30_000);
    const next = await call('run_sql', { database: 'bookshop', sql: 'SELECT 1 AS one' });
    assert.equal(text(next), '   one\n0    1');
  });

  test(`${label}: a huge result is capped in rows and characters, noting how many rows there were`, async () => {
    const r = await call('run_sql', {
      database: 'bookshop',
      sql:
        'WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 200000) ' +
        "SELECT i, printf('%.400c', 'x') AS pad FROM r",
      max_rows: 100,
    });
    assert.equal(r.isError, undefined, text(r));
    assert.ok(text(r).length <= 3000, `${text(r).length} characters`);
    assert.match(text(r), /\.\.\. \(showing \d+ of 100000\+ rows; truncated to 3000 characters\)$/);
    const meta = r.structuredContent as { rowCount: number; rowCountExact: boolean; truncated: boolean };
    assert.equal(meta.rowCount, 100000);
    assert.equal(meta.rowCountExact, false);
    assert.equal(meta.truncated, true);
  });

  test(`${label}: malformed arguments are tool errors, not protocol errors or crashes`, async () => {
    const bad: [string, Record<string, unknown>, RegExp][] = [
      ['run_sql', { database: 'bookshop', sql: 5 }, /sql/],
      ['run_sql', { sql: 'SELECT 1' }, /database/],
      ['run_sql', { database: 'bookshop', sql: 'SELECT 1', max_rows: 101 }, /max_rows/],
      ['run_sql', { database: 'bookshop', sql: 'SELECT 1', timeout_ms: 99_999 }, /timeout_ms/],
      ['run_sql', { database: 'bookshop', sql: 'SELECT 1', rm: '-rf' }, /rm/],
      ['run_sql', { database: 'bookshop', sql: '' }, /sql/],
      ['describe_schema', { database: 'bookshop', style: 'fancy' }, /style/],
      ['sample_rows', { database: 'bookshop', table: 'author', rows: 0 }, /rows/],
      ['ask_quarry', { database: 'bookshop', question: '   ' }, /question/],
    ];
    for (const [name, args, field] of bad) {
      const r = await call(name, args);
      assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}: ${text(r)}`);
      assert.match(text(r), /validation/i);
      assert.match(text(r), field);
    }
  });

  test(`${label}: databases by id only: paths, "..", hidden folders and escaping links are refused`, async () => {
    const cases: [string, RegExp][] = [
      [served.bookshop, /by its id/],
      [served.outside, /by its id/],
      ['../outside.sqlite', /not a database this server serves/],
      ['.secret/hidden.sqlite', /not a database this server serves/],
      ['escape.sqlite', /outside the served folder/],
      ['nothing', /no database "nothing"/],
      ['notes.db', /not a SQLite database/],
    ];
    for (const [database, why] of cases) {
      const r = await call('run_sql', { database, sql: 'SELECT count(*) FROM author' });
      assert.equal(r.isError, true, `${database}: ${text(r)}`);
      assert.match(text(r), why, database);
      assert.ok(!text(r).includes(served.root), `the answer names the served folder: ${text(r)}`);
    }
  });

  test(`${label}: explain_query shows the plan tree of a statement without running it`, async () => {
    const r = await call('explain_query', {
      database: 'bookshop',
      sql: 'SELECT b.title FROM book b JOIN author a ON a.author_id = b.author_id ORDER BY b.title',
    });
    assert.equal(r.isError, undefined, text(r));
    assert.match(text(r), /^QUERY PLAN\n/);
    assert.match(text(r), /SCAN b/);
    assert.match(text(r), /SEARCH a USING INTEGER PRIMARY KEY/);
    assert.match(text(r), /USE TEMP B-TREE FOR ORDER BY/);
  });

  test(`${label}: ask_quarry runs Quarry's agent with the configured model and saves the trajectory`, async () => {
    const r = await call('ask_quarry', { database: 'bookshop', question: 'Which two authors come first by name?' });
    assert.equal(r.isError, undefined, text(r));
    assert.match(text(r), /^Final SQL:\nSELECT name FROM author ORDER BY name LIMIT 2\n\nResult:\n\+-/);
    assert.match(text(r), /answered after 2 turns; trajectory appended to /);
    assert.ok(existsSync(served.trajectory));
    const { records } = await readTrajectories(served.trajectory);
    const last = records.at(-1)!;
    assert.equal(last.finalSql, 'SELECT name FROM author ORDER BY name LIMIT 2');
    assert.equal(last.end, 'answer');
    assert.equal(last.meta.source, 'mcp');
    assert.ok(model.requests.length >= 2, 'the model was called');
  });
}
