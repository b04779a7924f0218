// `quarry serve-env` over a real loopback socket: the routes answer what the CLI prints for the same input, a scripted
// SkyRL episode through /v1/episodes ends with the reward the same record gets offline, and bad requests get their
// errors while the server keeps serving.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startEnvServer, type EnvServer } from '../../../src/app/envService/server';
import { main } from '../../../src/cli/main';
import { loadPanel, scorePanel, createScoringResources } from '../../../src/core/rewards';
import { createSqlPool } from '../../../src/core/db/pool';
import type { TrajectoryRecord } from '../../../src/core/trajectories/types';
import { buildDb, tempDir } from '../../helpers/fixtures';

const root = tempDir();
mkdirSync(join(root, 'concert'));
const dbPath = join(root, 'concert', 'concert.sqlite');
copyFileSync(buildDb('spider-concert'), dbPath);
const outside = buildDb('spider-concert');
let server: EnvServer;
let guarded: EnvServer;
const pool = createSqlPool({ size: 1, spares: 0 });

before(async () => {
  server = await startEnvServer({ dbDirs: [root], maxEpisodes: 3, maxBodyBytes: 1 << 20 });
  guarded = await startEnvServer({ dbDirs: [root], token: 's3cret' });
});
after(async () => {
  await server.close();
  await guarded.close();
  await pool.close();
});

async function call(
  path: string,
  body?: unknown,
  opts: { method?: string; raw?: string; token?: string; on?: EnvServer } = {},
) {
  const s = opts.on ?? server;
  const res = await fetch(s.url + path, {
    method: opts.method ?? (body === undefined && opts.raw === undefined ? 'GET' : 'POST'),
    headers: { 'content-type': 'application/json', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
    body: opts.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function cli(argv: string[]): Promise<string> {
  let out = '';
  const stdout = new Writable({
    write(c, _e, cb) {
      out += String(c);
      cb();
    },
  });
  const stderr = new Writable({
    write(_c, _e, cb) {
      cb();
    },
  });
  const code = await main(argv, { stdout, stderr, cwd: root });
  assert.equal(code, 0);
  return out;
}

test('health and the OpenAPI document name every route', async () => {
  const h = await call('/v1/health');
  assert.deepEqual([h.status, h.body.ok], [200, true]);
  const doc = await call('/v1/openapi.json');
  assert.deepEqual(Object.keys(doc.body.paths).sort(), [
    '/v1/episodes',
    '/v1/episodes/{id}',
    '/v1/episodes/{id}/step',
    '/v1/execute',
    '/v1/health',
    '/v1/odt',
    '/v1/openapi.json',
    '/v1/reward',
  ]);
});

test('/v1/reward is exactly `quarry reward --json`, item for item in a batch', async () => {
  const gold = 'SELECT name FROM singer ORDER BY age DESC';
  const preds = ['SELECT name FROM singer ORDER BY age DESC', 'SELECT name FROM singer', 'SELECT nme FROM singer'];
  for (const panel of ['sqltrail', 'skyrl', 'mtir', 'progress']) {
    const r = await call(
      '/v1/reward',
      preds.map((predSql) => ({ panel, db: 'concert', goldSql: gold, predSql })),
    );
    assert.equal(r.status, 200);
    for (let i = 0; i < preds.length; i++) {
      const printed = JSON.parse(
        await cli(['reward', '--panel', panel, '--db', dbPath, '--gold-sql', gold, '--pred-sql', preds[i], '--json']),
      );
      assert.deepEqual(r.body[i], printed, `${panel} #${i}`);
    }
  }
});

test('/v1/execute is the exec-batch record; /v1/odt is `quarry odt --json`', async () => {
  const e = await call('/v1/execute', {
    id: 7,
    db: 'concert',
    sql: 'SELECT count(*) AS n FROM singer',
    format: 'json',
  });
  assert.deepEqual([e.status, e.body.id, e.body.ok, e.body.columns], [200, 7, true, ['n']]);
  const o = await call('/v1/odt', { pred: 'SELECT name FROM singer', gold: 'SELECT name, age FROM singer' });
  assert.deepEqual(
    o.body,
    JSON.parse(
      await cli(['odt', '--pred', 'SELECT name FROM singer', '--gold', 'SELECT name, age FROM singer', '--json']),
    ),
  );
  // With a database (its schema read in the SQL workers): the same as `quarry odt --db`.
  const pred = 'SELECT name FROM singer JOIN singer_in_concert USING (singer_id)';
  const withDb = await call('/v1/odt', {
    pred,
    gold: 'SELECT name, concert_id FROM singer, singer_in_concert',
    db: 'concert',
  });
  assert.equal(withDb.status, 200);
  assert.deepEqual(
    withDb.body,
    JSON.parse(
      await cli([
        'odt',
        '--pred',
        pred,
        '--gold',
        'SELECT name, concert_id FROM singer, singer_in_concert',
        '--db',
        dbPath,
        '--json',
      ]),
    ),
  );
});

test('a scripted SkyRL episode through /v1/episodes ends with the reward the same record gets offline', async () => {
  const gold = 'SELECT count(*) FROM singer';
  const start = await call('/v1/episodes', {
    protocol: 'skyrl',
    db: 'concert',
    question: 'How many singers?',
    goldSql: gold,
  });
  assert.equal(start.status, 200, JSON.stringify(start.body));
  assert.match(start.body.messages[0].content, /How many singers\?/);
  assert.deepEqual(start.body.stop, ['</sql>', '</solution>'], 'where the next generation stops');
  const id = start.body.id as string;
  // vLLM strips the stop string: the environment restores </sql> as the agent loop does.
  const s1 = await call(`/v1/episodes/${id}/step`, { action: '<think>look</think>\n<sql>SELECT count(*) FROM singer' });
  assert.deepEqual([s1.status, s1.body.done, s1.body.reward], [200, false, null]);
  assert.match(s1.body.observation, /<observation>/);
  const record = (await call(`/v1/episodes/${id}`)).body as TrajectoryRecord;
  assert.equal(record.turns[0].assistant, '<think>look</think>\n<sql>SELECT count(*) FROM singer</sql>');
  const s2 = await call(`/v1/episodes/${id}/step`, { action: `<think>done</think>\n<solution>${gold}</solution>` });
  assert.deepEqual([s2.body.done, s2.body.reward, s2.body.terms], [true, 1, { format: 0, exec: 1 }]);
  assert.equal(s2.body.info.ex, true, 'the final SQL matched the gold');
  // Offline: the record the server built, scored by the same panel in this process.
  record.turns.push({
    ...record.turns[0],
    index: 1,
    assistant: `<think>done</think>\n<solution>${gold}</solution>`,
    action: s2.body.info.action,
    observations: [],
    exec: null,
  });
  record.finalSql = gold;
  record.end = 'answer';
  const offline = await scorePanel(
    loadPanel('skyrl'),
    { goldSql: gold, dbPath, trajectory: record },
    createScoringResources({ run: pool, timeoutMs: 5000 }),
  );
  assert.equal(offline.total, s2.body.reward);
  assert.equal((await call(`/v1/episodes/${id}/step`, { action: 'x' })).status, 404, 'a finished episode is gone');
});

test('info.ex is the final SQL against the gold under any panel: one without exec.match, and a gated one', async () => {
  const gold = 'SELECT count(*) FROM singer';
  const run = async (panel: string, answer: string) => {
    const start = await call('/v1/episodes', {
      protocol: 'skyrl',
      db: 'concert',
      question: 'How many?',
      goldSql: gold,
      panel,
    });
    return (await call(`/v1/episodes/${start.body.id}/step`, { action: answer })).body;
  };
  // progress-oneshot scores with the diagnostic tree (no exec.match term): ex comes from the evaluator.
  const right = await run('progress-oneshot', `<think>t</think>\n<solution>${gold}</solution>`);
  assert.deepEqual([right.done, right.info.ex], [true, true]);
  const wrong = await run('progress-oneshot', '<think>t</think>\n<solution>SELECT name FROM singer</solution>');
  assert.equal(wrong.info.ex, false);
  // skyrl with no <think>: the format term fails and gates exec, but the SQL itself is right.
  const gated = await run('skyrl', `<solution>${gold}</solution>`);
  assert.deepEqual([gated.reward, gated.info.ex], [-1, true]);
});

test('bad requests get their errors and the server keeps serving', async () => {
  const bad = await call('/v1/reward', undefined, { raw: '{"panel": ' });
  assert.deepEqual([bad.status, bad.body.error.kind], [400, 'bad-json']);
  const proto = await call('/v1/episodes', { protocol: 'nope', db: 'concert', question: 'q' });
  assert.deepEqual([proto.status, proto.body.error.kind], [400, 'bad-request']);
  assert.match(proto.body.error.message, /unknown protocol 'nope'; valid protocols: skyrl, sqltrail/);
  const out = await call('/v1/execute', { db: outside, sql: 'SELECT 1' });
  assert.deepEqual([out.status, out.body.error.kind], [400, 'outside-roots']);
  const dots = await call('/v1/execute', { db: '../' + outside.split('/').slice(-2).join('/'), sql: 'SELECT 1' });
  assert.ok([400, 404].includes(dots.status), 'a relative path cannot climb out of the roots');
  const missing = await call('/v1/execute', { db: 'no_such_db', sql: 'SELECT 1' });
  assert.deepEqual([missing.status, missing.body.error.kind], [404, 'not-found']);
  const big = await call('/v1/execute', undefined, {
    raw: JSON.stringify({ db: 'concert', sql: 'SELECT 1', pad: 'x'.repeat(2 << 20) }),
  });
  assert.deepEqual([big.status, big.body.error.kind], [413, 'too-large']);
  const runaway = await call('/v1/execute', {
    db: 'concert',
    sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c',
    timeoutMs: 300,
  });
  assert.deepEqual([runaway.status, runaway.body.ok, runaway.body.errorClass], [200, false, 'timeout']);
  const route = await call('/v1/nothing', {});
  assert.equal(route.status, 404);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++)
    ids.push((await call('/v1/episodes', { protocol: 'sqltrail', db: 'concert', question: 'q' })).body.id);
  const full = await call('/v1/episodes', { protocol: 'sqltrail', db: 'concert', question: 'q' });
  assert.deepEqual([full.status, full.body.error.kind], [429, 'too-many']);
  for (const id of ids) assert.equal((await call(`/v1/episodes/${id}`, undefined, { method: 'DELETE' })).status, 200);
  assert.equal((await call('/v1/health')).body.ok, true, 'still serving');
});

test('a token: required on every route but health; refused without one off loopback', async () => {
  assert.equal((await call('/v1/odt', { pred: 'SELECT 1', gold: 'SELECT 1' }, { on: guarded })).status, 401);
  assert.equal(
    (await call('/v1/odt', { pred: 'SELECT 1', gold: 'SELECT 1' }, { on: guarded, token: 'wrong' })).status,
    401,
  );
  assert.equal(
    (await call('/v1/odt', { pred: 'SELECT 1', gold: 'SELECT 1' }, { on: guarded, token: 's3cret' })).status,
    200,
  );
  await assert.rejects(
    startEnvServer({ dbDirs: [root], host: '0.0.0.0' }),
    /refusing to listen on 0\.0\.0\.0 without a token/,
  );
  const tokenFile = join(root, 'token');
  writeFileSync(tokenFile, '');
  let err = '';
  const code = await main(['serve-env', '--db-dir', root, '--token-file', tokenFile], {
    stdout: new Writable({
      write(_c, _e, cb) {
        cb();
      },
    }),
    stderr: new Writable({
      write(c, _e, cb) {
        err += String(c);
        cb();
      },
    }),
    cwd: root,
  });
  assert.equal(code, 2);
  assert.match(err, /--token-file .* is empty/);
});

test('quarry serve-env prints its URL as the first stdout line, serves, and stops on TERM with exit 0', async () => {
  const { spawn } = await import('node:child_process');
  const cli = join(__dirname, '..', '..', '..', 'src', 'cli', 'run.js');
  const child = spawn(process.execPath, [cli, 'serve-env', '--port', '0', '--db-dir', root], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const first = await new Promise<string>((resolve) => {
    let buf = '';
    child.stdout.on('data', (c: Buffer) => {
      buf += String(c);
      if (buf.includes('\n')) resolve(buf.split('\n')[0]);
    });
  });
  const m = /^quarry env server listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(first);
  assert.ok(m, first);
  const health = (await (await fetch(`${m[1]}/v1/health`)).json()) as { ok: boolean };
  assert.equal(health.ok, true);
  child.kill('SIGTERM');
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  assert.equal(code, 0);
});
