// Tests of agent/env: reset gives the opening messages with the introspected schema; step before reset is refused; an
// execute action runs its SQL in the sandbox and the observation carries the result
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqlPool } from '../../../src/core/db/pool';
import { SqlAgentEnv, SchemaCache, EnvError } from '../../../src/core/agent/env';
import { buildDb, tempDir, repoRoot } from '../../helpers/fixtures';
import { tagProtocol } from './envSupport';

const db = buildDb('bookshop');
const pool = createSqlPool({ size: 1, spares: 1 });
after(() => pool.close());

const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';

function env(config: Record<string, unknown> = {}, question = 'How many authors are there?') {
  return new SqlAgentEnv({
    task: { question, dbPath: db },
    protocol: tagProtocol,
    config,
    pool,
    schemaCache: new SchemaCache(),
  });
}

test('reset gives the opening messages with the introspected schema; step before reset is refused', async () => {
  const e = env();
  await assert.rejects(
    e.step('<sql>SELECT 1</sql>'),
    (err: Error) => err instanceof EnvError && /not been reset/.test(err.message),
  );
  const opening = e.reset();
  assert.deepEqual(
    opening.map((m) => m.role),
    ['system', 'user'],
  );
  assert.equal(opening[0].content, 'Tables: author, book, customer, orders, order_item');
  assert.equal(opening[1].content, 'How many authors are there?');
  assert.deepEqual(e.messages(), opening);
  assert.equal(e.turnsLeft, 3);
});

test('an execute action runs its SQL in the sandbox and the observation carries the result', async () => {
  const e = env();
  e.reset();
  const h = new Database(db, { readonly: true });
  const count = (h.prepare('SELECT count(*) AS n FROM author').get() as { n: number }).n;
  h.close();
  const step = await e.step('<sql>SELECT count(*) AS n FROM author</sql>');
  assert.equal(step.action.kind, 'execute');
  assert.equal(step.exec?.ok, true);
  assert.deepEqual(step.exec?.columns, ['n']);
  assert.deepEqual(step.exec?.rows, [[count]]);
  assert.equal(step.done, false);
  assert.equal(step.turnsLeft, 2);
  assert.equal(step.observations.length, 1);
  assert.match(
    step.observations[0].content,
    new RegExp(`^<observation>    n\\n0  ${count}\\n2 turns left</observation>$`),
  );
  // The conversation grows by the assistant turn and its observation.
  assert.deepEqual(
    e
      .messages()
      .slice(2)
      .map((m) => m.role),
    ['assistant', 'user'],
  );
  assert.equal(e.messages()[2].content, '<sql>SELECT count(*) AS n FROM author</sql>');

  const answer = await e.step('<solution>SELECT count(*) FROM author</solution>');
  assert.deepEqual(
    [answer.done, answer.end, answer.finalSql, answer.exec],
    [true, 'answer', 'SELECT count(*) FROM author', null],
  );
  await assert.rejects(e.step('<solution>SELECT 1</solution>'), /episode is over/);
  // reset starts over with a fresh budget.
  e.reset();
  assert.equal(e.turnsLeft, 3);
  assert.equal(e.messages().length, 2);
});

test('SQL errors and rejected statements are observations, not failures', async () => {
  const e = env();
  e.reset();
  const bad = await e.step('<sql>SELECT nope FROM author</sql>');
  assert.equal(bad.exec?.ok, false);
  assert.equal(bad.exec?.errorClass, 'sql');
  assert.match(bad.observations[0].content, /no such column: nope/);
  assert.equal(bad.done, false);
  const write = await e.step('<sql>DELETE FROM author</sql>');
  assert.equal(write.exec?.errorClass, 'rejected');
  assert.equal(write.done, false);
});

test('invalid actions get the protocol message and use a turn; a protocol may end the episode on them', async () => {
  const e = env();
  e.reset();
  const s = await e.step('I will think about it first.');
  assert.equal(s.action.kind, 'invalid');
  assert.deepEqual(s.action.problems, ['no <sql> or <solution> block']);
  assert.equal(s.exec, null);
  assert.match(s.observations[0].content, /Your previous action is invalid/);
  assert.equal(s.turnsLeft, 2);

  const strict = env({ endOnInvalid: true });
  strict.reset();
  const end = await strict.step('nothing here');
  assert.deepEqual([end.done, end.end, end.finalSql], [true, 'invalid', null]);
});

test(
  'the budget ends the episode without an answer, or ' + 'grants one final call when the protocol asks for it',
  async () => {
    const plain = env({ maxTurns: 2 });
    plain.reset();
    assert.equal((await plain.step('<sql>SELECT 1</sql>')).done, false);
    const last = await plain.step('<sql>SELECT 2</sql>');
    assert.deepEqual([last.done, last.end, last.finalSql, last.turnsLeft], [true, 'budget', null, 0]);
    assert.equal(last.exec?.ok, true, 'the last turn still runs its SQL');

    const withFinal = env({ maxTurns: 1, finalCall: true });
    withFinal.reset();
    const s = await withFinal.step('<sql>SELECT 1</sql>');
    assert.equal(s.done, false);
    assert.equal(withFinal.inFinalCall, true);
    assert.deepEqual(
      s.observations.map(
        (o) => o.content.startsWith('<observation>') || o.content === 'Give the final <solution> now.',
      ),
      [true, true],
    );
    assert.equal(s.observations.at(-1)?.content, 'Give the final <solution> now.');
    const fin = await withFinal.step('<solution>SELECT 42</solution>');
    assert.deepEqual([fin.done, fin.end, fin.finalSql], [true, 'answer', 'SELECT 42']);
    assert.equal(withFinal.turnsTaken, 2);

    // The final call must answer: an exploratory query there is not run and the episode ends on the budget.
    const stubborn = env({ maxTurns: 1, finalCall: true });
    stubborn.reset();
    await stubborn.step('<sql>SELECT 1</sql>');
    const no = await stubborn.step('<sql>SELECT 2</sql>');
    assert.deepEqual([no.done, no.end, no.finalSql, no.exec], [true, 'budget', null, null]);
  },
);

test('statement caps come from the config: maxRows keeps that many rows, timeoutMs stops runaway queries', async () => {
  const e = env({ maxRows: 2, timeoutMs: 300 });
  assert.equal(e.execMaxRows, 2);
  e.reset();
  const rows = await e.step('<sql>SELECT name FROM author</sql>');
  assert.equal(rows.exec?.rows.length, 2);
  assert.equal(rows.exec?.truncated, true);
  const slow = await e.step(`<sql>${RUNAWAY}</sql>`);
  assert.equal(slow.exec?.errorClass, 'timeout');
  assert.match(slow.observations[0].content, /timed out after 300 ms/);
});

test('aborting mid-query kills the statement, rejects with AbortError, and the pool keeps serving', async () => {
  const e = env({ timeoutMs: 60_000 });
  e.reset();
  const ac = new AbortController();
  let parsed = '';
  const running = e.step(`<sql>${RUNAWAY}</sql>`, {
    signal: ac.signal,
    onAction: (a) => {
      parsed = a.sql ?? '';
    },
  });
  assert.equal(parsed, RUNAWAY, 'the action is reported before the SQL runs');
  setTimeout(() => ac.abort(), 150);
  await assert.rejects(running, (err: Error) => err.name === 'AbortError');
  const again = env();
  again.reset();
  assert.equal((await again.step('<sql>SELECT 7 AS x</sql>')).exec?.rows[0][0], 7);
});

test('the schema cache introspects a database once and again only after the file changes', () => {
  const dir = tempDir();
  const path = buildDb('spider-concert', { dir });
  const cache = new SchemaCache(2);
  const first = cache.get(path);
  assert.equal(cache.get(path), first, 'same object while the file is unchanged');
  const h = new Database(path);
  h.exec('CREATE TABLE extra (x INTEGER)');
  h.close();
  utimesSync(path, new Date(), new Date(Date.now() + 5000));
  const second = cache.get(path);
  assert.notEqual(second, first);
  assert.ok(second.tables.some((t) => t.name === 'extra'));
  cache.get(buildDb('bookshop', { dir }));
  cache.get(buildDb('db-sandbox', { dir }));
  assert.equal(cache.size, 2, 'least recently used entries are dropped');

  const notDb = join(dir, 'notes.sqlite');
  writeFileSync(notDb, 'just text, not a database');
  assert.throws(() => new SchemaCache().get(notDb), /not a SQLite database/);
  assert.throws(
    () => new SchemaCache().get(join(repoRoot, 'no', 'such.sqlite')),
    (err: Error) => err.message === `no such file: ${join(repoRoot, 'no', 'such.sqlite')}`,
  );
});

test('a bad turn budget is refused when the env is made', () => {
  assert.throws(() => env({ maxTurns: 0 }), /maxTurns must be a positive integer, got 0/);
});
