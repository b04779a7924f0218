// Tests of agent/loop: answer path: the record holds the task, prompt, turns with executions, usage and timings;
// budget exhausted: the episode ends with end=budget, or after the protocol\'s final call
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqlPool } from '../../../src/core/db/pool';
import { ModelError } from '../../../src/core/models/types';
import { runEpisode, EpisodeSetupError, type EpisodeEvent, type RunEpisodeOptions } from '../../../src/core/agent/loop';
import { SchemaCache } from '../../../src/core/agent/env';
import { buildDb, tempDir } from '../../helpers/fixtures';
import { scriptedModel, tagProtocol, type Script } from './envSupport';

const db = buildDb('bookshop');
const pool = createSqlPool({ size: 1, spares: 1 });
after(() => pool.close());

const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
const authors = (() => {
  const h = new Database(db, { readonly: true });
  try {
    return (h.prepare('SELECT count(*) AS n FROM author').get() as { n: number }).n;
  } finally {
    h.close();
  }
})();

function episode(script: Script[], extra: Partial<RunEpisodeOptions> = {}) {
  const model = scriptedModel(script);
  const events: EpisodeEvent[] = [];
  const run = runEpisode({
    task: {
      id: 't1',
      question: 'How many authors are there?',
      dbPath: db,
      dbId: 'bookshop',
      gold: 'SELECT count(*) FROM author',
      difficulty: 'easy',
    },
    protocol: tagProtocol,
    model,
    pool,
    sampling: { temperature: 0, maxTokens: 256 },
    schemaCache: new SchemaCache(),
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return { model, events, run };
}

test('answer path: the record holds the task, prompt, turns with executions, usage and timings', async () => {
  const { model, events, run } = episode(
    [
      '<think>count them</think><sql>SELECT count(*) AS n FROM author</sql> trailing text the server never sends',
      '<solution>SELECT count(*) FROM author</solution>',
    ],
    { groupId: 'g1', sample: 2, meta: { dataset: 'unit' } },
  );
  const r = await run;
  assert.equal(r.schema, 'quarry.trajectory/1');
  assert.deepEqual([r.end, r.finalSql, r.error], ['answer', 'SELECT count(*) FROM author', null]);
  assert.deepEqual([r.groupId, r.sample, r.meta], ['g1', 2, { dataset: 'unit' }]);
  assert.equal(r.task.db.sha256, createHash('sha256').update(readFileSync(db)).digest('hex'));
  assert.deepEqual(
    [r.task.id, r.task.db.path, r.task.db.id, r.task.gold, r.task.difficulty, r.task.evidence, r.task.history],
    ['t1', db, 'bookshop', 'SELECT count(*) FROM author', 'easy', null, []],
  );
  assert.deepEqual(r.protocol, { name: 'skyrl', config: { maxTurns: 3 }, budget: 3 });
  assert.deepEqual(r.model, { spec: 'scripted:test', sampling: { temperature: 0, maxTokens: 256 } });
  assert.deepEqual(
    r.prompt.map((m) => m.role),
    ['system', 'user'],
  );

  assert.equal(r.turns.length, 2);
  const [t0, t1] = r.turns;
  // The server cut the text at the stop string; the protocol put it back.
  assert.equal(t0.assistant, '<think>count them</think><sql>SELECT count(*) AS n FROM author</sql>');
  assert.deepEqual(t0.action, {
    kind: 'execute',
    sql: 'SELECT count(*) AS n FROM author',
    thought: null,
    mdp: ['EXECUTE'],
    problems: [],
  });
  assert.deepEqual(
    { ...t0.exec, ms: 0 },
    { ok: true, errorClass: null, error: null, columns: ['n'], rowCount: 1, truncated: false, ms: 0 },
  );
  assert.match(t0.observations[0].content, new RegExp(`0  ${authors}\\n`));
  assert.equal(t1.exec, null);
  assert.deepEqual(t1.observations, []);
  assert.equal(t1.finishReason, 'stop');
  assert.deepEqual(r.usage, {
    promptTokens: t0.usage.promptTokens + t1.usage.promptTokens,
    completionTokens: t0.usage.completionTokens + t1.usage.completionTokens,
  });
  assert.ok(r.timings.totalMs >= r.timings.modelMs + r.timings.envMs - 1e-6);

  // The model saw the protocol's stop strings with the caller's sampling, and the whole conversation each time.
  assert.deepEqual(model.requests[0].sampling, { temperature: 0, maxTokens: 256, stop: ['</sql>', '</solution>'] });
  assert.deepEqual(
    model.requests[1].messages.map((m) => m.role),
    ['system', 'user', 'assistant', 'user'],
  );
  assert.equal(model.requests[1].messages[2].content, t0.assistant);

  // Events stream in order, text deltas add up to what the server sent.
  const kinds = events.map((e) => e.type);
  assert.deepEqual(
    kinds.filter((k) => k !== 'text'),
    ['start', 'turn', 'action', 'exec', 'observation', 'turn', 'action', 'done'],
  );
  const streamed = events
    .filter((e): e is Extract<EpisodeEvent, { type: 'text' }> => e.type === 'text' && e.index === 0)
    .map((e) => e.delta)
    .join('');
  assert.equal(streamed, '<think>count them</think><sql>SELECT count(*) AS n FROM author');
  assert.equal((events.at(-1) as Extract<EpisodeEvent, { type: 'done' }>).record, r);
});

test("budget exhausted: the episode ends with end=budget, or after the protocol's final call", async () => {
  const plain = await episode(['<sql>SELECT 1</sql>', '<sql>SELECT 2</sql>'], { config: { maxTurns: 2 } }).run;
  assert.deepEqual([plain.end, plain.finalSql, plain.turns.length, plain.protocol.budget], ['budget', null, 2, 2]);

  const { model, run } = episode(['<sql>SELECT 1</sql>', '<solution>SELECT count(*) FROM author</solution>'], {
    config: { maxTurns: 1, finalCall: true },
  });
  const fin = await run;
  assert.deepEqual([fin.end, fin.finalSql, fin.turns.length], ['answer', 'SELECT count(*) FROM author', 2]);
  assert.equal(model.requests[1].messages.at(-1)?.content, 'Give the final <solution> now.');
  assert.equal(fin.turns[0].observations.length, 2, 'the last observation and the final-call message');
});

test('invalid actions and SQL errors are recorded turn by turn and the model can recover', async () => {
  const r = await episode([
    'Let me think without doing anything.',
    '<sql>SELECT nope FROM author</sql>',
    '<solution>SELECT count(*) FROM author</solution>',
  ]).run;
  assert.equal(r.end, 'answer');
  assert.deepEqual(
    r.turns.map((t) => t.action.kind),
    ['invalid', 'execute', 'answer'],
  );
  assert.deepEqual(r.turns[0].action.problems, ['no <sql> or <solution> block']);
  assert.equal(r.turns[0].exec, null);
  assert.deepEqual(
    [r.turns[1].exec?.ok, r.turns[1].exec?.errorClass, r.turns[1].exec?.error],
    [false, 'sql', 'no such column: nope'],
  );
});

test('model errors end the episode with end=error and the message, keeping earlier turns', async () => {
  const r = await episode([
    '<sql>SELECT 1</sql>',
    { error: new ModelError('server', 'HTTP 500 from the server: overloaded') },
  ]).run;
  assert.deepEqual([r.end, r.turns.length, r.finalSql], ['error', 1, null]);
  assert.equal(r.error, 'model error (server): HTTP 500 from the server: overloaded');

  const plain = await episode([{ error: new TypeError('fetch failed') }]).run;
  assert.deepEqual([plain.end, plain.error], ['error', 'model error: fetch failed']);

  const cut = await episode([{ text: 'half a thought', finishReason: 'error', stopString: null }]).run;
  assert.deepEqual([cut.end, cut.error], ['error', "the model stopped generating with finish reason 'error'"]);
});

test('a model call past modelTimeoutMs ends the episode, even when the backend ignores its abort signal', async () => {
  const polite = await episode([{ hang: true }], { modelTimeoutMs: 100 }).run;
  assert.deepEqual(
    [polite.end, polite.error],
    ['error', 'model error (timeout): the model call timed out after 100 ms'],
  );
  const deaf = await episode([{ hang: true, ignoreAbort: true }], { modelTimeoutMs: 100 }).run;
  assert.deepEqual([deaf.end, deaf.error], ['error', 'model error (timeout): the model call timed out after 100 ms']);
});

test('SQL timeouts are observations, not episode failures', async () => {
  const r = await episode([`<sql>${RUNAWAY}</sql>`, '<solution>SELECT 1</solution>'], { config: { timeoutMs: 200 } })
    .run;
  assert.equal(r.end, 'answer');
  assert.equal(r.turns[0].exec?.errorClass, 'timeout');
  assert.match(r.turns[0].observations[0].content, /timed out after 200 ms/);
});

test('cancellation mid-generation ends with end=cancelled and keeps the completed turns', async () => {
  const ac = new AbortController();
  const r = await episode(['<sql>SELECT 1</sql>', { hang: true, partial: '<think>hmm' }], {
    signal: ac.signal,
    onEvent: (e) => {
      if (e.type === 'text' && e.index === 1) setImmediate(() => ac.abort());
    },
  }).run;
  assert.deepEqual([r.end, r.error, r.turns.length], ['cancelled', null, 1]);
  assert.equal(r.turns[0].exec?.ok, true);

  // A backend that never reacts to the abort cannot hold the episode.
  const ac2 = new AbortController();
  setTimeout(() => ac2.abort(), 100);
  const deaf = await episode([{ hang: true, ignoreAbort: true }], { signal: ac2.signal }).run;
  assert.deepEqual([deaf.end, deaf.turns.length], ['cancelled', 0]);

  const ac3 = new AbortController();
  ac3.abort();
  const before = await episode(['<solution>SELECT 1</solution>'], { signal: ac3.signal }).run;
  assert.deepEqual([before.end, before.turns.length], ['cancelled', 0]);
});

test('cancellation mid-query kills the statement and keeps that turn without an execution', async () => {
  const ac = new AbortController();
  const r = await episode([`<sql>${RUNAWAY}</sql>`], {
    config: { timeoutMs: 60_000 },
    signal: ac.signal,
    onEvent: (e) => {
      if (e.type === 'action') setTimeout(() => ac.abort(), 100);
    },
  }).run;
  assert.deepEqual([r.end, r.turns.length], ['cancelled', 1]);
  assert.equal(r.turns[0].action.sql, RUNAWAY);
  assert.deepEqual([r.turns[0].exec, r.turns[0].observations], [null, []]);
});

test('a throwing event listener does not disturb the episode', async () => {
  const r = await episode(['<solution>SELECT 1</solution>'], {
    onEvent: () => {
      throw new Error('listener bug');
    },
  }).run;
  assert.equal(r.end, 'answer');
});

test('setup errors reject with EpisodeSetupError: unknown protocol, unusable database', async () => {
  const model = scriptedModel([]);
  await assert.rejects(
    runEpisode({ task: { question: 'q', dbPath: db }, protocolName: 'nope', model, pool }),
    (err: Error) =>
      err instanceof EpisodeSetupError && /unknown protocol 'nope'; valid protocols: skyrl/.test(err.message),
  );
  const notDb = join(tempDir(), 'x.sqlite');
  writeFileSync(notDb, 'hello');
  await assert.rejects(
    runEpisode({ task: { question: 'q', dbPath: notDb }, protocol: tagProtocol, model, pool }),
    (err: Error) =>
      err instanceof EpisodeSetupError && err.message.includes(notDb) && /not a SQLite database/.test(err.message),
  );
  const missing = join(tempDir(), 'gone.sqlite');
  await assert.rejects(
    runEpisode({ task: { question: 'q', dbPath: missing }, protocol: tagProtocol, model, pool }),
    (err: Error) => err instanceof EpisodeSetupError && err.message === `no such file: ${missing}`,
  );
  await assert.rejects(
    runEpisode({ task: { question: 'q', dbPath: db }, protocol: tagProtocol, config: { maxTurns: 2.5 }, model, pool }),
    (err: Error) => err instanceof EpisodeSetupError && err.message === 'maxTurns must be a positive integer, got 2.5',
  );
  assert.equal(model.requests.length, 0);
});

test('a sandbox failure ends the episode with end=error and says so', async () => {
  const closed = createSqlPool({ size: 1, spares: 0 });
  await closed.close();
  // The schema is already known (set-up reads it through the pool, which is what fails here during the turn).
  const schemaCache = new SchemaCache();
  schemaCache.get(db);
  const r = await episode(['<sql>SELECT 1</sql>'], { pool: closed, schemaCache }).run;
  assert.deepEqual([r.end, r.turns.length, r.turns[0].exec], ['error', 1, null]);
  assert.equal(r.error, 'the SQL sandbox failed: the SQL pool is closed');
});

test('a database the sandbox cannot read at set-up is a setup error, not a failed episode', async () => {
  const closed = createSqlPool({ size: 1, spares: 0 });
  await closed.close();
  await assert.rejects(
    episode(['<sql>SELECT 1</sql>'], { pool: closed }).run,
    (err: Error) => err instanceof EpisodeSetupError,
  );
});
