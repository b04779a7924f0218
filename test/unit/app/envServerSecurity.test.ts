// Attacks on a real `quarry serve-env` process over real sockets (issue 29): panel names reading the server's files
// (a secret, a named pipe, /dev/zero), client limits that switch the statement limit off, a client leaving a statement
// running, cross-site requests (text/plain bodies, foreign Host and Origin), a malformed %-escape, and error answers
// naming the server's paths. Each is refused and the server keeps answering. A hang shows as the test's timeout.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { copyFileSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { panelSpec } from '../../../src/core/rewards/registry';
import { registerBuiltins } from '../../../src/core/rewards/builtins';
import { buildDb, tempDir } from '../../helpers/fixtures';

const root = realpathSync(tempDir());
const dbDir = join(root, 'dbs');
mkdirSync(join(dbDir, 'concert'), { recursive: true });
copyFileSync(buildDb('spider-concert'), join(dbDir, 'concert', 'concert.sqlite'));
mkdirSync(join(dbDir, 'junk'));
writeFileSync(join(dbDir, 'junk', 'junk.sqlite'), 'this is not a database '.repeat(100));
mkdirSync(join(dbDir, 'folder.sqlite'));
const panelDir = join(root, 'panels');
mkdirSync(join(panelDir, 'team'), { recursive: true });
registerBuiltins();
writeFileSync(join(panelDir, 'team', 'mine.json'), JSON.stringify(panelSpec('skyrl')));
writeFileSync(join(panelDir, 'broken.json'), 'secret-content: not json');
const secret = join(root, 'secret.json');
writeFileSync(secret, 'root:x:0:0:the-secret-text');
symlinkSync(secret, join(panelDir, 'link.json'));
symlinkSync('/dev/zero', join(panelDir, 'zero.json'));
execFileSync('mkfifo', [join(root, 'pipe.json')]);
execFileSync('mkfifo', [join(panelDir, 'pipe.json')]);

const CLI = join(__dirname, '..', '..', '..', 'src', 'cli', 'run.js');
const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';
const GOLD = 'SELECT count(*) FROM singer';
const TEN_ROWS = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 10) SELECT x FROM c';

interface Served {
  url: string;
  port: number;
  pid: number;
}

const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

/** Starts `quarry serve-env --db-dir dbs ARGS…` in its own process; resolves once it listens. */
async function serve(args: string[] = []): Promise<Served> {
  const child = spawn(process.execPath, [CLI, 'serve-env', '--port', '0', '--db-dir', dbDir, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  child.stderr!.resume();
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (c: Buffer) => {
      buf += String(c);
      const m = /listening on (\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`serve-env exited ${code}`)));
  });
  return { url, port: Number(new URL(url).port), pid: child.pid! };
}

interface Answer {
  status: number;
  text: string;
  body: any;
}

interface Call {
  method?: string;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  /** Called with the request once sent (to destroy it: a client that goes away). */
  sent?: (destroy: () => void) => void;
}

/** One HTTP request with full control of its headers (fetch would not let a test set Host). */
function call(s: Served, path: string, c: Call = {}): Promise<Answer> {
  const data = c.raw ?? (c.body === undefined ? undefined : JSON.stringify(c.body));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: s.port,
        path,
        method: c.method ?? (data === undefined ? 'GET' : 'POST'),
        headers: { 'content-type': 'application/json', ...c.headers },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let body: unknown = null;
          try {
            body = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode!, text, body });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
    c.sent?.(() => {
      req.destroy();
      resolve({ status: 0, text: '', body: null });
    });
  });
}

const health = async (s: Served) => (await call(s, '/v1/health')).body as Record<string, any>;
/** The server's peak resident memory so far (VmHWM), MiB: a read that grew it and was freed again still shows. */
const peakMiB = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** Waits until the server is serving at least one request item (its /v1/health inFlight). */
async function busy(s: Served): Promise<void> {
  while (!((await health(s)).inFlight > 0)) await new Promise((r) => setTimeout(r, 20));
}

/** A message with the name it quotes taken out, so refusals of different names compare. */
const quotedAway = (message: string) => message.replace(/'[^']*'/g, "'P'");

const reward = (panel: string) => ({ panel, db: 'concert', goldSql: GOLD, predSql: GOLD });

const plain = serve();
const withPanels = serve(['--panel-dir', panelDir]);

test('a panel outside the --panel-dir folders is refused alike, existing or not, never quoted', async () => {
  for (const s of [await plain, await withPanels]) {
    const messages = new Set<string>();
    for (const panel of [
      '/etc/passwd',
      '/etc/no-such-file',
      secret,
      join(root, 'no-such.json'),
      '../secret.json',
      '../no-such.json',
    ]) {
      const r = await call(s, '/v1/reward', { body: reward(panel) });
      assert.equal(r.status, 400, `${panel}: ${r.text}`);
      assert.doesNotMatch(r.text, /root:|the-secret-text|no such file|not valid JSON/, panel);
      messages.add(quotedAway(r.body.error.message));
    }
    assert.equal(messages.size, 1, `one refusal for every path: ${[...messages].join(' | ')}`);
  }
  // Inside a panel folder: a symlink out of it is refused like a missing file; a broken file is not quoted.
  const s = await withPanels;
  const link = await call(s, '/v1/reward', { body: reward('link.json') });
  const missing = await call(s, '/v1/reward', { body: reward('missing.json') });
  assert.equal(link.status, 400);
  assert.equal(quotedAway(link.body.error.message), quotedAway(missing.body.error.message));
  const broken = await call(s, '/v1/reward', { body: reward('broken.json') });
  assert.equal(broken.status, 400);
  assert.doesNotMatch(broken.text, /secret-content/);
  // The same rule on /v1/episodes.
  const ep = await call(s, '/v1/episodes', {
    body: { protocol: 'skyrl', db: 'concert', question: 'q', goldSql: GOLD, panel: '/etc/passwd' },
  });
  assert.equal(ep.status, 400);
  assert.doesNotMatch(ep.text, /root:/);
});

test('a named pipe as panel never blocks the server', { timeout: 60_000 }, async () => {
  for (const [s, panel] of [
    [await plain, join(root, 'pipe.json')],
    [await withPanels, 'pipe.json'],
    [await withPanels, join(panelDir, 'pipe.json')],
  ] as const) {
    const r = await call(s, '/v1/reward', { body: reward(panel) });
    assert.equal(r.status, 400, r.text);
    assert.equal((await health(s)).ok, true, 'still answering');
    const ep = await call(s, '/v1/episodes', {
      body: { protocol: 'skyrl', db: 'concert', question: 'q', goldSql: GOLD, panel },
    });
    assert.equal(ep.status, 400, ep.text);
    assert.equal((await health(s)).ok, true, 'still answering');
  }
});

test('/dev/zero as panel is refused and the server does not grow', { timeout: 60_000 }, async () => {
  for (const [s, panel] of [
    [await plain, '/dev/zero'],
    [await withPanels, 'zero.json'],
    [await withPanels, '/dev/zero'],
  ] as const) {
    const before = peakMiB(s.pid);
    const r = await call(s, '/v1/reward', { body: reward(panel) });
    assert.equal(r.status, 400, r.text);
    assert.ok(peakMiB(s.pid) - before < 64, `the server grew by ${peakMiB(s.pid) - before} MiB`);
  }
});

test('a panel file inside a --panel-dir folder is served, as the built-in panel it copies', async () => {
  const s = await withPanels;
  const mine = await call(s, '/v1/reward', { body: reward('team/mine.json') });
  const builtin = await call(s, '/v1/reward', { body: reward('skyrl') });
  assert.equal(mine.status, 200, mine.text);
  assert.deepEqual(mine.body.total, builtin.body.total);
  const ep = await call(s, '/v1/episodes', {
    body: { protocol: 'skyrl', db: 'concert', question: 'q', goldSql: GOLD, panel: join(panelDir, 'team/mine.json') },
  });
  assert.equal(ep.status, 200, ep.text);
  // The plain server serves built-in panels only.
  assert.equal((await call(await plain, '/v1/reward', { body: reward('team/mine.json') })).status, 400);
});

test('a client timeoutMs of 2^31 is held to --max-timeout-ms: two runaways do not pin both workers', {
  timeout: 60_000,
}, async () => {
  const s = await serve(['--jobs', '2', '--max-timeout-ms', '1000', '--max-rows', '2', '--max-turns', '3']);
  const runaway = { db: 'concert', sql: RUNAWAY, timeoutMs: 2 ** 31 };
  const answers = await Promise.all([
    call(s, '/v1/execute', { body: runaway }),
    call(s, '/v1/execute', { body: { ...runaway, timeoutMs: Number.MAX_SAFE_INTEGER } }),
  ]);
  for (const r of answers) assert.deepEqual([r.status, r.body.errorClass], [200, 'timeout'], r.text);
  const next = await call(s, '/v1/execute', { body: { db: 'concert', sql: TEN_ROWS, maxRows: 1e9 } });
  assert.deepEqual([next.status, next.body.ok, next.body.rows.length], [200, true, 2], 'maxRows held to --max-rows');
  const ep = await call(s, '/v1/episodes', {
    body: { protocol: 'skyrl', db: 'concert', question: 'q', maxTurns: 1e6 },
  });
  const record = await call(s, `/v1/episodes/${ep.body.id}`);
  assert.equal(record.body.protocol.config.maxTurns, 3, 'maxTurns held to --max-turns');
  for (const bad of [{ timeoutMs: -1 }, { timeoutMs: 'x' }, { maxRows: 0.5 }, { id: { a: 1 } }])
    assert.equal((await call(s, '/v1/execute', { body: { db: 'concert', sql: 'SELECT 1', ...bad } })).status, 400);
});

test('batches, text fields and history are capped by the server', async () => {
  const s = await serve(['--max-batch', '4', '--max-field-chars', '1000', '--max-turns', '3']);
  const batch = await call(s, '/v1/odt', { body: Array(5).fill({ pred: 'SELECT 1', gold: 'SELECT 1' }) });
  assert.equal(batch.status, 413);
  for (const body of [
    { pred: `SELECT '${'x'.repeat(2000)}'`, gold: 'SELECT 1' },
    { pred: 'SELECT 1', gold: 'SELECT 1', [`k${'x'.repeat(2000)}`]: 1 },
  ])
    assert.equal((await call(s, '/v1/odt', { body })).status, 413);
  const question = await call(s, '/v1/episodes', {
    body: { protocol: 'skyrl', db: 'concert', question: 'q'.repeat(2000) },
  });
  assert.equal(question.status, 413);
  const history = await call(s, '/v1/episodes', {
    body: {
      protocol: 'skyrl',
      db: 'concert',
      question: 'q',
      history: Array(4).fill({ question: 'q', sql: 'SELECT 1' }),
    },
  });
  assert.equal(history.status, 413);
  const step = await call(s, '/v1/episodes/x/step', { body: { action: 'a'.repeat(2000) } });
  assert.equal(step.status, 413);
});

test('a client that disconnects cancels its statement and frees the worker', { timeout: 20_000 }, async () => {
  // One worker, statements allowed 10 minutes: only cancelling frees it for the next request within the test's time.
  const s = await serve(['--jobs', '1', '--max-timeout-ms', '600000']);
  await call(s, '/v1/execute', {
    body: { db: 'concert', sql: RUNAWAY, timeoutMs: 600_000 },
    sent: (destroy) => void busy(s).then(destroy),
  });
  const next = await call(s, '/v1/execute', { body: { db: 'concert', sql: 'SELECT count(*) FROM singer' } });
  assert.deepEqual([next.status, next.body.ok], [200, true], next.text);
  // A reward's statement (its limit 30 s, past the test's own timeout) goes the same way.
  await call(s, '/v1/reward', {
    body: { panel: 'skyrl', db: 'concert', goldSql: GOLD, predSql: RUNAWAY },
    sent: (destroy) => void busy(s).then(destroy),
  });
  const after = await call(s, '/v1/execute', { body: { db: 'concert', sql: 'SELECT 1' } });
  assert.deepEqual([after.status, after.body.ok], [200, true], after.text);
});

test('an episode whose step is abandoned mid-statement is ended', { timeout: 20_000 }, async () => {
  const s = await serve(['--jobs', '1']);
  const ep = await call(s, '/v1/episodes', { body: { protocol: 'skyrl', db: 'concert', question: 'q' } });
  await call(s, `/v1/episodes/${ep.body.id}/step`, {
    body: { action: `<think>t</think>\n<sql>${RUNAWAY}</sql>` },
    sent: (destroy) => void busy(s).then(destroy),
  });
  while ((await health(s)).inFlight > 0) await new Promise((r) => setTimeout(r, 20));
  assert.equal((await call(s, `/v1/episodes/${ep.body.id}`)).status, 404);
});

const odt = { pred: 'SELECT 1', gold: 'SELECT 1' };

test('a body not declared application/json is refused (415), as a cross-site form or simple fetch sends', async () => {
  const s = await plain;
  const text = await call(s, '/v1/odt', { body: odt, headers: { 'content-type': 'text/plain' } });
  assert.deepEqual([text.status, text.body.error.kind], [415, 'unsupported-media-type']);
  const form = await call(s, '/v1/execute', {
    raw: JSON.stringify({ db: 'concert', sql: 'SELECT name FROM singer' }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: `http://127.0.0.1:${s.port}` },
  });
  assert.equal(form.status, 415);
  const none = await call(s, '/v1/odt', { body: odt, headers: { 'content-type': '' } });
  assert.equal(none.status, 415);
});

test('a foreign Host is refused (421), health included: DNS rebinding reaches nothing', async () => {
  const s = await plain;
  for (const host of [
    'evil.example',
    `evil.example:${s.port}`,
    `127.0.0.1:${s.port + 1}`,
    `rebind.127.0.0.1.nip.io:${s.port}`,
  ]) {
    const r = await call(s, '/v1/execute', { body: { db: 'concert', sql: 'SELECT 1' }, headers: { host } });
    assert.equal(r.status, 421, host);
    assert.equal((await call(s, '/v1/health', { headers: { host } })).status, 421, `health by ${host}`);
  }
  for (const host of [`localhost:${s.port}`, `127.0.0.1:${s.port}`, `[::1]:${s.port}`])
    assert.equal((await call(s, '/v1/odt', { body: odt, headers: { host } })).status, 200, host);
  const named = await serve(['--allow-host', 'quarry.internal', '--allow-host', 'localhost:9000']);
  for (const host of ['quarry.internal:1234', 'localhost:9000'])
    assert.equal((await call(named, '/v1/odt', { body: odt, headers: { host } })).status, 200, host);
  assert.equal((await call(named, '/v1/odt', { body: odt, headers: { host: 'localhost:9001' } })).status, 421);
});

test("a foreign Origin is refused (403); the server's own is answered", async () => {
  const s = await plain;
  for (const origin of [
    'http://evil.example',
    `http://evil.example:${s.port}`,
    'null',
    `https://127.0.0.1:${s.port}`,
  ]) {
    const r = await call(s, '/v1/odt', { body: odt, headers: { origin } });
    assert.deepEqual([r.status, r.body?.error?.kind], [403, 'forbidden'], origin);
  }
  const same = await call(s, '/v1/odt', { body: odt, headers: { origin: `http://localhost:${s.port}` } });
  assert.equal(same.status, 200);
});

test('off loopback with a token, any Host is answered (cluster workers); the token and Origin rules hold', async () => {
  const tokenFile = join(root, 'token');
  writeFileSync(tokenFile, 's3cret\n');
  const s = await serve(['--host', '0.0.0.0', '--token-file', tokenFile]);
  const auth = { authorization: 'Bearer s3cret' };
  const host = `node12.cluster:${s.port}`;
  assert.equal((await call(s, '/v1/odt', { body: odt, headers: { ...auth, host } })).status, 200);
  assert.equal((await call(s, '/v1/odt', { body: odt, headers: { host } })).status, 401);
  const foreign = await call(s, '/v1/odt', { body: odt, headers: { ...auth, host, origin: 'http://evil.example' } });
  assert.equal(foreign.status, 403);
  assert.equal(
    (await call(s, '/v1/odt', { body: odt, headers: { ...auth, 'content-type': 'text/plain' } })).status,
    415,
  );
});

test('a malformed %-escape in an episode id is a 400, on every episode route', async () => {
  const s = await plain;
  for (const [method, path, body] of [
    ['GET', '/v1/episodes/%E0%A4%A', undefined],
    ['DELETE', '/v1/episodes/%E0%A4%A', undefined],
    ['POST', '/v1/episodes/%E0%A4%A/step', { action: 'x' }],
    ['GET', '/v1/episodes/%', undefined],
  ] as const) {
    const r = await call(s, path, { method, body });
    assert.deepEqual([r.status, r.body.error.kind], [400, 'bad-request'], `${method} ${path}`);
  }
  assert.equal((await health(s)).ok, true);
});

test("no answer names the server's absolute paths; db names leaving the roots are refused alike", async () => {
  const s = await withPanels;
  const requests: Array<[string, Call]> = [
    ['/v1/execute', { body: { db: '/etc/passwd', sql: 'SELECT 1' } }],
    ['/v1/execute', { body: { db: join(root, 'no.sqlite'), sql: 'SELECT 1' } }],
    ['/v1/execute', { body: { db: '../secret.json', sql: 'SELECT 1' } }],
    ['/v1/execute', { body: { db: '../no-such.sqlite', sql: 'SELECT 1' } }],
    ['/v1/execute', { body: { db: 'nope', sql: 'SELECT 1' } }],
    ['/v1/execute', { body: { db: 'folder.sqlite', sql: 'SELECT 1' } }],
    ['/v1/execute', { body: { db: 'junk', sql: 'SELECT 1' } }],
    ['/v1/execute', { body: { db: 'concert', sql: 'SELECT * FROM no_table_here' } }],
    ['/v1/odt', { body: { pred: 'SELECT 1', gold: 'SELECT 1', db: 'junk' } }],
    ['/v1/episodes', { body: { protocol: 'skyrl', db: 'junk', question: 'q' } }],
    ['/v1/reward', { body: { panel: 'skyrl', db: 'junk', goldSql: GOLD, predSql: GOLD } }],
    ['/v1/reward', { body: reward('broken.json') }],
    ['/v1/reward', { body: reward('nope.json') }],
    ['/v1/reward', { body: reward('link.json') }],
    ['/v1/reward', { body: { ...reward('skyrl'), trajectory: { schema: 'x' } } }],
    ['/v1/nothing', { body: {} }],
  ];
  const refusals = new Map<string, string>();
  for (const [path, c] of requests) {
    const r = await call(s, path, c);
    for (const p of [root, dbDir, panelDir, '/tmp/', realpathSync(tmpdir())])
      assert.ok(!r.text.includes(p), `${path} ${JSON.stringify(c.body)} names ${p}: ${r.text}`);
    const db = (c.body as { db?: string }).db;
    if (db?.startsWith('/') || db?.startsWith('..')) refusals.set(db, `${r.status} ${r.body.error.kind}`);
  }
  assert.equal(new Set(refusals.values()).size, 1, [...refusals.values()].join('\n'));
  const ep = await call(s, '/v1/episodes', { body: { protocol: 'skyrl', db: 'concert', question: 'q' } });
  const record = await call(s, `/v1/episodes/${ep.body.id}`);
  assert.equal(record.body.task.db.path, join('concert', 'concert.sqlite'), 'the record names its db by its root');
});
