// `quarry serve-env --test-suite TSDIR` over a real loopback socket and real SQLite files: /v1/reward and a scripted
// episode take back a near miss that matches on the transit database but not on the suite's variant (the answer says
// over how many databases and which variant disagreed, never the server's folders); panels that require a suite are
// refused when the server has none or none for the database; a panel file cannot name a folder; a variant rewritten
// on disk drops the cached results; and the spawned CLI serves with the flag.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startEnvServer, type EnvServer } from '../../../src/app/envService/server';
import { tempDir } from '../../helpers/fixtures';
import { TRANSIT_GOLD, TRANSIT_NEAR_MISS, TRANSIT_REWRITE, transitSuite } from '../../helpers/transitSuite';

const t = transitSuite();
const panelDir = tempDir('quarry-panels-');
writeFileSync(
  join(panelDir, 'needs-suite.json'),
  JSON.stringify({ name: 'needs-suite', extends: 'skyrl', exec: { testSuite: true } }),
);
writeFileSync(
  join(panelDir, 'names-folder.json'),
  JSON.stringify({ name: 'names-folder', extends: 'skyrl', exec: { testSuite: '/etc' } }),
);
let server: EnvServer;
let plain: EnvServer;

before(async () => {
  server = await startEnvServer({ dbDirs: [t.dbDir], testSuite: t.tsDir, panelDirs: [panelDir] });
  plain = await startEnvServer({ dbDirs: [t.dbDir], panelDirs: [panelDir] });
});
after(async () => {
  await server.close();
  await plain.close();
});

async function post(url: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const reward = (predSql: string, extra: Record<string, unknown> = {}, url = server.url) =>
  post(url, '/v1/reward', { panel: 'skyrl', db: 'transit', goldSql: TRANSIT_GOLD, predSql, ...extra });
const execTerm = (body: any) => body.terms.find((x: { name: string }) => x.name === 'exec');

test('/v1/reward: a near miss right on the database is taken back by the suite; the answer says where', async () => {
  const r = await reward(TRANSIT_NEAR_MISS);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(execTerm(r.body).value, 0);
  assert.match(execTerm(r.body).explanation, /not on test-suite variant transit\/transit_v1\.sqlite/);
  assert.match(execTerm(r.body).explanation, /checked over 2 databases of the test suite/);
  assert.deepEqual(r.body.testSuite, { databases: 2, singleCorrect: true, disagreed: 'transit/transit_v1.sqlite' });
  assert.ok(!JSON.stringify(r.body).includes(t.tsDir), 'the suite folder is never named');
  const single = await reward(TRANSIT_NEAR_MISS, {}, plain.url);
  assert.equal(execTerm(single.body).value, 1, 'without the suite the false positive pays');
  const right = await reward(TRANSIT_REWRITE);
  assert.equal(execTerm(right.body).value, 1);
  assert.deepEqual(right.body.testSuite, { databases: 2, singleCorrect: true });
});

test('a panel requiring a suite: 400 without one, or for a database with no folder in it; never a folder', async () => {
  const none = await reward(TRANSIT_GOLD, { panel: 'needs-suite.json' }, plain.url);
  assert.equal(none.status, 400);
  assert.match(none.body.error.message, /requires a test suite .* none was given/);
  const lonely = await reward(TRANSIT_GOLD, { panel: 'needs-suite.json', db: 'lonely' });
  assert.equal(lonely.status, 400);
  assert.match(lonely.body.error.message, /has no folder for database 'lonely'/);
  const ok = await reward(TRANSIT_NEAR_MISS, { panel: 'needs-suite.json' });
  assert.equal(ok.status, 200);
  assert.equal(execTerm(ok.body).value, 0);
  const named = await reward(TRANSIT_GOLD, { panel: 'names-folder.json' });
  assert.equal(named.status, 400);
  assert.match(named.body.error.message, /a panel cannot name a test-suite folder/);
  const ep = await post(plain.url, '/v1/episodes', {
    protocol: 'skyrl',
    db: 'transit',
    question: 'How many stops in North?',
    goldSql: TRANSIT_GOLD,
    panel: 'needs-suite.json',
  });
  assert.equal(ep.status, 400);
  assert.match(ep.body.error.message, /requires a test suite/);
});

test('an episode whose answer is a near miss ends with reward 0, ex false and the variant named', async () => {
  const start = await post(server.url, '/v1/episodes', {
    protocol: 'skyrl',
    db: 'transit',
    question: 'How many stops in North?',
    goldSql: TRANSIT_GOLD,
  });
  assert.equal(start.status, 200, JSON.stringify(start.body));
  const end = await post(server.url, `/v1/episodes/${start.body.id}/step`, {
    action: `<think>count</think>\n<solution>${TRANSIT_NEAR_MISS}</solution>`,
  });
  assert.equal(end.status, 200, JSON.stringify(end.body));
  assert.deepEqual([end.body.done, end.body.terms.exec, end.body.info.ex], [true, 0, false]);
  assert.deepEqual(end.body.info.testSuite, {
    databases: 2,
    singleCorrect: true,
    disagreed: 'transit/transit_v1.sqlite',
  });
});

test('a variant rewritten on disk drops the cached results: the reward follows its new content', async () => {
  assert.equal(execTerm((await reward(TRANSIT_NEAR_MISS)).body).value, 0);
  const db = new Database(t.variantPath);
  try {
    db.exec('DELETE FROM stop WHERE id = 5');
  } finally {
    db.close();
  }
  const after = await reward(TRANSIT_NEAR_MISS);
  assert.equal(execTerm(after.body).value, 1, JSON.stringify(after.body));
  assert.match(execTerm(after.body).explanation, /all agree/);
  const db2 = new Database(t.variantPath);
  try {
    db2.exec("INSERT INTO stop VALUES (5, 'Elm', 2)");
  } finally {
    db2.close();
  }
  assert.equal(execTerm((await reward(TRANSIT_NEAR_MISS)).body).value, 0);
});

test('quarry serve-env --test-suite serves over the suite; a suite that is no folder is refused', async () => {
  const { spawn, spawnSync } = await import('node:child_process');
  const cli = join(__dirname, '..', '..', '..', 'src', 'cli', 'run.js');
  const child = spawn(process.execPath, [cli, 'serve-env', '--db-dir', t.dbDir, '--test-suite', t.tsDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const first = await new Promise<string>((resolve) => {
      let buf = '';
      child.stdout.on('data', (c: Buffer) => {
        buf += String(c);
        if (buf.includes('\n')) resolve(buf.split('\n')[0]);
      });
    });
    const url = /listening on (http:\/\/\S+)$/.exec(first)![1];
    const r = await reward(TRANSIT_NEAR_MISS, {}, url);
    assert.equal(execTerm(r.body).value, 0);
    assert.equal(r.body.testSuite.disagreed, 'transit/transit_v1.sqlite');
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  const bad = spawnSync(
    process.execPath,
    [cli, 'serve-env', '--db-dir', t.dbDir, '--test-suite', join(t.tsDir, 'no')],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /test suite .* does not exist/);
});
